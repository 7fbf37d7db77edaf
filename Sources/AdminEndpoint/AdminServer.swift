import Foundation
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The admin HTTP port of a server process (Hummingbird on SwiftNIO's event loops; it never
/// touches the node's ZeroMQ sockets). Every path answers `GET` only (405 with `Allow: GET`
/// otherwise), with `Cache-Control: no-store`:
///
/// - `GET /metrics`: 200 with the Prometheus text exposition of a ``MetricsSetup``
///   (``metricsContentType``); unaffected by draining.
/// - `GET /healthz`: liveness. 200 `ok` while the process serves, 503 `draining` after
///   ``setDraining(_:)`` so load balancers stop sending before the node goes away.
/// - `GET /readyz`: readiness. 503 `starting` until ``setReady(_:)``, then 200 `ready`; 503
///   `draining` after ``setDraining(_:)``.
/// - `GET /status`: 200 with the JSON document the ``StatusProvider`` returns (the cluster view);
///   500 naming the error when it throws, 503 when it takes longer than
///   ``Limits/statusTimeout``; unaffected by draining.
/// - anything else: 404 naming the valid paths.
///
/// Requests are bounded by ``Limits`` before they reach the HTTP parser: a request target over
/// the limit gets 414, a request head over it 431 the moment the limit is crossed, a body 413, a
/// request not in full within ``Limits/requestTimeout`` 408; each of these closes the connection.
/// Idle keep-alive connections are closed after ``Limits/idleTimeout``, and at most
/// ``Limits/maxConnections`` are served at once.
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
        /// Longest ``AdminServer/start()`` waits for the socket to listen (seconds).
        public var startTimeout: Double
        /// What one client may cost.
        public var limits: Limits

        /// Loopback on an ephemeral port by default.
        public init(host: String = "127.0.0.1", port: UInt16 = 0, startTimeout: Double = 30, limits: Limits = Limits()) {
            self.host = host
            self.port = port
            self.startTimeout = startTimeout
            self.limits = limits
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
    public static let paths = ["/metrics", "/healthz", "/readyz", "/status"]
    /// Content type of `/metrics`: the Prometheus text exposition format.
    public static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    private let configuration: Configuration
    /// The admin paths' answers and flags (draining, ready); unused by a server made with a
    /// responder of its own.
    private let responder: AdminResponder
    /// What answers each request.
    private let respond: HTTPChannelHandler.Responder
    /// What the server is, for its log lines ("admin", "api").
    private let name: String
    private let logger: Logger
    private let stopping = StoppingFlag()
    private let state = Mutex<State>(.idle)

    private typealias HTTPServer = Server<AdminChildChannel>

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
        name = "admin"
        let responder = AdminResponder(
            metrics: metrics, status: status, statusTimeout: configuration.limits.statusTimeout)
        self.responder = responder
        respond = { request, writer, _ in try await responder.respond(to: request, writer: writer) }
    }

    /// A server that answers with `respond` instead of the admin paths, behind the same limits,
    /// start and stop (another HTTP face of a process, such as the server API).
    public init(configuration: Configuration, name: String, logger: Logger, respond: @escaping HTTPChannelHandler.Responder) {
        self.configuration = configuration
        self.logger = logger
        self.name = name
        responder = AdminResponder(metrics: nil, status: { Data("{}".utf8) }, statusTimeout: configuration.limits.statusTimeout)
        self.respond = respond
    }

    /// A ``StatusProvider`` that encodes `body()` as JSON with sorted keys.
    public static func jsonStatus<T: Encodable & Sendable>(_ body: @escaping @Sendable () async throws -> T) -> StatusProvider {
        return {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return try encoder.encode(try await body())
        }
    }

    /// Makes `/healthz` and `/readyz` answer 503 `draining` (or what they answered before with
    /// `false`), so load balancers and orchestrators stop sending before the node goes away.
    /// The other paths keep working.
    public func setDraining(_ draining: Bool = true) {
        responder.draining.store(draining, ordering: .releasing)
    }

    /// Whether `/healthz` reports draining.
    public var isDraining: Bool {
        responder.draining.load(ordering: .acquiring)
    }

    /// Makes `/readyz` answer 200 `ready` (unless draining): the node has joined and serves.
    /// With `false`, 503 `starting` again.
    public func setReady(_ ready: Bool = true) {
        responder.ready.store(ready, ordering: .releasing)
    }

    /// Whether `/readyz` reports ready (draining aside).
    public var isReady: Bool {
        responder.ready.load(ordering: .acquiring)
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
        let host: String
        do throws(AdminServerError) {
            host = try Self.bindHost(configuration.host)
        } catch {
            finishStopping(from: .starting)
            throw error
        }
        let limits = configuration.limits
        let respond = self.respond
        // Hummingbird's own lines (connections, "started") are debug detail for an admin port.
        var serverLogger = logger
        serverLogger.logLevel = max(logger.logLevel, .notice)
        let listening = ResumeOnce<SocketAddress?>()
        let server = HTTPServer(
            childChannelSetup: AdminChildChannel(limits: limits, responder: respond),
            configuration: ServerConfiguration(
                address: .hostname(host, port: Int(configuration.port)),
                availableConnectionsDelegate: MaximumAvailableConnections(max(1, limits.maxConnections), logger: serverLogger)),
            onServerRunning: { channel in listening.resume(.success(channel.localAddress)) },
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: serverLogger)
        let task = Task { try await server.run() }
        let result = await Self.listeningAddress(listening, running: task, timeout: configuration.startTimeout)
        let address: SocketAddress
        switch result {
        case .success(let bound?):
            address = bound
        case .success(nil), .failure:
            stopping.set()
            try? await server.shutdownGracefully()
            task.cancel()
            _ = await task.result
            finishStopping(from: .starting)
            var reason = "not an IP address"
            if case .failure(let error) = result { reason = Self.describe(error) }
            throw .cannotListen(address: description, reason: reason)
        }
        guard let ip = address.ipAddress, let boundPort = address.port, let port = UInt16(exactly: boundPort) else {
            stopping.set()
            try? await server.shutdownGracefully()
            _ = await task.result
            finishStopping(from: .starting)
            throw .cannotListen(address: description, reason: "not an IP address: \(address)")
        }
        let endpoint = Self.endpoint(ipAddress: ip, port: port)
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
        logger.info("\(name) endpoint listening", metadata: ["endpoint": "\(endpoint)"])
        return endpoint
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
        // Closes the listening socket and asks every connection to quiesce, which the request
        // guard answers by closing at once; returns when all are closed.
        do {
            try await running.server.shutdownGracefully()
        } catch {
            logger.notice("admin endpoint shutdown", metadata: ["error": "\(error)"])
        }
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

    /// Waits until the server listens (`listening` is resumed with its address), or its run
    /// `task` ends first (it failed to bind), or the timeout passes.
    private static func listeningAddress(
        _ listening: ResumeOnce<SocketAddress?>, running task: Task<Void, any Error>, timeout: Double
    ) async -> Result<SocketAddress?, any Error> {
        await withCheckedContinuation { continuation in
            listening.install(continuation)
            Task {
                if case .failure(let error) = await task.result {
                    listening.resume(.failure(error))
                } else {
                    listening.resume(.failure(AdminServerError.serverFailed("the HTTP server ended before listening")))
                }
            }
            Task {
                try? await Task.sleep(for: .nanoseconds(Int64(max(0, min(timeout, 3600)) * 1_000_000_000)))
                listening.resume(.failure(AdminServerError.serverFailed("not listening after \(timeout) s")))
            }
        }
    }

    /// NIO's I/O errors read best through their description; others through `LocalizedError`.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return "\(error)" }
        return (error as? any LocalizedError)?.errorDescription ?? "\(error)"
    }

    /// The address to bind: an IP address literal (checked here, so a host name never reaches
    /// the resolver), `localhost` meaning `127.0.0.1`.
    static func bindHost(_ host: String) throws(AdminServerError) -> String {
        let literal = host == "localhost" ? "127.0.0.1" : host
        do {
            _ = try SocketAddress(ipAddress: literal, port: 0)
            return literal
        } catch {
            throw .invalidAddress("admin host '\(host)' must be an IPv4 or IPv6 address or localhost")
        }
    }

    /// `SCHEME://HOST:PORT` for a bound address (or a host name), with loopback standing in for a
    /// wildcard and an IPv6 address in brackets.
    public static func endpoint(scheme: String = "http", ipAddress: String, port: UInt16) -> String {
        if ipAddress.contains(":") {
            return "\(scheme)://[\(ipAddress == "::" ? "::1" : ipAddress)]:\(port)"
        }
        return "\(scheme)://\(ipAddress == "0.0.0.0" ? "127.0.0.1" : ipAddress):\(port)"
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
    let metrics: MetricsSetup?
    let status: AdminServer.StatusProvider
    let statusTimeout: Double
    let draining = Atomic<Bool>(false)
    let ready = Atomic<Bool>(false)

    init(metrics: MetricsSetup?, status: @escaping AdminServer.StatusProvider, statusTimeout: Double) {
        self.metrics = metrics
        self.status = status
        self.statusTimeout = statusTimeout
    }

    /// An answer: status, content type, body.
    struct Answer: Sendable, Equatable {
        var status: HTTPResponse.Status
        var contentType: String
        var body: [UInt8]
        var allow: String?
    }

    func respond(to request: Request, writer: consuming ResponseWriter) async throws {
        let answer = await answer(method: request.method, path: request.uri.path)
        var fields: HTTPFields = [
            .contentType: answer.contentType,
            .cacheControl: "no-store",
            .contentLength: String(answer.body.count),
        ]
        if let allow = answer.allow { fields[.allow] = allow }
        try await writer.write(
            response: HTTPResponse(status: answer.status, headerFields: fields),
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    func answer(method: HTTPRequest.Method, path: String) async -> Answer {
        guard AdminServer.paths.contains(path) else {
            return text(.notFound, "no such path: \(path); try \(AdminServer.paths.joined(separator: ", "))\n")
        }
        guard method == .get else {
            var answer = text(.methodNotAllowed, "\(path) answers GET only\n")
            answer.allow = "GET"
            return answer
        }
        switch path {
        case "/metrics":
            return Answer(status: .ok, contentType: AdminServer.metricsContentType, body: metrics?.exposition() ?? [])
        case "/healthz":
            return draining.load(ordering: .acquiring) ? text(.serviceUnavailable, "draining") : text(.ok, "ok")
        case "/readyz":
            if draining.load(ordering: .acquiring) { return text(.serviceUnavailable, "draining") }
            return ready.load(ordering: .acquiring) ? text(.ok, "ready") : text(.serviceUnavailable, "starting")
        default:
            switch await statusDocument() {
            case .success(let document):
                return Answer(status: .ok, contentType: "application/json", body: [UInt8](document))
            case .failure(.timedOut):
                return text(.serviceUnavailable, "status unavailable: no answer within \(statusTimeout) s\n")
            case .failure(.failed(let description)):
                return text(.internalServerError, "status unavailable: \(description)\n")
            }
        }
    }

    private enum StatusFailure: Error { case timedOut, failed(String) }

    /// The provider's document, or its error, or a timeout: a provider that hangs must not hold
    /// the connection (it is left to finish on its own).
    private func statusDocument() async -> Result<Data, StatusFailure> {
        let once = ResumeOnce<Data>()
        let status = self.status
        let timeout = statusTimeout
        let result = await withCheckedContinuation { continuation in
            once.install(continuation)
            let work = Task {
                do { once.resume(.success(try await status())) } catch { once.resume(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: .nanoseconds(Int64(max(0, min(timeout, 3600)) * 1_000_000_000)))
                once.resume(.failure(StatusFailure.timedOut))
                work.cancel()
            }
        }
        switch result {
        case .success(let data): return .success(data)
        case .failure(let error as StatusFailure): return .failure(error)
        case .failure(let error): return .failure(.failed("\(error)"))
        }
    }

    private func text(_ status: HTTPResponse.Status, _ body: String) -> Answer {
        Answer(status: status, contentType: "text/plain; charset=utf-8", body: Array(body.utf8))
    }
}

/// A flag set once, read from any thread.
final class StoppingFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .acquiring) }

    func set() { value.store(true, ordering: .releasing) }
}

/// Resumes a continuation with the first of several results; later ones are dropped.
private final class ResumeOnce<Value: Sendable>: Sendable {
    /// The waiter, or the result that arrived before anybody waited (the server may be listening
    /// before ``install(_:)`` runs), or nothing more to do once resumed.
    private enum State {
        case waiting(CheckedContinuation<Result<Value, any Error>, Never>?)
        case early(Result<Value, any Error>)
        case done
    }
    private let state = Mutex<State>(.waiting(nil))

    func install(_ continuation: CheckedContinuation<Result<Value, any Error>, Never>) {
        let early = state.withLock { state -> Result<Value, any Error>? in
            switch state {
            case .early(let result):
                state = .done
                return result
            case .waiting:
                state = .waiting(continuation)
                return nil
            case .done:
                return nil
            }
        }
        if let early { continuation.resume(returning: early) }
    }

    func resume(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Value, any Error>, Never>? in
            switch state {
            case .waiting(let continuation?):
                state = .done
                return continuation
            case .waiting(nil):
                state = .early(result)
                return nil
            case .early, .done:
                return nil
            }
        }
        waiter?.resume(returning: result)
    }
}
