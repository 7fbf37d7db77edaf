import Foundation
import Synchronization
import Logging
import Metrics
import Membership
import ShowroomWire
import SwiftProtobuf
import ZeroMQ

/// A running server process's core: its event loop, its cluster socket, its links to the other
/// members and its view of the membership.
///
/// Requests arrive on a ROUTER socket as `[routing id][Envelope][attachments...]` and are
/// dispatched on their kind to registered handlers; gossip arrives the same way as one-way
/// messages. Everything runs on the node's event loop thread; this type is the thread-safe
/// facade over it.
public final class Node: Sendable {
    /// The configuration the node runs with.
    public let configuration: NodeConfiguration
    /// The node's event loop; handlers and timers run on it.
    public let loop: EventLoop
    /// The endpoint other members reach this node on (its cluster face).
    public let endpoint: String
    /// Where clients reach this node: its own client face (coordinators, call-signal nodes), or
    /// the client endpoint its role serves (edges).
    public let clientEndpoint: String
    /// When the node started.
    public let startedAt: ContinuousClock.Instant
    private let logger: Logger
    private let core: LoopBound<NodeCore>
    private let browsers = Mutex<NodeWebSocketFace?>(nil)

    /// Answers a request on the loop: returns the response body, or throws the error to answer with
    /// (a ``ShowroomError``; anything else is answered as an internal error).
    public typealias RequestHandler = (_ request: WireEnvelope, _ frames: Multipart) throws -> any SwiftProtobuf.Message
    /// Handles a one-way message (request id 0) on the loop.
    public typealias OneWayHandler = (_ message: WireEnvelope, _ frames: Multipart) -> Void

    /// Answers a request on the loop, now or later, through its responder (exactly once). For
    /// requests a member passes on to another (a room's owner) and answers when that one has.
    public typealias DeferredHandler = (_ request: WireEnvelope, _ frames: Multipart, _ respond: Responder) -> Void

    /// The answer to a request handled by a ``DeferredHandler``; call it once, on the loop.
    public struct Responder {
        /// What the answer is.
        public enum Outcome {
            /// A response body.
            case success(any SwiftProtobuf.Message)
            /// An error answer.
            case failure(ShowroomError)
            /// Another member's answer, passed back as it came (body or error).
            case relayed(WireEnvelope)
        }
        let send: (Outcome) -> Void
        /// A responder that hands the outcome to `send`.
        public init(_ send: @escaping (Outcome) -> Void) { self.send = send }
        /// Answers with `outcome`. Does nothing for a one-way request.
        public func callAsFunction(_ outcome: Outcome) { send(outcome) }

        /// The response envelope `outcome` makes for `request`, sent by `senderNode`.
        public static func response(to request: WireEnvelope, _ outcome: Outcome, senderNode: String) -> WireEnvelope {
            switch outcome {
            case .success(let body):
                do throws(ShowroomError) {
                    return try WireEnvelope(responseTo: request, body: body, senderNode: senderNode)
                } catch {
                    return WireEnvelope(responseTo: request, error: .internal(
                        "cannot encode the answer to \(request.kind): \(error.message)"), senderNode: senderNode)
                }
            case .failure(let error):
                return WireEnvelope(responseTo: request, error: error, senderNode: senderNode)
            case .relayed(let answer):
                var relayed = answer
                relayed.requestID = request.requestID
                relayed.kind = request.kind
                relayed.isResponse = true
                return relayed
            }
        }

        /// Runs `read` (decoding and checking a request): returns what it read, or answers its
        /// failure at once — a ``ShowroomError`` as it is, anything else as internal — and
        /// returns nil.
        public func answering<T>(_ read: () throws -> T) -> T? {
            do {
                return try read()
            } catch let error as ShowroomError {
                send(.failure(error))
            } catch {
                send(.failure(.internal("\(error)")))
            }
            return nil
        }
    }

