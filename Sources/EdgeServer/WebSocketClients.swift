import AdminEndpoint
import Edge
import EdgeProtocol
import HTTPTypes
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ShowroomWire
import Synchronization

/// Client sessions over WebSocket (browsers): each connection is one client session of the same
/// protocol as the ZeroMQ client face, framed as ``WebSocketFraming`` says, handed to the edge's
/// loop as the ROUTER's messages are. The plane cannot tell the two apart.
///
/// A connection's session id lies outside the ZeroMQ routing ids (``SessionID/routingIDLength``
/// is 0 for it), so no ZeroMQ peer can take a browser's place. What goes to a connection waits in
/// its outbox, bounded in bytes: media past the bound is dropped (as at a ROUTER's high-water
/// mark), a control message past twice the bound ends the session (a client too far behind).
final class WebSocketClients: Sendable {
    /// Where and whom to serve.
    struct Settings: Sendable {
        /// The IP address to listen on (``EdgeWebSocketSettings/address()``).
        var host: String
        /// The port; 0 picks one.
        var port: UInt16
        /// Origins whose pages may connect (`Origin` header, exactly, as `http://host:port`);
        /// `*` allows any. A request that names no page origin (not a browser) is allowed.
        var allowedOrigins: [String]
        /// The largest message taken from a client (larger ones close the connection).
        var maxMessageBytes: Int
        /// What may wait for one client before its media is dropped.
        var maxQueuedBytes: Int = 4 << 20
        /// The most connections at once.
        var maxConnections: Int = 4_096
        /// A connection that opens no session in this time is closed.
        var openTimeout: Duration = .seconds(10)
        /// TLS (`wss://`), when the edge has a certificate and key.
        var tls: TLSConfiguration?
    }

    private struct Connection {
        let address: String?
        let outbox: AsyncStream<ByteBuffer>.Continuation
        var queuedBytes = 0
        var opened = false
    }

    /// The path a browser connects to.
    static let path = "/v1/edge"
    /// Marks a session id as a WebSocket connection's: its top byte is past every routing id
    /// length (1–7) and is not a relay stand-in's (0xFF).
    private static let mark: UInt64 = 0x80 << 56

    let settings: Settings
    private let connections = Mutex<[SessionID: Connection]>([:])
    private let lastID = Atomic<UInt64>(0)
    private let logger: Logger
    /// A client's message, on the way to the edge's loop.
    private let receive: @Sendable (SessionID, ByteBuffer) -> Void
    /// A connection closed: its session is over.
    private let closed: @Sendable (SessionID) -> Void
    private let server = Mutex<(shutdown: @Sendable () async throws -> Void, task: Task<Void, any Error>)?>(nil)

    init(settings: Settings, logger: Logger, receive: @escaping @Sendable (SessionID, ByteBuffer) -> Void,
         closed: @escaping @Sendable (SessionID) -> Void) {
        self.settings = settings
        self.logger = logger
        self.receive = receive
        self.closed = closed
    }

    /// Whether a browser sends `origin` for a page: `http(s)://…`, or `null` for an opaque one
    /// (a sandboxed frame, a file).
    static func isPageOrigin(_ origin: String) -> Bool {
        origin == "null" || origin.hasPrefix("http://") || origin.hasPrefix("https://")
    }

    /// Whether `session` is a WebSocket connection's.
    static func isWebSocket(_ session: SessionID) -> Bool { session.rawValue >> 56 == mark >> 56 }

    // MARK: - Serving

    /// Binds and serves; returns `ws://HOST:PORT/v1/edge` (`wss://` with TLS) once listening.
    func start(advertiseHost: String?) async throws -> String {
        let webSocket = HTTP1WebSocketUpgradeChannel(
            responder: { _, writer, _ in
                // Only the upgrade is served here.
                try await writer.writeResponse(HTTPResponse(status: .upgradeRequired, headerFields: [.upgrade: "websocket"]))
            },
            configuration: WebSocketServerConfiguration(maxFrameSize: settings.maxMessageBytes, autoPing: .enabled(timePeriod: .seconds(15))),
            shouldUpgrade: { [self] request, channel, _ in upgrade(request, channel) })
        let bound: SocketAddress
        if let tls = settings.tls {
            bound = try await serve(try TLSChannel(webSocket, tlsConfiguration: tls))
        } else {
            bound = try await serve(webSocket)
        }
        let port = bound.port.flatMap { UInt16(exactly: $0) } ?? settings.port
        return AdminServer.endpoint(scheme: settings.tls == nil ? "ws" : "wss", ipAddress: advertiseHost ?? settings.host, port: port) + Self.path
    }

