import AdminEndpoint
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

/// The listening half of a WebSocket face (an edge's client sessions, a coordinator's or
/// call-signal node's client kinds): binds, checks each upgrade (path, page origin, room left) and
/// hands every accepted connection to `serve`. What a connection carries is the face's business.
public final class WebSocketListener: Sendable {
    /// Where and whom to serve.
    public struct Settings: Sendable {
        /// The IP address to listen on (``WebSocketSettings/address()``).
        public var host: String
        /// The port; 0 picks one.
        public var port: UInt16
        /// The one path connections are taken on (`/v1/edge`, `/v1/node`).
        public var path: String
        /// Origins whose pages may connect (`Origin` header, exactly, as `http://host:port`);
        /// `*` allows any. A request that names no page origin (not a browser) is allowed.
        public var allowedOrigins: [String]
        /// The largest message taken from a client (larger ones close the connection).
        public var maxMessageBytes: Int
        /// The most connections at once.
        public var maxConnections: Int = 4_096
        /// TLS (`wss://`), when the process has a certificate and key.
        public var tls: TLSConfiguration?

        /// Settings from a process's ``WebSocketSettings``, serving `path`.
        /// - Throws: `invalidArgument` for an address or TLS file that is not usable.
        public init(_ settings: WebSocketSettings, path: String, maxMessageBytes: Int) throws(ShowroomError) {
            try settings.validate()
            (host, port) = try settings.address()
            self.path = path
            allowedOrigins = settings.allowedOrigins
            self.maxMessageBytes = maxMessageBytes
            tls = try settings.tlsConfiguration()
        }
    }

    /// One accepted connection: its messages, its writer, the client's IP address.
    public typealias Serve = @Sendable (WebSocketInboundStream, WebSocketOutboundWriter, String?) async -> Void

    public let settings: Settings
    private let logger: Logger
    private let open = Atomic<Int>(0)
    private let server = Mutex<(shutdown: @Sendable () async throws -> Void, task: Task<Void, any Error>)?>(nil)

    public init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Whether a browser sends `origin` for a page: `http(s)://…`, or `null` for an opaque one
    /// (a sandboxed frame, a file).
    public static func isPageOrigin(_ origin: String) -> Bool {
        origin == "null" || origin.hasPrefix("http://") || origin.hasPrefix("https://")
    }

    /// Binds and serves each connection with `serve`; returns `ws://HOST:PORT/PATH` (`wss://` with
    /// TLS) once listening.
    /// - Throws: `unavailable` if the address cannot be bound.
    public func start(advertiseHost: String?, serve: @escaping Serve) async throws -> String {
        let webSocket = HTTP1WebSocketUpgradeChannel(
            responder: { [self] request, writer, _ in
                // Only the upgrade is served here: a plain request from a refused page origin is
                // told so (403), any other is asked for an upgrade (426). A declined upgrade never
                // gets here: the HTTP layer answers it 400.
                if refusedOrigin(request.head) != nil {
                    try await writer.writeResponse(HTTPResponse(status: .forbidden))
                } else {
                    try await writer.writeResponse(HTTPResponse(status: .upgradeRequired, headerFields: [.upgrade: "websocket"]))
                }
            },
            configuration: WebSocketServerConfiguration(maxFrameSize: settings.maxMessageBytes, autoPing: .enabled(timePeriod: .seconds(15))),
            shouldUpgrade: { [self] request, channel, _ in upgrade(request, channel, serve) })
        let bound: SocketAddress
        if let tls = settings.tls {
            bound = try await listen(try TLSChannel(webSocket, tlsConfiguration: tls))
        } else {
            bound = try await listen(webSocket)
        }
        let port = bound.port.flatMap { UInt16(exactly: $0) } ?? settings.port
        return AdminServer.endpoint(scheme: settings.tls == nil ? "ws" : "wss", ipAddress: advertiseHost ?? settings.host, port: port) + settings.path
    }

