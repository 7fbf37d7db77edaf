import Foundation
import Logging
import ShowroomWire
import SwiftProtobuf
import ZeroMQ

/// A running server process's core: its event loop and its cluster socket, answering requests
/// from other members and from tools.
///
/// Requests arrive on a ROUTER socket as `[routing id][Envelope][attachments...]`. The node
/// decodes the envelope, dispatches on its kind to a registered handler, and answers with a
/// response envelope; malformed messages, unknown kinds and newer protocol versions get a clear
/// error response instead of being dropped. Everything runs on the node's event loop thread.
public final class Node: Sendable {
    /// The configuration the node runs with.
    public let configuration: NodeConfiguration
    /// The node's event loop; handlers and timers run on it.
    public let loop: EventLoop
    /// The endpoint other processes reach this node on.
    public let endpoint: String
    /// When the node started.
    public let startedAt: ContinuousClock.Instant
    private let logger: Logger
    private let dispatcher: LoopBound<RequestDispatcher>

    /// Handles a request's envelope on the loop and returns the response body, or throws the
    /// error to answer with.
    public typealias RequestHandler = (_ request: WireEnvelope, _ attachments: Multipart) throws(ShowroomError) -> any SwiftProtobuf.Message

    /// Starts the node: creates its loop and binds its cluster socket.
    public init(configuration: NodeConfiguration, logger: Logger) throws {
        try ZeroMQLibrary.requireSupported()
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        self.startedAt = .now
        let context = try Context(ioThreads: configuration.ioThreads)
        let loop = try EventLoop.start(name: "node-\(configuration.nodeID)", context: context)
        self.loop = loop
        do {
            let (bound, dispatcher) = try loop.submitAndWait { () throws -> (String, LoopBound<RequestDispatcher>) in
                let socket = try Socket(.router, context: context)
                try socket.set(.routerMandatory, 1)
                try socket.set(.routerHandover, 1)
                try socket.setHighWaterMarks(send: configuration.highWaterMark, receive: configuration.highWaterMark)
                try socket.setMaxMessageSize(Int64(configuration.maxMessageBytes))
                try socket.setHeartbeat(intervalMs: 1000, timeoutMs: 5000, ttlMs: 10000)
                let bound = try socket.bind(configuration.bind)
                let dispatcher = RequestDispatcher(socket: socket, nodeID: configuration.nodeID, logger: logger)
                loop.register(socket) { _, _ in dispatcher.drain() }
                return (bound, LoopBound(dispatcher, loop: loop))
            }
            self.endpoint = Self.advertised(bound, host: configuration.advertiseHost)
            self.dispatcher = dispatcher
        } catch {
            loop.shutdown()
            throw error
        }
        try loop.submitAndWait { [dispatcher, endpoint, startedAt] in
            dispatcher.value.handlers[.nodeInfo] = Self.nodeInfoHandler(configuration, endpoint, startedAt)
        }
        logger.info("node started", metadata: ["endpoint": "\(endpoint)", "role": "\(configuration.role)"])
    }

    /// Registers `handler` for requests of `kind`, replacing any earlier one. Loop thread only.
    public func handle(_ kind: WireMessageKind, _ handler: @escaping RequestHandler) {
        dispatcher.value.handlers[kind] = handler
    }

    /// Stops the node: closes its socket and ends its loop, without blocking the caller's thread
    /// (safe from async code).
    public func stop() async {
        let loop = self.loop
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                loop.shutdown()
                continuation.resume()
            }
            thread.start()
        }
        logger.info("node stopped")
    }

    private static func nodeInfoHandler(
        _ configuration: NodeConfiguration, _ endpoint: String, _ startedAt: ContinuousClock.Instant
    ) -> RequestHandler {
        return { (_, _) throws(ShowroomError) in
            var info = WireNodeInfo()
            info.nodeID = configuration.nodeID
            info.role = configuration.role.wire
            info.version = ShowroomVersion.current
            info.clusterEndpoint = endpoint
            let uptime = startedAt.duration(to: .now).components
            info.uptimeMs = UInt64(uptime.seconds) * 1000 + UInt64(uptime.attoseconds / 1_000_000_000_000_000)
            info.pid = UInt32(ProcessInfo.processInfo.processIdentifier)
            return info
        }
    }

    /// The endpoint to advertise for a bound endpoint: the bound port with `host` if given.
    static func advertised(_ bound: String, host: String?) -> String {
        guard let host, let colon = bound.lastIndex(of: ":") else { return bound }
        return "tcp://\(host)\(bound[colon...])"
    }
}

/// Decodes requests arriving on the node's ROUTER and answers them. Lives on the loop thread.
final class RequestDispatcher {
    let socket: Socket
    let nodeID: String
    let logger: Logger
    var handlers: [WireMessageKind: Node.RequestHandler] = [:]
    private let frames = Multipart(capacity: 4)

    init(socket: Socket, nodeID: String, logger: Logger) {
        self.socket = socket
        self.nodeID = nodeID
        self.logger = logger
    }

    /// Handles every waiting message (bounded per wake-up so timers and other sockets get a turn).
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
            reply(to: peer, WireEnvelope(malformed: "a message needs an envelope frame after the routing id", from: nodeID))
            return
        }
        let request: WireEnvelope
        do {
            request = try frames.withBytes(of: 1) { (bytes) throws(ShowroomError) in
                try WireEnvelope.decode(frame: Data(bytes))
            }
        } catch {
            logger.debug("malformed request", metadata: ["error": "\(error)"])
            reply(to: peer, WireEnvelope(responseTo: WireEnvelope(), error: error, senderNode: nodeID))
            return
        }
        if request.isResponse { return }  // answers to requests this node did not send on this socket
        let response: WireEnvelope
        if request.protocolVersion > WireEnvelope.currentProtocolVersion {
            response = WireEnvelope(responseTo: request, error: .unsupportedVersion(
                "protocol version \(request.protocolVersion) is newer than this node's \(WireEnvelope.currentProtocolVersion); upgrade node \(nodeID)"),
                senderNode: nodeID)
        } else if let handler = handlers[request.kind] {
            do {
                let body = try handler(request, frames)
                response = try WireEnvelope(responseTo: request, body: body, senderNode: nodeID)
            } catch {
                response = WireEnvelope(responseTo: request, error: error, senderNode: nodeID)
            }
        } else {
            response = WireEnvelope(responseTo: request, error: .unknownKind(
                "node \(nodeID) does not handle \(request.kind) messages"), senderNode: nodeID)
        }
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

extension WireEnvelope {
    /// An error answer to a message whose envelope could not be read.
    init(malformed message: String, from node: String) {
        self.init(responseTo: WireEnvelope(), error: .malformed(message), senderNode: node)
    }
}