    /// Starts the node: creates its loop and binds its cluster socket. Call ``join()`` to enter
    /// the cluster.
    /// - Parameters:
    ///   - clientEndpoint: where clients connect to this member (edges), announced to the others.
    ///   - eventsEndpoint: where this member publishes notices (coordinators), announced to the others.
    ///   - adminEndpoint: this member's admin HTTP address, announced to the others.
    ///   - clientCurvePublicKey: the client endpoint's CURVE key when the role encrypts client links.
    ///   - webSocketEndpoint: where browsers reach this member (`ws://…`), announced to the others.
    ///   - keyring: the cluster's keys; default: read from ``NodeConfiguration/keyring`` (nil there:
    ///     plain cluster links).
    ///   - events: where membership events are written as lines.
    ///
    /// A node whose role serves no client endpoint of its own (``clientEndpoint`` empty: a
    /// coordinator or call-signal node) binds its client face at ``NodeConfiguration/clientBind``.
    public init(configuration: NodeConfiguration, clientEndpoint: String = "", eventsEndpoint: String = "",
                adminEndpoint: String = "", clientCurvePublicKey: String = "", webSocketEndpoint: String = "", keyring: ClusterKeyring? = nil,
                logger: Logger, events: NodeEvents = .standardOutput) throws {
        try ZeroMQLibrary.requireSupported()
        try configuration.validate()
        let keyring = try keyring ?? configuration.keyring.map { path throws(ShowroomError) in
            try ClusterKeyring.load(directory: path, id: configuration.nodeID)
        }
        self.configuration = configuration
        self.logger = logger
        self.startedAt = .now
        let context = try Context(ioThreads: configuration.ioThreads)
        let loop = try EventLoop.start(name: "node-\(configuration.nodeID)", context: context)
        self.loop = loop
        do {
            let (endpoint, client, core) = try loop.submitAndWait { () throws -> (String, String, LoopBound<NodeCore>) in
                var metadata = MemberMetadata(
                    role: configuration.role.rawValue, clusterEndpoint: "", clientEndpoint: clientEndpoint,
                    adminEndpoint: adminEndpoint, version: ShowroomVersion.current, eventsEndpoint: eventsEndpoint)
                metadata.clientCurvePublicKey = clientCurvePublicKey
                metadata.webSocketEndpoint = webSocketEndpoint
                let core = try NodeCore(configuration: configuration, metadata: metadata, keyring: keyring, loop: loop,
                                        logger: logger, events: events)
                return (core.endpoint, core.clientEndpoint, LoopBound(core, loop: loop))
            }
            self.endpoint = endpoint
            self.clientEndpoint = client
            self.core = core
        } catch {
            loop.shutdown()
            throw error
        }
        logger.info("node started", metadata: [
            "endpoint": "\(endpoint)", "client": "\(self.clientEndpoint)", "role": "\(configuration.role)",
            "cluster_links": "\(keyring == nil ? "plain" : "curve")"])
    }

    /// Joins the cluster through the configured seeds (or starts a new one without seeds).
    public func join() {
        let seeds = configuration.seeds
        loop.execute { [core] in core.value.membership.join(seeds: seeds) }
    }

    /// Registers `handler` for requests of `kind`, replacing any earlier one. Loop thread only.
    public func handle(_ kind: WireMessageKind, _ handler: @escaping RequestHandler) {
        core.value.handlers.handlers[kind] = handler
    }

    /// Registers `handler` for requests of `kind` that may be answered later. Loop thread only.
    public func handleDeferred(_ kind: WireMessageKind, _ handler: @escaping DeferredHandler) {
        core.value.handlers.deferredHandlers[kind] = handler
    }

    /// Passes `request` on to the member at `endpoint` (marked forwarded, so that member serves it
    /// itself) and calls `completion` on the loop with its answer envelope, or with
    /// `deadlineExceeded` / `unavailable`. Loop thread only.
    public func forward(_ request: WireEnvelope, to endpoint: String, timeout: Duration,
                        completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        var passed = request
        passed.forwarded = true
        core.value.links.request(passed, to: endpoint, timeout: timeout, completion: completion)
    }

    /// Whether the connection to the member at `endpoint` broke and is not up again (loop
    /// thread only).
    public func connectionBroken(to endpoint: String) -> Bool { core.value.links.isBroken(endpoint) }