    /// Runs a server of `channel`s on the settings' address; returns the bound address once it listens.
    private func serve<Channel: ServerChildChannel>(_ channel: Channel) async throws -> SocketAddress {
        let listening = AsyncStream<SocketAddress?>.makeStream()
        var serverLogger = logger
        serverLogger.logLevel = max(logger.logLevel, .notice)
        let server = Server(
            childChannelSetup: channel,
            configuration: ServerConfiguration(address: .hostname(settings.host, port: Int(settings.port))),
            onServerRunning: { channel in
                listening.continuation.yield(channel.localAddress)
                listening.continuation.finish()
            },
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: serverLogger)
        let task = Task {
            defer { listening.continuation.finish() }
            try await server.run()
        }
        var bound: SocketAddress?
        for await address in listening.stream {
            bound = address
            break
        }
        guard let bound, bound.port != nil else {
            try? await server.shutdownGracefully()
            let failure = await task.result
            var reason = ""
            if case .failure(let error) = failure { reason = ": \(error)" }
            throw ShowroomError.unavailable("the WebSocket client face could not listen on \(settings.host) port \(settings.port)\(reason)")
        }
        self.server.withLock { $0 = ({ try await server.shutdownGracefully() }, task) }
        return bound
    }

    /// Closes the listening socket and every connection.
    func stop() async {
        guard let running = server.withLock({ running in defer { running = nil }; return running }) else { return }
        try? await running.shutdown()
        _ = await running.task.result
    }

    /// Whether a request may become a client connection: the path, the origin, the room left.
    private func upgrade(_ request: HTTPRequest, _ channel: any Channel) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first.map(String.init) == Self.path else { return .dontUpgrade }
        // A page's origin (what a browser sends) must be allowed; other clients say what they
        // like, and no check of a header keeps them out.
        let pages = request.headerFields[values: .origin].filter(Self.isPageOrigin)
        if let origin = pages.first(where: { !settings.allowedOrigins.contains("*") && !settings.allowedOrigins.contains($0) }) {
            logger.notice("WebSocket connection refused: origin not allowed", metadata: ["origin": "\(origin.prefix(100))"])
            return .dontUpgrade
        }
        guard connections.withLock({ $0.count }) < settings.maxConnections else {
            logger.warning("WebSocket connection refused: \(settings.maxConnections) connections are open")
            return .dontUpgrade
        }
        let address = channel.remoteAddress?.ipAddress
        return .upgrade([:]) { [self] inbound, outbound, _ in
            await serve(inbound, outbound, address: address)
        }
    }

    /// One connection: its messages to the edge, its outbox to the socket, until either ends.
    private func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, address: String?) async {
        let session = SessionID(Self.mark | lastID.add(1, ordering: .relaxed).newValue)
        let (stream, outbox) = AsyncStream<ByteBuffer>.makeStream()
        connections.withLock { $0[session] = Connection(address: address, outbox: outbox) }
        let maxMessageBytes = settings.maxMessageBytes
        let openTimeout = settings.openTimeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await message in stream {
                    connections.withLock { $0[session]?.queuedBytes -= message.readableBytes }
                    do { try await outbound.writeBinaryMessage(message) } catch { break }
                }
            }
            group.addTask { [self] in
                // A connection that opens no session in time is closed, as the ROUTER's are.
                try? await Task.sleep(for: openTimeout)
                if !Task.isCancelled, connections.withLock({ $0[session]?.opened == false }) {
                    logger.info("WebSocket connection closed: no session opened in time", metadata: ["session": "\(session)"])
                    try? await outbound.close(.policyViolation, reason: "open a session first")
                }
            }
            do {
                for try await message in inbound.messages(maxSize: maxMessageBytes) {
                    guard case .binary(let buffer) = message else {
                        try? await outbound.close(.dataInconsistentWithMessage, reason: "binary messages only")
                        break
                    }
                    receive(session, buffer)
                }
            } catch {
                logger.debug("WebSocket connection ended", metadata: ["session": "\(session)", "error": "\(error)"])
            }
            outbox.finish()
            group.cancelAll()
        }
        connections.withLock { $0[session] = nil }
        closed(session)
    }

    // MARK: - Sending (from the edge's loop)

    /// The address of `session`'s client, and marks it opened (it stays past the open timeout).
    func sessionOpened(_ session: SessionID) -> String? {
        connections.withLock { connections in
            connections[session]?.opened = true
            return connections[session]?.address
        }
    }

    /// Queues one message for `session`: `envelope` and `payload` framed (``WebSocketFraming``)
    /// straight into the buffer the socket sends from.
    ///
    /// - Parameters:
    ///   - droppable: A media frame: dropped past ``Settings/maxQueuedBytes``.
    func send(envelope: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer? = nil, to session: SessionID, droppable: Bool) -> DeliveryOutcome {
        let limit = settings.maxQueuedBytes
        let size = WebSocketFraming.size(envelope: envelope, payload: payload)
        return connections.withLock { connections in
            guard var connection = connections[session] else { return .unreachable }
            if connection.queuedBytes + size > (droppable ? limit : 2 * limit) {
                return droppable ? .wouldBlock : .unreachable
            }
            var buffer = ByteBufferAllocator().buffer(capacity: size)
            WebSocketFraming.write(envelope: envelope, payload: payload) { buffer.writeBytes($0) }
            connection.queuedBytes += size
            connections[session] = connection
            connection.outbox.yield(buffer)
            return .sent
        }
    }
}
