internal import Routing
internal import ShowroomWire
internal import SwiftProtobuf
internal import ZeroMQ

/// Requests to the cluster's room coordinators: learns the alive ones from the seeds, sends each
/// request to one (the owner of its key first, which spares the coordinators a forward), and
/// tries the next on `UNAVAILABLE`, `DEADLINE_EXCEEDED` or `NO_COORDINATOR`. One DEALER per
/// coordinator, on the engine loop. Shared by ``CoordinatorPlacement`` and ``RoomService``.
final class CoordinatorClient: Sendable {
    let directory: ClusterDirectory
    let loop: EngineLoop
    let timeout: Duration
    private let links: LoopConfined<CoordinatorLinks>

    init(directory: ClusterDirectory, timeout: Duration) {
        self.directory = directory
        self.loop = directory.loop
        self.timeout = timeout
        let loop = directory.loop
        links = LoopConfined(loop: loop.eventLoop) { CoordinatorLinks(loop: loop.eventLoop, context: loop.context) }
    }

    /// The alive coordinators (from the cached cluster status).
    func coordinators() async throws(ShowroomError) -> [CoordinatorAddress] {
        ClusterDirectory.coordinators(in: try await directory.status())
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
        let coordinators = try await coordinators()
        guard !coordinators.isEmpty else {
            throw ShowroomError(.noCoordinator, "no alive room coordinator in the cluster (asked \(directory.seeds.joined(separator: ", "))); start a coordinator")
        }
        let ring = OwnerRing(.coordinator, memberIDs: coordinators.map(\.id))
        let order = ring.holders(of: key, count: ring.count).compactMap { id in coordinators.first { $0.id == id } }
        var lastError = ShowroomError(.noCoordinator, "no coordinator answered")
        for coordinator in order {
            let answer: WireEnvelope
            do throws(ShowroomError) {
                answer = try await exchange(kind, body: body, with: coordinator)
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
        [.unavailable, .deadlineExceeded, .noCoordinator].contains(error.code)
    }

    private func exchange(_ kind: WireMessageKind, body: some SwiftProtobuf.Message & Sendable, with coordinator: CoordinatorAddress) async throws(ShowroomError) -> WireEnvelope {
        let links = self.links
        let timeout = self.timeout
        return try await loop.perform { complete in
            links.value.send(kind, body: body, to: coordinator, timeout: timeout, complete)
        }
    }
}

/// The DEALERs to the coordinators and the requests waiting for answers; confined to the loop.
final class CoordinatorLinks {
    private struct Pending {
        let complete: (Result<WireEnvelope, ShowroomError>) -> Void
        let timer: TimerID
    }

    private let loop: EventLoop
    private let context: Context
    private var sockets: [String: Socket] = [:]
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
        _ kind: WireMessageKind, body: some SwiftProtobuf.Message, to coordinator: CoordinatorAddress, timeout: Duration,
        _ complete: @escaping (Result<WireEnvelope, ShowroomError>) -> Void
    ) {
        guard !isClosed else { return complete(.failure(.unavailable("the room service has shut down"))) }
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
        pending[id] = Pending(complete: complete, timer: timer)
    }

    /// Closes every socket and fails what waits.
    func close() {
        isClosed = true
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
        return socket
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
