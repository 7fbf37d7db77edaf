import FlyingFox
import FlyingSocks
import Foundation
import Logging
import Synchronization

/// The admin HTTP port of a server process (FlyingFox, on Swift concurrency; it never touches
/// the node's ZeroMQ sockets):
///
/// - `GET /metrics`: the Prometheus text exposition of a ``MetricsSetup``,
/// - `GET /healthz`: 200 `ok` while running, 503 `draining` after ``setDraining(_:)``,
/// - `GET /status`: the JSON document the ``StatusProvider`` returns,
/// - anything else: 404 naming the valid paths (405 for another method on a valid path).
///
/// Use either ``start()`` then ``stop()``, or ``run()``, which returns once stopped or when its
/// task is cancelled (the shape of a swift-service-lifecycle `Service`). ``stop()`` is prompt:
/// it closes the listening socket and every connection and does not wait for idle keep-alive
/// clients; once it returns, the port is free.
public final class AdminServer: Sendable {
    /// Where and how to listen.
    public struct Configuration: Sendable, Equatable {
        /// An IPv4 or IPv6 address literal, or `localhost`. `0.0.0.0` or `::` listen on all
        /// interfaces. Default `127.0.0.1`: metrics and status are not for the outside world.
        public var host: String
        /// The TCP port; 0 picks a free one (read it from ``AdminServer/start()``).
        public var port: UInt16
        /// Longest a request handler may take (seconds) before FlyingFox answers 500.
        public var requestTimeout: Double
        /// Longest ``AdminServer/start()`` waits for the socket to listen (seconds).
        public var startTimeout: Double

        /// Loopback on an ephemeral port by default.
        public init(host: String = "127.0.0.1", port: UInt16 = 0, requestTimeout: Double = 5, startTimeout: Double = 5) {
            self.host = host
            self.port = port
            self.requestTimeout = requestTimeout
            self.startTimeout = startTimeout
        }

        /// Parses `host:port`, `[ipv6]:port` or `:port` (host `127.0.0.1`), for a command-line
        /// flag or configuration key.
        public init(listen text: String) throws(AdminServerError) {
            guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
                throw .invalidAddress("admin address '\(text)' must be host:port, [ipv6]:port or :port")
            }
            var host = String(text[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self.init(host: host.isEmpty ? "127.0.0.1" : host, port: port)
        }
    }

    /// Produces the `/status` document: UTF-8 JSON. Called on each request, on a Swift
    /// concurrency thread; a throw answers 500 with the error's description.
    public typealias StatusProvider = @Sendable () async throws -> Data

    /// The paths served, in the order the 404 message lists them.
    public static let paths = ["/metrics", "/healthz", "/status"]
    /// Content type of `/metrics`: the Prometheus text exposition format.
    public static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    private let configuration: Configuration
    private let responder: AdminResponder
    private let logger: Logger
    private let stopping = StoppingFlag()
    private let state = Mutex<State>(.idle)

    private struct Running: Sendable {
        let server: HTTPServer
        let task: Task<Void, any Error>
        let endpoint: String
        let port: UInt16
    }

    private enum State: Sendable {
        case idle
        case starting(stopWaiters: [CheckedContinuation<Void, Never>], stopRequested: Bool)
        case running(Running)
        case stopping(waiters: [CheckedContinuation<Void, Never>])
        case stopped
    }

    /// A server for `metrics`; nothing listens until ``start()`` or ``run()``.
    /// - Parameter status: the `/status` document; by default `{}`.
    public init(
        configuration: Configuration = Configuration(),
        metrics: MetricsSetup,
        logger: Logger,
        status: @escaping StatusProvider = { Data("{}".utf8) }
    ) {
        self.configuration = configuration
        self.logger = logger
        self.responder = AdminResponder(metrics: metrics, status: status)
    }

    /// A ``StatusProvider`` that encodes `body()` as JSON with sorted keys.
    public static func jsonStatus<T: Encodable & Sendable>(_ body: @escaping @Sendable () async throws -> T) -> StatusProvider {
        return {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return try encoder.encode(try await body())
        }
    }

    /// Makes `/healthz` answer 503 `draining` (or 200 `ok` again with `false`), so load balancers
    /// and orchestrators stop sending before the node goes away. The other paths keep working.
    public func setDraining(_ draining: Bool = true) {
        responder.draining.store(draining, ordering: .releasing)
    }

    /// Whether `/healthz` reports draining.
    public var isDraining: Bool {
        responder.draining.load(ordering: .acquiring)
    }

    /// `http://HOST:PORT` while listening: the bound port, with `127.0.0.1` (or `[::1]`) for a
    /// wildcard host. `nil` before start and after stop.
    public var endpoint: String? {
        state.withLock { if case .running(let running) = $0 { running.endpoint } else { nil } }
    }

    /// The bound TCP port while listening.
    public var port: UInt16? {
        state.withLock { if case .running(let running) = $0 { running.port } else { nil } }
    }

