internal import Ownership
internal import ShowroomWire
internal import SwiftProtobuf
internal import ZeroMQ

/// Requests to the cluster's members of one role (room coordinators, call-signal nodes): learns
/// the alive ones from the seeds, sends each request to one (the owner of its key first, which
/// spares the members a forward), and tries the next on `UNAVAILABLE`, `DEADLINE_EXCEEDED` or
/// none alive. One DEALER per member, on the engine loop. Shared by ``CoordinatorPlacement``,
/// ``RoomService`` and ``CallClient``.
final class MemberClient: Sendable {
    let directory: ClusterDirectory
    let loop: EngineLoop
    let timeout: Duration
    /// The role asked.
    let role: NodeRole
    private let links: LoopConfined<MemberLinks>

    init(directory: ClusterDirectory, role: NodeRole = .coordinator, timeout: Duration) {
        self.role = role
        self.directory = directory
        self.loop = directory.loop
        self.timeout = timeout
        let loop = directory.loop
        links = LoopConfined(loop: loop.eventLoop) { MemberLinks(loop: loop.eventLoop, context: loop.context) }
    }

    /// The alive members of the role (from the cached cluster status).
    func members() async throws(ShowroomError) -> [MemberAddress] {
        ClusterDirectory.members(role, in: try await directory.status())
    }

    /// The refusal when the cluster has no alive member of the role.
    private var noneAlive: ShowroomError {
        switch role {
        case .callsignal:
            ShowroomError(.noCallSignal, "no alive call-signal node in the cluster (asked \(directory.seeds.joined(separator: ", "))); start one")
        default:
            ShowroomError(.noCoordinator, "no alive room coordinator in the cluster (asked \(directory.seeds.joined(separator: ", "))); start a coordinator")
        }
    }

    /// Sends a request to the alive coordinators in turn until one answers.
    ///
    /// - Parameters:
    ///   - kind: The request kind.
    ///   - body: The request body.
    ///   - key: The room id or channel the request is about (its owner is asked first); empty
    ///     for none.
    ///   - expecting: The response body type.
    /// - Throws: The coordinator's answer when it is a refusal (room not found, no edge …),
    ///   `NO_COORDINATOR` when the cluster has none alive, or the last coordinator's transport
    ///   error when none answered.
    func request<Response: SwiftProtobuf.Message>(
        _ kind: WireMessageKind, body: some SwiftProtobuf.Message & Sendable, key: String, expecting: Response.Type
    ) async throws(ShowroomError) -> Response {
        let members = try await members()
        guard !members.isEmpty else { throw noneAlive }
        let ring = OwnerRing(role, memberIDs: members.map(\.id))
        let order = ring.holders(of: key, count: ring.count).compactMap { id in members.first { $0.id == id } }
        var lastError = noneAlive
        for member in order {
            let answer: WireEnvelope
            do throws(ShowroomError) {
                answer = try await exchange(kind, body: body, with: member)
            } catch {
                // Unreachable or silent: the membership may not know yet; ask again next time.
                directory.invalidate()
                lastError = error
                continue
            }
            if let failure = answer.failure {
                guard Self.triesNext(after: failure) else { throw failure }
                lastError = failure
                continue
            }
            return try answer.decodeBody(Response.self)
        }
        throw lastError
    }

    /// Closes the sockets; requests in flight fail with `UNAVAILABLE`.
    func close() async {
        let links = self.links
        _ = try? await loop.perform { (complete: @escaping (Result<Void, ShowroomError>) -> Void) in
            links.value.close()
            complete(.success(()))
        }
    }

    /// Whether a refusal is the coordinator's state rather than the request's: another
    /// coordinator may do better.
    static func triesNext(after error: ShowroomError) -> Bool {
        [.unavailable, .deadlineExceeded, .noCoordinator, .noCallSignal].contains(error.code)
    }

    private func exchange(_ kind: WireMessageKind, body: some SwiftProtobuf.Message & Sendable, with coordinator: MemberAddress) async throws(ShowroomError) -> WireEnvelope {
        let links = self.links
        let timeout = self.timeout
        return try await loop.perform { complete in
            links.value.send(kind, body: body, to: coordinator, timeout: timeout, complete)
        }
    }
}

/// The DEALERs to the coordinators and the requests waiting for answers; confined to the loop.
final class MemberLinks {
    private struct Pending {
        let complete: (Result<WireEnvelope, ShowroomError>) -> Void
        let timer: TimerID
        let endpoint: String
    }

    private let loop: EventLoop
    private let context: Context
    private var sockets: [String: Socket] = [:]
    /// A monitor per socket: a member that is killed closes its TCP connection at once, and the
    /// requests waiting for it fail then (and go to the next member) instead of at their timeout.
    private var monitors: [String: SocketMonitor] = [:]
    /// Members whose connection broke and is not up again: requests to them fail at once (and go
    /// to the next member) instead of waiting out their timeout for a member that is most likely
    /// dead.
    private var down: Set<String> = []
    private var pending: [UInt64: Pending] = [:]
    private var nextRequestID: UInt64 = 1
    private var isClosed = false