    /// Sends a request to the member at `endpoint` and calls `completion` on the loop with its
    /// answer envelope (which may carry an error). Loop thread only.
    public func send(_ kind: WireMessageKind, body: some SwiftProtobuf.Message, to endpoint: String,
                     timeout: Duration, completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        core.value.links.request(kind, body: body, to: endpoint, timeout: timeout, completion: completion)
    }

    /// The members this node knows, itself included. Loop thread only.
    public var membersOnLoop: [Member] { core.value.membership.membership.members }

    /// Changes whenever a member's state or metadata changes or a member appears. Loop thread
    /// only.
    public var membershipGeneration: UInt64 { core.value.membership.generation }

    /// Calls `observer` on the loop whenever a member's state changes (alive, suspect, dead, left)
    /// or a new member appears. Loop thread only.
    public func onMembershipChange(_ observer: @escaping () -> Void) {
        core.value.membership.observers.append(observer)
    }

    /// Registers `handler` for one-way messages of `kind`. Loop thread only.
    public func handleOneWay(_ kind: WireMessageKind, _ handler: @escaping OneWayHandler) {
        core.value.handlers.oneWayHandlers[kind] = handler
    }

    /// Sends a request to the member at `endpoint` and awaits its answer.
    /// - Throws: ``ShowroomError``: the member's error answer, `deadlineExceeded` after `timeout`,
    ///   `unavailable` when the member cannot be reached.
    public func request<Response: SwiftProtobuf.Message>(
        _ kind: WireMessageKind, body: some SwiftProtobuf.Message & Sendable, to endpoint: String,
        expecting: Response.Type, timeout: Duration = .seconds(3)
    ) async throws(ShowroomError) -> Response {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<WireEnvelope, ShowroomError>, Never>) in
            loop.execute { [core] in
                core.value.links.request(kind, body: body, to: endpoint, timeout: timeout) { continuation.resume(returning: $0) }
            }
        }
        let envelope = try result.get()
        if let failure = envelope.failure { throw failure }
        return try envelope.decodeBody(Response.self)
    }

    /// Serves `request` in this process exactly as the node's `face` serves one arriving on its
    /// socket: the same checks and handlers, passing it to the owner of what it names as a
    /// request on the socket is (a face the node lacks answers `unavailable`). For faces in this
    /// process that speak another protocol (the server API's HTTP); any thread.
    /// - Returns: The answer envelope (an error answer included).
    public func serve(_ request: WireEnvelope, face: RequestFace) async -> WireEnvelope {
        let nodeID = configuration.nodeID
        // A one-way message is never answered: there would be nothing to return.
        guard request.requestID != 0 else {
            return WireEnvelope(responseTo: request, error: .malformed("a request served in process needs a request id"), senderNode: nodeID)
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<WireEnvelope, Never>) in
            loop.execute { [core] in
                let core = core.value
                guard let dispatcher = face == .client ? core.clientDispatcher : core.dispatcher else {
                    continuation.resume(returning: WireEnvelope(responseTo: request, error: .unavailable(
                        "node \(nodeID) has no \(face) face"), senderNode: nodeID))
                    return
                }
                dispatcher.serve(request, frames: Multipart(capacity: 1), attachments: 0) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Serves browsers through `face` too: ``publishToBrowsers(topic:envelope:)`` reaches them.
    public func serveBrowsers(_ face: NodeWebSocketFace) { browsers.withLock { $0 = face } }

    /// Publishes a notice (a serialized envelope) under `topic` to the browsers subscribed to it,
    /// if this node serves browsers. Any thread.
    public func publishToBrowsers(topic: String, envelope: [UInt8]) {
        browsers.withLock { $0 }?.publish(topic: topic, envelope: envelope)
    }

    /// Reports what this member hosts (an edge: channels and client connections); the others
    /// learn it through gossip when it changed. Any thread.
    public func updateLoad(channels: Int, connections: Int) {
        loop.execute { [core] in core.value.membership.updateLoad(channels: channels, connections: connections) }
    }

    /// The members this node knows, itself included.
    public func members() async throws -> [Member] {
        try await loop.submit { [core] in core.value.membership.membership.members }
    }

    /// What this node's cluster security has seen: cluster-endpoint handshakes admitted and
    /// refused by the keyring (zero without one), gossip packets dropped because their sender was
    /// not the authenticated member, internal kinds refused on the client face.
    public func securityCounters() async throws -> SecurityCounters {
        try await loop.submit { [core] in
            let core = core.value
            return SecurityCounters(
                handshakesAdmitted: core.zap?.admitted ?? 0, handshakesRefused: core.zap?.refused ?? 0,
                gossipRefused: core.membership.refusedPackets,
                internalKindsRefused: core.clientDispatcher?.refusedInternal ?? 0)
        }
    }

    /// See ``securityCounters()``.
    public struct SecurityCounters: Sendable, Equatable {
        public var handshakesAdmitted: Int
        public var handshakesRefused: Int
        public var gossipRefused: UInt64
        public var internalKindsRefused: UInt64
    }

    /// This node's view of the cluster, as the status tool shows it.
    public func clusterStatus() async throws -> AdminClusterStatus {
        try await loop.submit { [core] in core.value.membership.clusterStatus() }
    }

    /// Leaves the cluster gracefully: announces it, gives the announcement time to spread, and
    /// stops the node.
    public func leave() async {
        let propagation = configuration.leavePropagation
        _ = try? await loop.submit { [core] in core.value.membership.leave() }
        // Keep gossiping for a moment so the others hear "left" from us rather than detect a death.
        try? await Task.sleep(for: propagation)
        await stop()
    }

    /// Stops the node: closes its sockets and ends its loop, without blocking the caller's thread.
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
}

/// Where a node reports membership events as machine-readable lines (launchers, benchmarks).
public struct NodeEvents: Sendable {
    let write: @Sendable (String) -> Void

    /// Lines on standard output, next to the `ready` line.
    public static let standardOutput = NodeEvents { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Discards events.
    public static let none = NodeEvents { _ in }

    /// Events passed to `write`.
    public init(write: @escaping @Sendable (String) -> Void) { self.write = write }
}

/// The node's loop-confined parts.
final class NodeCore {
    let endpoint: String
    /// The client face's endpoint, or the role's client endpoint; "" for none.
    let clientEndpoint: String
    let handlers = RequestHandlers()
    let dispatcher: RequestDispatcher
    /// The client face (coordinators, call-signal nodes); nil on edges, whose role serves clients.
    let clientDispatcher: RequestDispatcher?
    let links: PeerLinks
    let membership: MembershipDriver
    /// Admits only keyring members on the cluster socket; nil without a keyring.
    let zap: ZAPHandler?

    init(configuration: NodeConfiguration, metadata: MemberMetadata, keyring: ClusterKeyring?, loop: EventLoop,
         logger: Logger, events: NodeEvents) throws {
        // The authenticator is bound before any socket of the context can accept a handshake.
        let keys = keyring.map { KeyringCache($0, directory: configuration.keyring) }
        let refusals = Counter(label: "cluster.handshakes_refused")
        zap = try keys.map { keys throws(ZeroMQError) in
            try ZAPHandler(loop: loop) { request in
                let user = keys.authorize(request)
                if user == nil {
                    refusals.increment()
                    logger.notice("cluster handshake refused: key not in the keyring", metadata: ["peer": "\(request.address)"])
                }
                return user
            }
        }
        let socket = try Socket(.router, context: loop.context)
        try socket.set(.routerMandatory, 1)
        try socket.set(.routerHandover, 1)
        try socket.setHighWaterMarks(send: configuration.highWaterMark, receive: configuration.highWaterMark)
        try socket.setMaxMessageSize(Int64(configuration.maxMessageBytes))
        try socket.setHeartbeat(intervalMs: 1000, timeoutMs: 5000, ttlMs: 10000)
        try socket.set(.handshakeInterval, Self.handshakeMs)
        if let keyring { try socket.makeCurveServer(keyring.server, zapDomain: ClusterKeyring.clusterDomain) }
        let bound = try socket.bind(configuration.bind)
        endpoint = NodeConfiguration.advertised(bound, host: configuration.advertiseHost)

        dispatcher = RequestDispatcher(socket: socket, nodeID: configuration.nodeID, face: .cluster, table: handlers, logger: logger)
        loop.register(socket) { [dispatcher] _, _ in dispatcher.drain() }
        links = PeerLinks(loop: loop, nodeID: configuration.nodeID, highWaterMark: 128,
                          credentials: keyring.map(ClusterCredentials.init), logger: logger)
        dispatcher.onReceive = { [links] kind, bytes in links.countReceived(kind: kind, bytes: bytes) }

        var local = metadata
        local.clusterEndpoint = endpoint
        if metadata.clientEndpoint.isEmpty, configuration.role != .edge {
            let client = try Socket(.router, context: loop.context)
            try client.set(.routerMandatory, 1)
            try client.setHighWaterMarks(send: configuration.highWaterMark, receive: configuration.highWaterMark)
            try client.setMaxMessageSize(Int64(Self.maxClientMessageBytes))
            try client.setHeartbeat(intervalMs: 1000, timeoutMs: 5000, ttlMs: 10000)
            try client.set(.handshakeInterval, Self.handshakeMs)
            let clientBound = try client.bind(configuration.clientBind)
            local.clientEndpoint = NodeConfiguration.advertised(clientBound, host: configuration.advertiseHost)
            let face = RequestDispatcher(socket: client, nodeID: configuration.nodeID, face: .client, table: handlers, logger: logger)
            loop.register(client) { [face] _, _ in face.drain() }
            clientDispatcher = face
        } else {
            clientDispatcher = nil
        }
        clientEndpoint = local.clientEndpoint
        membership = MembershipDriver(
            id: MemberID(configuration.nodeID), metadata: local, settings: configuration.membershipSettings,
            loop: loop, links: links, keyring: keys, logger: logger, events: events)

        let startedAt = ContinuousClock.now
        let nodeInfo = { [endpoint] () -> WireNodeInfo in
            var info = WireNodeInfo()
            info.nodeID = configuration.nodeID
            info.role = configuration.role.wire
            info.version = ShowroomVersion.current
            info.clusterEndpoint = endpoint
            info.uptimeMs = startedAt.duration(to: .now).milliseconds
            info.pid = UInt32(ProcessInfo.processInfo.processIdentifier)
            return info
        }
        handlers.handlers[.nodeInfo] = { _, _ in nodeInfo() }
        handlers.handlers[.clusterStatus] = { [membership] _, _ in
            membership.clusterStatus()
        }
        // Clients learn who answers, not where members reach it or which process it is.
        clientDispatcher?.overrides[.nodeInfo] = { _, _ in
            var info = nodeInfo()
            info.clusterEndpoint = ""
            info.pid = 0
            return info
        }
        clientDispatcher?.overrides[.clusterStatus] = { [membership] _, _ in
            membership.clusterStatus().asSeenByClients
        }
        handlers.oneWayHandlers[.gossip] = { [membership] message, frames in
            membership.receive(message, authenticatedAs: frames.property("User-Id", of: frames.count - 1))
        }
    }

    /// Milliseconds a new connection has to finish its ZeroMQ (and CURVE) handshake.
    static let handshakeMs: Int32 = 5000
    /// Largest message the client face reads: room and placement requests are small.
    static let maxClientMessageBytes = 256 << 10
}

extension AdminClusterStatus {
    /// The cluster as a client may see it: members with their role, state, load and client-facing
    /// endpoints, without cluster or admin endpoints and gossip internals.
    public var asSeenByClients: AdminClusterStatus {
        var status = AdminClusterStatus()
        status.reporter = reporter
        status.members = members.map { member in
            var visible = AdminMemberStatus()
            visible.id = member.id
            visible.role = member.role
            visible.state = member.state
            visible.clientEndpoint = member.clientEndpoint
            visible.eventsEndpoint = member.eventsEndpoint
            visible.clientCurvePublicKey = member.clientCurvePublicKey
            visible.webSocketEndpoint = member.webSocketEndpoint
            visible.version = member.version
            visible.load = member.load
            return visible
        }
        return status
    }
}