    /// Runs a server of `channel`s on the settings' address; returns the bound address once it listens.
    private func listen<Channel: ServerChildChannel>(_ channel: Channel) async throws -> SocketAddress {
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
            throw ShowroomError.unavailable("the WebSocket face could not listen on \(settings.host) port \(settings.port)\(reason)")
        }
        self.server.withLock { $0 = ({ try await server.shutdownGracefully() }, task) }
        return bound
    }

    /// Closes the listening socket and every connection.
    public func stop() async {
        guard let running = server.withLock({ running in defer { running = nil }; return running }) else { return }
        try? await running.shutdown()
        _ = await running.task.result
    }

    /// The page origin of `request` that is not allowed, if any. A page's origin (what a browser
    /// sends) must be allowed; other clients say what they like, and no check of a header keeps
    /// them out.
    private func refusedOrigin(_ request: HTTPRequest) -> String? {
        guard !settings.allowedOrigins.contains("*") else { return nil }
        return request.headerFields[values: .origin].filter(Self.isPageOrigin).first { !settings.allowedOrigins.contains($0) }
    }

    /// Whether a request may become a connection: the path, the origin, the room left.
    private func upgrade(_ request: HTTPRequest, _ channel: any Channel, _ serve: @escaping Serve)
        -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first.map(String.init) == settings.path else { return .dontUpgrade }
        if let origin = refusedOrigin(request) {
            logger.notice("WebSocket connection refused: origin not allowed", metadata: ["origin": "\(origin.prefix(100))"])
            return .dontUpgrade
        }
        guard open.load(ordering: .relaxed) < settings.maxConnections else {
            logger.warning("WebSocket connection refused: \(settings.maxConnections) connections are open")
            return .dontUpgrade
        }
        let address = channel.remoteAddress?.ipAddress
        return .upgrade([:]) { [self] inbound, outbound, _ in
            open.add(1, ordering: .relaxed)
            defer { open.subtract(1, ordering: .relaxed) }
            await serve(inbound, outbound, address)
        }
    }
}

/// What waits to be written to one WebSocket connection, bounded in bytes: a message that may be
/// dropped (media, a notice) is refused past the bound, any other past twice the bound, when the
/// client is too far behind to keep.
public struct WebSocketOutbox: Sendable {
    /// Where the connection's writer takes messages from.
    public let continuation: AsyncStream<ByteBuffer>.Continuation
    /// Bytes queued and not yet written.
    public private(set) var queuedBytes = 0

    /// What became of a message.
    public enum Outcome: Sendable { case queued, dropped, tooFarBehind }

    public init(_ continuation: AsyncStream<ByteBuffer>.Continuation) { self.continuation = continuation }

    /// Queues the message of `size` bytes that `message` makes, unless the bound says otherwise
    /// (then nothing is made).
    public mutating func enqueue(size: Int, droppable: Bool, limit: Int, _ message: () -> ByteBuffer) -> Outcome {
        if queuedBytes + size > (droppable ? limit : 2 * limit) { return droppable ? .dropped : .tooFarBehind }
        queuedBytes += size
        continuation.yield(message())
        return .queued
    }

    /// `bytes` were written.
    public mutating func written(_ bytes: Int) { queuedBytes -= bytes }
}

/// The life of one WebSocket connection, the same for every face: what its outbox yields is
/// written, each binary message from the client goes to `receive`, a text message closes it.
public enum WebSocketConnection {
    /// Runs until the client or the outbox ends (``WebSocketOutbox`` finishing ends it).
    ///
    /// - Parameters:
    ///   - written: Called after each message is written, with its size (the outbox's count).
    ///   - alongside: Runs beside the connection and is cancelled with it (an open timeout).
    /// - Returns: When the connection is over; the outbox's stream is finished by then.
    public static func run(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter,
                           outbox: (stream: AsyncStream<ByteBuffer>, continuation: AsyncStream<ByteBuffer>.Continuation),
                           maxMessageBytes: Int, logger: Logger,
                           written: @escaping @Sendable (Int) -> Void,
                           alongside: (@Sendable () async -> Void)? = nil,
                           receive: (ByteBuffer) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in outbox.stream {
                    written(message.readableBytes)
                    do { try await outbound.writeBinaryMessage(message) } catch { break }
                }
            }
            if let alongside { group.addTask { await alongside() } }
            do {
                for try await message in inbound.messages(maxSize: maxMessageBytes) {
                    guard case .binary(let buffer) = message else {
                        try? await outbound.close(.dataInconsistentWithMessage, reason: "binary messages only")
                        break
                    }
                    await receive(buffer)
                }
            } catch {
                logger.debug("WebSocket connection ended", metadata: ["error": "\(error)"])
            }
            outbox.continuation.finish()
            group.cancelAll()
        }
    }
}