    /// Binds and starts serving; returns the endpoint (`http://127.0.0.1:PORT`) once the socket
    /// listens. A server starts once: start after start or stop throws.
    /// - Throws: ``AdminServerError`` when the address is invalid or cannot be bound (port in
    ///   use), or when ``stop()`` was called meanwhile.
    @discardableResult
    public func start() async throws(AdminServerError) -> String {
        try state.withLock { (state) throws(AdminServerError) in
            guard case .idle = state else { throw .alreadyStarted }
            state = .starting(stopWaiters: [], stopRequested: false)
        }
        let description = "\(configuration.host):\(configuration.port)"
        let server: HTTPServer
        do throws(AdminServerError) {
            let address = try Self.socketAddress(host: configuration.host, port: configuration.port)
            server = HTTPServer(config: HTTPServer.Configuration(
                address: address,
                timeout: configuration.requestTimeout,
                logger: FlyingFoxLogBridge(logger: logger, stopping: stopping)))
        } catch {
            finishStopping(from: .starting)
            throw error
        }
        let responder = self.responder
        await server.appendRoute("*") { request in await responder.respond(to: request) }

        let task = Task { try await server.run() }
        switch await Self.listeningAddress(of: server, running: task, timeout: configuration.startTimeout) {
        case .failure(let error):
            stopping.set()
            await server.stop(timeout: 0)
            task.cancel()
            _ = await task.result
            finishStopping(from: .starting)
            throw .cannotListen(address: description, reason: Self.describe(error))
        case .success(let address):
            guard let (endpoint, port) = Self.endpoint(for: address) else {
                stopping.set()
                await server.stop(timeout: 0)
                _ = await task.result
                finishStopping(from: .starting)
                throw .cannotListen(address: description, reason: "not an IP address: \(address)")
            }
            let running = Running(server: server, task: task, endpoint: endpoint, port: port)
            let stopRequested = state.withLock { state in
                guard case .starting(let waiters, let stopRequested) = state else { return true }
                state = stopRequested ? .stopping(waiters: waiters) : .running(running)
                return stopRequested
            }
            if stopRequested {
                await shutDown(running)
                throw .stopped
            }
            logger.info("admin endpoint listening", metadata: ["endpoint": "\(endpoint)"])
            return endpoint
        }
    }

    /// Stops serving: closes the listening socket and open connections (in-flight requests are
    /// cut short) and returns when the port is released. Safe to call at any time and more than
    /// once; a call during ``start()`` makes that start throw ``AdminServerError/stopped``.
    public func stop() async {
        enum Action { case done, wait, shutDown(Running) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let action = state.withLock { state -> Action in
                switch state {
                case .idle, .stopped:
                    state = .stopped
                    return .done
                case .starting(var waiters, _):
                    waiters.append(continuation)
                    state = .starting(stopWaiters: waiters, stopRequested: true)
                    return .wait
                case .stopping(var waiters):
                    waiters.append(continuation)
                    state = .stopping(waiters: waiters)
                    return .wait
                case .running(let running):
                    state = .stopping(waiters: [continuation])
                    return .shutDown(running)
                }
            }
            switch action {
            case .done: continuation.resume()
            case .wait: break
            case .shutDown(let running): Task { await self.shutDown(running) }
            }
        }
    }

    /// Starts (unless ``start()`` already did) and serves until ``stop()`` is called or the
    /// calling task is cancelled; returns once the port is released.
    /// - Throws: what ``start()`` throws, or ``AdminServerError/serverFailed(_:)`` if the
    ///   server ended on its own.
    public func run() async throws(AdminServerError) {
        let isIdle = state.withLock { if case .idle = $0 { true } else { false } }
        if isIdle { try await start() }
        enum Attach { case task(Task<Void, any Error>), starting, stopped }
        let attach = state.withLock { state -> Attach in
            switch state {
            case .running(let running): .task(running.task)
            case .idle, .starting: .starting
            case .stopping, .stopped: .stopped
            }
        }
        let task: Task<Void, any Error>
        switch attach {
        case .task(let running): task = running
        case .starting: throw .alreadyStarted  // another start() is under way
        case .stopped:
            await stop()
            return
        }
        let result = await withTaskCancellationHandler {
            await task.result
        } onCancel: {
            Task { await self.stop() }
        }
        let endedOnItsOwn = !stopping.isSet
        await stop()
        if endedOnItsOwn {
            var reason = "the HTTP server ended"
            if case .failure(let error) = result { reason += ": \(Self.describe(error))" }
            logger.error("admin endpoint failed", metadata: ["error": "\(reason)"])
            throw .serverFailed(reason)
        }
    }

    private enum Phase { case starting, stopping }

    private func shutDown(_ running: Running) async {
        stopping.set()
        // Timeout 0: cancel at once. FlyingFox's accept loop never ends by itself after its
        // socket closes, so any grace period would always be waited out in full.
        await running.server.stop(timeout: 0)
        _ = await running.task.result
        logger.info("admin endpoint stopped", metadata: ["endpoint": "\(running.endpoint)"])
        finishStopping(from: .stopping)
    }

