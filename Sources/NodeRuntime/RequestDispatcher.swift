import Foundation
import Logging
import Metrics
import ShowroomWire
import SwiftProtobuf
import ZeroMQ

/// The handlers a node registered, shared by its two faces.
final class RequestHandlers {
    var handlers: [WireMessageKind: Node.RequestHandler] = [:]
    var oneWayHandlers: [WireMessageKind: Node.OneWayHandler] = [:]
    var deferredHandlers: [WireMessageKind: Node.DeferredHandler] = [:]
}

/// Which face of a node a request arrives on: the cluster socket (every kind; with a keyring only
/// authenticated members reach it) or the client socket (the client kinds only).
public enum RequestFace: String, Sendable {
    case cluster, client
}

/// Decodes the messages arriving on one of the node's ROUTER sockets and hands them to their
/// handlers: requests are answered, one-way messages (request id 0) are not. Malformed messages,
/// unknown kinds and newer protocol versions get a clear error answer instead of silence.
///
/// A node has two faces: its cluster socket (every kind; with a keyring only authenticated members
/// reach it) and its client socket, which serves only the client kinds
/// (``WireMessageKind/isClientKind``) and refuses the internal ones with `PERMISSION_DENIED`.
/// REQ peers are served too: their empty delimiter frame is stripped and put back on the answer.
/// Lives on the node's loop.
final class RequestDispatcher {
    typealias Face = RequestFace

    let socket: Socket
    let nodeID: String
    let logger: Logger
    let face: Face
    let table: RequestHandlers
    /// Handlers that answer differently on this face (the client face's cluster status).
    var overrides: [WireMessageKind: Node.RequestHandler] = [:]
    /// Called with each readable message's kind and size, for traffic accounting.
    var onReceive: (WireMessageKind, Int) -> Void = { _, _ in }
    /// Internal kinds refused on the client face.
    private(set) var refusedInternal: UInt64 = 0
    private var refusedCounters: [WireMessageKind: Counter] = [:]
    private let frames = Multipart(capacity: 4)

    init(socket: Socket, nodeID: String, face: Face = .cluster, table: RequestHandlers = RequestHandlers(), logger: Logger) {
        self.socket = socket
        self.nodeID = nodeID
        self.face = face
        self.table = table
        self.logger = logger
    }

    /// Handles the waiting messages, at most 256 per wake-up so timers and other sockets get a turn.
    func drain() {
        for _ in 0..<256 {
            do {
                guard try socket.receive(into: frames) else { return }
            } catch {
                logger.warning("receive failed", metadata: ["error": "\(error)"])
                return
            }
            handleOne()
        }
    }

    private func handleOne() {
        let peer = frames.bytes(of: 0)
        // A REQ peer puts an empty delimiter before its envelope and wants it back on the answer.
        let delimited = frames.count >= 3 && frames.size(of: 1) == 0
        let first = delimited ? 2 : 1
        let reply = { [weak self] (envelope: WireEnvelope) -> Void in self?.reply(to: peer, delimited: delimited, envelope) }
        guard frames.count > first else {
            reply(WireEnvelope(responseTo: WireEnvelope(), error: .malformed(
                "a message needs an envelope frame after the routing id"), senderNode: nodeID))
            return
        }
        let request: WireEnvelope
        do {
            request = try frames.withBytes(of: first) { (bytes) throws(ShowroomError) in
                try WireEnvelope.decode(frame: bytes)
            }
        } catch {
            logger.debug("malformed message", metadata: ["error": "\(error)"])
            reply(WireEnvelope(responseTo: WireEnvelope(), error: error, senderNode: nodeID))
            return
        }
        onReceive(request.kind, frames.size(of: first))
        if request.isResponse { return }  // answers belong on the links, not here
        serve(request, frames: frames, attachments: frames.count - first - 1, reply: reply)
    }

    /// Serves one decoded request as this face does: the version and face checks, then its
    /// handler. `attachments` counts the frames after the envelope; `reply` gets the answer
    /// (none for a one-way message). Shared by the socket and by requests made in this process
    /// (``Node/serve(_:face:)``), so an in-process face answers exactly as the socket does.
    func serve(_ request: WireEnvelope, frames: Multipart, attachments: Int, reply: @escaping (WireEnvelope) -> Void) {
        let answer = { (response: WireEnvelope) in if request.requestID != 0 { reply(response) } }
        if request.protocolVersion > WireEnvelope.currentProtocolVersion {
            answer(WireEnvelope(responseTo: request, error: .unsupportedVersion(
                "protocol version \(request.protocolVersion) is newer than this node's \(WireEnvelope.currentProtocolVersion); upgrade node \(nodeID)"),
                senderNode: nodeID))
            return
        }
        if face == .client, !request.kind.isClientKind {
            refuseInternal(request.kind)
            answer(WireEnvelope(responseTo: request, error: .permissionDenied(
                "\(request.kind) is internal to the cluster and is not served on a client endpoint; only authenticated cluster members send it, on cluster endpoints"),
                senderNode: nodeID))
            return
        }
        // Node-level kinds define no attachments: more frames than the envelope are malformed.
        if attachments > 0 {
            answer(WireEnvelope(responseTo: request, error: .malformed(
                "\(request.kind) is one frame (the envelope) after the routing id; got \(attachments + 1)"),
                senderNode: nodeID))
            return
        }
        if request.requestID == 0, face == .cluster, let handler = table.oneWayHandlers[request.kind] {
            handler(request, frames)
            return
        }
        if overrides[request.kind] == nil, let handler = table.deferredHandlers[request.kind] {
            let oneWay = request.requestID == 0
            handler(request, frames, Node.Responder { [weak self] outcome in
                guard let self, !oneWay else { return }
                reply(Node.Responder.response(to: request, outcome, senderNode: self.nodeID))
            })
            return
        }
        guard let handler = overrides[request.kind] ?? table.handlers[request.kind] else {
            answer(WireEnvelope(responseTo: request, error: .unknownKind(
                "node \(nodeID) does not handle \(request.kind) messages"), senderNode: nodeID))
            return
        }
        let response: WireEnvelope
        do {
            let body = try handler(request, frames)
            response = try WireEnvelope(responseTo: request, body: body, senderNode: nodeID)
        } catch let error as ShowroomError {
            response = WireEnvelope(responseTo: request, error: error, senderNode: nodeID)
        } catch {
            logger.error("\(request.kind) handler failed", metadata: ["error": "\(error)"])
            response = WireEnvelope(responseTo: request, error: .internal("node \(nodeID) failed to answer \(request.kind): \(error)"), senderNode: nodeID)
        }
        answer(response)
    }

    private func refuseInternal(_ kind: WireMessageKind) {
        refusedInternal += 1
        let counter = refusedCounters[kind] ?? Counter(label: "client.internal_kinds_refused", dimensions: [("kind", "\(kind)")])
        refusedCounters[kind] = counter
        counter.increment()
        logger.debug("internal kind refused on the client endpoint", metadata: ["kind": "\(kind)"])
    }

    private func reply(to peer: [UInt8], delimited: Bool, _ envelope: WireEnvelope) {
        do {
            let bytes: [UInt8] = try envelope.serializedBytes()
            let outcome = try socket.send(frames: delimited ? [peer, [], bytes] : [peer, bytes])
            if outcome != .sent {
                logger.debug("reply not sent", metadata: ["outcome": "\(outcome)"])
            }
        } catch {
            logger.warning("reply failed", metadata: ["error": "\(error)"])
        }
    }
}
