import Foundation
import Logging
import ShowroomWire
import SwiftProtobuf
import ZeroMQ

/// Decodes the messages arriving on the node's cluster socket (a ROUTER) and hands them to their
/// handlers: requests are answered, one-way messages (request id 0) are not. Malformed messages,
/// unknown kinds and newer protocol versions get a clear error answer instead of silence.
/// Lives on the node's loop.
final class RequestDispatcher {
    let socket: Socket
    let nodeID: String
    let logger: Logger
    var handlers: [WireMessageKind: Node.RequestHandler] = [:]
    var oneWayHandlers: [WireMessageKind: Node.OneWayHandler] = [:]
    var deferredHandlers: [WireMessageKind: Node.DeferredHandler] = [:]
    /// Called with each readable message's kind and size, for traffic accounting.
    var onReceive: (WireMessageKind, Int) -> Void = { _, _ in }
    private let frames = Multipart(capacity: 4)

    init(socket: Socket, nodeID: String, logger: Logger) {
        self.socket = socket
        self.nodeID = nodeID
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
        guard frames.count >= 2 else {
            reply(to: peer, WireEnvelope(responseTo: WireEnvelope(), error: .malformed(
                "a message needs an envelope frame after the routing id"), senderNode: nodeID))
            return
        }
        let request: WireEnvelope
        do {
            request = try frames.withBytes(of: 1) { (bytes) throws(ShowroomError) in
                try WireEnvelope.decode(frame: bytes)
            }
        } catch {
            logger.debug("malformed message", metadata: ["error": "\(error)"])
            reply(to: peer, WireEnvelope(responseTo: WireEnvelope(), error: error, senderNode: nodeID))
            return
        }
        onReceive(request.kind, frames.size(of: 1))
        if request.isResponse { return }  // answers belong on the links, not here
        if request.protocolVersion > WireEnvelope.currentProtocolVersion {
            answer(request, peer: peer, with: WireEnvelope(responseTo: request, error: .unsupportedVersion(
                "protocol version \(request.protocolVersion) is newer than this node's \(WireEnvelope.currentProtocolVersion); upgrade node \(nodeID)"),
                senderNode: nodeID))
            return
        }
        if request.requestID == 0, let handler = oneWayHandlers[request.kind] {
            handler(request, frames)
            return
        }
        if let handler = deferredHandlers[request.kind] {
            let oneWay = request.requestID == 0
            handler(request, frames, Node.Responder { [weak self] outcome in
                guard let self, !oneWay else { return }
                let response: WireEnvelope
                switch outcome {
                case .success(let body):
                    do {
                        response = try WireEnvelope(responseTo: request, body: body, senderNode: self.nodeID)
                    } catch {
                        response = WireEnvelope(responseTo: request, error: .internal("cannot encode the answer to \(request.kind): \(error)"), senderNode: self.nodeID)
                    }
                case .failure(let error):
                    response = WireEnvelope(responseTo: request, error: error, senderNode: self.nodeID)
                case .relayed(let answer):
                    var relayed = answer
                    relayed.requestID = request.requestID
                    relayed.kind = request.kind
                    relayed.isResponse = true
                    response = relayed
                }
                self.reply(to: peer, response)
            })
            return
        }
        guard let handler = handlers[request.kind] else {
            answer(request, peer: peer, with: WireEnvelope(responseTo: request, error: .unknownKind(
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
        answer(request, peer: peer, with: response)
    }

    /// Sends `response` unless `request` was one-way.
    private func answer(_ request: WireEnvelope, peer: [UInt8], with response: WireEnvelope) {
        if request.requestID != 0 { reply(to: peer, response) }
    }

    private func reply(to peer: [UInt8], _ envelope: WireEnvelope) {
        do {
            let bytes: [UInt8] = try envelope.serializedBytes()
            let outcome = try socket.send(frames: [peer, bytes])
            if outcome != .sent {
                logger.debug("reply not sent", metadata: ["outcome": "\(outcome)"])
            }
        } catch {
            logger.warning("reply failed", metadata: ["error": "\(error)"])
        }
    }
}