    init(loop: EventLoop, context: Context) {
        self.loop = loop
        self.context = context
    }

    /// Sends one request; `complete` gets the answer envelope (possibly a refusal),
    /// `DEADLINE_EXCEEDED` after `timeout`, or `UNAVAILABLE` if it could not be sent.
    func send(
        _ kind: WireMessageKind, body: some SwiftProtobuf.Message, to coordinator: MemberAddress, timeout: Duration,
        _ complete: @escaping (Result<WireEnvelope, ShowroomError>) -> Void
    ) {
        guard !isClosed else { return complete(.failure(.unavailable("the room service has shut down"))) }
        guard !down.contains(coordinator.endpoint) else {
            _ = loop.scheduleTimer(after: .zero) { complete(.failure(.unavailable("the connection to \(coordinator) is broken (it may have died)"))) }
            return
        }
        let id = nextRequestID
        nextRequestID += 1
        do throws(ShowroomError) {
            let socket = try socket(to: coordinator.endpoint)
            let envelope = try WireEnvelope(request: kind, id: id, body: body, deadlineMs: UInt32(clamping: timeout.milliseconds))
            let bytes: [UInt8]
            do { bytes = try envelope.serializedBytes() } catch { throw .internal("cannot serialize a \(kind) request: \(error)") }
            // Queued until the connection is up (no IMMEDIATE): the timer bounds the wait.
            guard (try? socket.send(bytes)) == .sent else {
                throw .unavailable("the queue to coordinator \(coordinator) is full")
            }
        } catch {
            return complete(.failure(error))
        }
        let timer = loop.scheduleTimer(after: timeout) { [weak self] in
            guard let self, let request = self.pending.removeValue(forKey: id) else { return }
            request.complete(.failure(.deadlineExceeded(
                "no answer to \(kind) from coordinator \(coordinator) within \(timeout)")))
        }
        pending[id] = Pending(complete: complete, timer: timer, endpoint: coordinator.endpoint)
    }

    /// Closes every socket and fails what waits.
    func close() {
        isClosed = true
        for monitor in monitors.values {
            loop.unregister(monitor.socket)
            monitor.stop()
        }
        monitors = [:]
        for socket in sockets.values {
            loop.unregister(socket)
            socket.close()
        }
        sockets = [:]
        let waiting = pending
        pending = [:]
        for (_, request) in waiting.sorted(by: { $0.key < $1.key }) {
            loop.cancelTimer(request.timer)
            request.complete(.failure(.unavailable("the room service has shut down")))
        }
    }

    private func socket(to endpoint: String) throws(ShowroomError) -> Socket {
        if let socket = sockets[endpoint] { return socket }
        let socket: Socket
        do {
            socket = try Socket(.dealer, context: context)
            try socket.setHighWaterMarks(send: 1000, receive: 1000)
            try socket.connect(endpoint)
        } catch {
            throw .unavailable("cannot connect to coordinator at \(endpoint): \(error)")
        }
        sockets[endpoint] = socket
        loop.register(socket) { [weak self] socket, _ in self?.receive(on: socket) }
        if let monitor = try? SocketMonitor(watching: socket, events: [.disconnected, .connected], context: context) {
            monitors[endpoint] = monitor
            loop.register(monitor.socket) { [weak self] _, _ in self?.connectionBroke(endpoint) }
        }
        return socket
    }

    /// Notes the connection to the member at `endpoint` going down or up; fails the requests
    /// waiting for it when it broke.
    private func connectionBroke(_ endpoint: String) {
        guard let monitor = monitors[endpoint] else { return }
        let (seen, up) = monitor.drain()
        if let up { if up { down.remove(endpoint) } else { down.insert(endpoint) } }
        guard seen.contains(.disconnected) else { return }
        // On the next turn: the completions may start requests on this very link.
        _ = loop.scheduleTimer(after: .zero) { [weak self] in self?.failPending(to: endpoint) }
    }

    private func failPending(to endpoint: String) {
        let lost = pending.filter { $0.value.endpoint == endpoint }.sorted { $0.key < $1.key }
        for (id, request) in lost {
            pending[id] = nil
            loop.cancelTimer(request.timer)
            request.complete(.failure(.unavailable("the connection to the member at \(endpoint) broke")))
        }
    }

    private func receive(on socket: Socket) {
        while let frames = try? socket.receiveFrames(), let first = frames.first {
            guard let envelope = try? WireEnvelope.decode(frame: first), envelope.isResponse,
                  let request = pending.removeValue(forKey: envelope.requestID)
            else { continue }  // late answers (after a timeout) have no waiter
            loop.cancelTimer(request.timer)
            request.complete(.success(envelope))
        }
    }
}
