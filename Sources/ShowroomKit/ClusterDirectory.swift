internal import Ownership
internal import ShowroomWire
import Synchronization
internal import ZeroMQ

/// A room coordinator or call-signal node as the membership announces it.
package struct MemberAddress: Sendable, Hashable, CustomStringConvertible {
    /// The member's node id.
    package var id: String
    /// Where it serves clients' requests: its client endpoint (`tcp://host:port`).
    package var endpoint: String
    /// Where it publishes notices (a PUB socket), empty if it announces none.
    package var eventsEndpoint: String

    /// Creates an address.
    ///
    /// - Parameters:
    ///   - id: The node id.
    ///   - endpoint: Its client endpoint.
    ///   - eventsEndpoint: Its events endpoint.
    package init(id: String, endpoint: String, eventsEndpoint: String = "") {
        self.id = id
        self.endpoint = endpoint
        self.eventsEndpoint = eventsEndpoint
    }

    /// `id@endpoint`.
    package var description: String { "\(id)@\(endpoint)" }
}

/// What the SDK knows of a cluster: the `CLUSTER_STATUS` answer of the first seed that answers,
/// reused for `cacheDuration` so a burst of joins or room calls asks once. Shared by the
/// placements and the room service.
///
/// The seed that answered last is asked first next time, and the coordinators the last answer
/// listed are asked after the configured seeds: a seed that died (or came back on another port)
/// costs one timeout, not one per refresh.
final class ClusterDirectory: Sendable {
    let seeds: [String]
    let loop: EngineLoop
    let timeout: Duration
    let cacheDuration: Duration
    private let cache = Mutex<(status: AdminClusterStatus, at: ContinuousClock.Instant)?>(nil)
    /// The seed that answered last, and the coordinators' client endpoints it listed.
    private let learned = Mutex<(answered: String?, coordinators: [String])>((nil, []))

    init(seeds: [String], loop: EngineLoop, timeout: Duration, cacheDuration: Duration) {
        self.seeds = seeds
        self.loop = loop
        self.timeout = timeout
        self.cacheDuration = cacheDuration
    }

    /// The cluster as the first seed that answers sees it (cached).
    ///
    /// - Throws: The last seed's error when none answers, `INVALID_ARGUMENT` without seeds.
    func status() async throws(ShowroomError) -> AdminClusterStatus {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0 }), cached.at.duration(to: now) < cacheDuration {
            return cached.status
        }
        guard !seeds.isEmpty else { throw .invalidArgument("the cluster entry has no seed endpoints") }
        var lastError = ShowroomError.unavailable("no seed answered")
        for seed in candidates() {
            do throws(ShowroomError) {
                let status = try await Self.clusterStatus(seed: seed, loop: loop, timeout: timeout)
                cache.withLock { $0 = (status, .now) }
                let coordinators = Self.coordinators(in: status).map(\.endpoint)
                learned.withLock { $0 = (seed, coordinators) }
                return status
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// The endpoints to ask, in order: the one that answered last, the configured seeds, the
    /// coordinators the last answer listed; each once.
    func candidates() -> [String] {
        let learned = learned.withLock { $0 }
        var seen = Set<String>()
        return ([learned.answered].compactMap { $0 } + seeds + learned.coordinators).filter { seen.insert($0).inserted }
    }

    /// Forgets the cached status, so the next call asks again (after a member failed a request).
    func invalidate() {
        cache.withLock { $0 = nil }
    }

    /// The alive edges with a client endpoint, sorted by id.
    static func edges(in status: AdminClusterStatus) -> [EdgeAddress] {
        status.members
            .filter { $0.isAlive(as: .edge) && !$0.clientEndpoint.isEmpty }
            .map { EdgeAddress(id: $0.id, endpoint: $0.clientEndpoint, curvePublicKey: $0.clientCurvePublicKey) }
            .sorted { $0.id < $1.id }
    }

    /// The alive coordinators with a client endpoint, sorted by id.
    static func coordinators(in status: AdminClusterStatus) -> [MemberAddress] {
        members(.coordinator, in: status)
    }

    /// The alive members of `role` with a client endpoint, sorted by id.
    static func members(_ role: NodeRole, in status: AdminClusterStatus) -> [MemberAddress] {
        status.members
            .filter { $0.isAlive(as: role) && !$0.clientEndpoint.isEmpty }
            .map { MemberAddress(id: $0.id, endpoint: $0.clientEndpoint, eventsEndpoint: $0.eventsEndpoint) }
            .sorted { $0.id < $1.id }
    }

    /// Asks one member for its view of the cluster, on the loop.
    static func clusterStatus(seed: String, loop: EngineLoop, timeout: Duration) async throws(ShowroomError) -> AdminClusterStatus {
        try await loop.perform { complete in
            let events = loop.eventLoop
            let socket: Socket
            let request: [UInt8]
            do {
                socket = try Socket(.dealer, context: loop.context)
                try socket.connect(seed)
                let envelope = try WireEnvelope(
                    request: .clusterStatus, id: 1, body: AdminClusterStatusRequest(),
                    deadlineMs: UInt32(clamping: timeout.milliseconds))
                request = try envelope.serializedBytes()
                // Queued until the connection is up (no IMMEDIATE): the timer bounds the wait.
                _ = try socket.send(request)
            } catch {
                complete(.failure(.unavailable("cannot ask \(seed) for the cluster status: \(error)")))
                return
            }
            var finished = false
            var timer: TimerID?
            let finish = { (result: Result<AdminClusterStatus, ShowroomError>) in
                guard !finished else { return }
                finished = true
                if let timer { events.cancelTimer(timer) }
                events.unregister(socket)
                socket.close()
                complete(result)
            }
            events.register(socket) { socket, _ in
                while !finished, let frames = try? socket.receiveFrames(), let first = frames.first {
                    do throws(ShowroomError) {
                        let envelope = try WireEnvelope.decode(frame: first)
                        guard envelope.isResponse, envelope.requestID == 1 else { continue }
                        if let failure = envelope.failure { finish(.failure(failure)); return }
                        finish(.success(try envelope.decodeBody(AdminClusterStatus.self)))
                    } catch {
                        finish(.failure(error))
                    }
                }
            }
            timer = events.scheduleTimer(after: timeout) {
                finish(.failure(.deadlineExceeded("no cluster status from \(seed) within \(timeout): is a Showroom member running there?")))
            }
        }
    }
}