    /// Moves to `.stopped` and wakes whoever waits in ``stop()``.
    private func finishStopping(from phase: Phase) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let waiters: [CheckedContinuation<Void, Never>]
            switch state {
            case .starting(let pending, _) where phase == .starting: waiters = pending
            case .stopping(let pending) where phase == .stopping: waiters = pending
            default: waiters = []
            }
            state = .stopped
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until `server` listens, or its run `task` ends first (it failed to bind), or the
    /// timeout passes. FlyingFox's `waitUntilListening` alone would sit out its whole timeout
    /// after a bind failure.
    private static func listeningAddress(
        of server: HTTPServer, running task: Task<Void, any Error>, timeout: Double
    ) async -> Result<Socket.Address, any Error> {
        let once = ResumeOnce<Socket.Address>()
        return await withCheckedContinuation { continuation in
            once.install(continuation)
            Task {
                do {
                    try await server.waitUntilListening(timeout: timeout)
                    if let address = await server.listeningAddress {
                        once.resume(.success(address))
                    } else {
                        once.resume(.failure(AdminServerError.serverFailed("listening, but without an address")))
                    }
                } catch {
                    once.resume(.failure(error))
                }
            }
            Task {
                if case .failure(let error) = await task.result {
                    once.resume(.failure(error))
                } else {
                    once.resume(.failure(AdminServerError.serverFailed("the HTTP server ended before listening")))
                }
            }
        }
    }

    /// FlyingSocks' errors read best through `LocalizedError`; others through their description.
    private static func describe(_ error: any Error) -> String {
        (error as? any LocalizedError)?.errorDescription ?? "\(error)"
    }

    static func socketAddress(host: String, port: UInt16) throws(AdminServerError) -> any SocketAddress {
        do {
            if host == "localhost" { return try sockaddr_in.inet(ip4: "127.0.0.1", port: port) }
            if host.contains(":") { return try sockaddr_in6.inet6(ip6: host, port: port) }
            return try sockaddr_in.inet(ip4: host, port: port)
        } catch {
            throw .invalidAddress("admin host '\(host)' must be an IPv4 or IPv6 address or localhost")
        }
    }

    static func endpoint(for address: Socket.Address) -> (String, UInt16)? {
        switch address {
        case .ip4(let host, let port):
            return ("http://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(port)", port)
        case .ip6(let host, let port):
            return ("http://[\(host == "::" ? "::1" : host)]:\(port)", port)
        case .unix:
            return nil
        }
    }
}

/// Why the admin server could not start or went away.
public enum AdminServerError: Error, Equatable, CustomStringConvertible {
    /// ``AdminServer/start()`` was called on a server already started or stopped.
    case alreadyStarted
    /// The host or `host:port` text is not usable.
    case invalidAddress(String)
    /// Binding or listening failed (typically: the port is in use).
    case cannotListen(address: String, reason: String)
    /// ``AdminServer/stop()`` was called while starting.
    case stopped
    /// The HTTP server ended without being stopped.
    case serverFailed(String)

    public var description: String {
        switch self {
        case .alreadyStarted: "admin server already started"
        case .invalidAddress(let message): message
        case .cannotListen(let address, let reason): "admin server cannot listen on \(address): \(reason)"
        case .stopped: "admin server stopped while starting"
        case .serverFailed(let reason): "admin server failed: \(reason)"
        }
    }
}

/// Answers the admin paths. Holds no reference to the ``AdminServer`` so the server's handler
/// does not keep it alive.
final class AdminResponder: Sendable {
    let metrics: MetricsSetup
    let status: AdminServer.StatusProvider
    let draining = Atomic<Bool>(false)

    init(metrics: MetricsSetup, status: @escaping AdminServer.StatusProvider) {
        self.metrics = metrics
        self.status = status
    }

    func respond(to request: HTTPRequest) async -> HTTPResponse {
        guard AdminServer.paths.contains(request.path) else {
            return text(.notFound, "no such path: \(request.path); try \(AdminServer.paths.joined(separator: ", "))\n")
        }
        guard request.method == .GET else {
            var response = text(.methodNotAllowed, "\(request.path) answers GET only\n")
            response.headers[.init("Allow")] = "GET"
            return response
        }
        switch request.path {
        case "/metrics":
            return HTTPResponse(
                statusCode: .ok,
                headers: [.contentType: AdminServer.metricsContentType, .cacheControl: "no-store"],
                body: Data(metrics.exposition()))
        case "/healthz":
            return draining.load(ordering: .acquiring) ? text(.serviceUnavailable, "draining") : text(.ok, "ok")
        default:
            do {
                let document = try await status()
                return HTTPResponse(
                    statusCode: .ok,
                    headers: [.contentType: "application/json", .cacheControl: "no-store"],
                    body: document)
            } catch {
                return text(.internalServerError, "status unavailable: \(error)\n")
            }
        }
    }

    private func text(_ code: HTTPStatusCode, _ body: String) -> HTTPResponse {
        HTTPResponse(
            statusCode: code,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: Data(body.utf8))
    }
}

/// Resumes a continuation with the first of several results; later ones are dropped.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Result<Value, any Error>, Never>?>(nil)

    func install(_ continuation: CheckedContinuation<Result<Value, any Error>, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ result: Result<Value, any Error>) {
        continuation.withLock { $0.take() }?.resume(returning: result)
    }
}
