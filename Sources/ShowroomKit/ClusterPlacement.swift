#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShowroomWire
import Synchronization
import ZeroMQ

/// Places channels over the alive edges of a cluster by rendezvous hashing
/// (``RendezvousHashing``): every client picks the same edge for a channel without coordination.
///
/// The edge list comes from any seed member's `CLUSTER_STATUS` answer (the members with role
/// `edge`, state alive and a client endpoint), tried in order, and is reused for
/// `cacheDuration` so a burst of joins asks once.
public final class ClusterPlacement: ChannelPlacement {
    /// The cluster endpoints asked, in order.
    public let seeds: [String]
    private let loop: EngineLoop
    private let timeout: Duration
    private let cacheDuration: Duration
    private let cache = Mutex<(edges: [EdgeAddress], at: ContinuousClock.Instant)?>(nil)

    /// Creates a placement.
    ///
    /// - Parameters:
    ///   - seeds: Cluster endpoints of any members (`tcp://host:port`).
    ///   - loop: The loop the status requests run on.
    ///   - timeout: How long to wait for each seed.
    ///   - cacheDuration: How long an edge list is reused.
    public init(seeds: [String], loop: EngineLoop, timeout: Duration = .seconds(3), cacheDuration: Duration = .seconds(2)) {
        self.seeds = seeds
        self.loop = loop
        self.timeout = timeout
        self.cacheDuration = cacheDuration
    }

    /// The edge chosen by rendezvous hashing over ``aliveEdges()``.
    public func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress {
        let edges = try await aliveEdges()
        guard let id = RendezvousHashing.owner(key: channel, among: edges.map(\.id)),
              let edge = edges.first(where: { $0.id == id })
        else {
            throw .unavailable("no alive edge with a client endpoint in the cluster (asked \(seeds.joined(separator: ", "))); start an edge")
        }
        return edge
    }

    /// The alive edges as the first seed that answers sees them (cached).
    ///
    /// - Throws: The last seed's error when none answers, `INVALID_ARGUMENT` without seeds.
    public func aliveEdges() async throws(ShowroomError) -> [EdgeAddress] {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0 }), cached.at.duration(to: now) < cacheDuration {
            return cached.edges
        }
        guard !seeds.isEmpty else { throw .invalidArgument("the cluster entry has no seed endpoints") }
        var lastError = ShowroomError.unavailable("no seed answered")
        for seed in seeds {
            do throws(ShowroomError) {
                let status = try await Self.clusterStatus(seed: seed, loop: loop, timeout: timeout)
                let edges = Self.edges(in: status)
                cache.withLock { $0 = (edges, .now) }
                return edges
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// The alive edges with a client endpoint in a status document, sorted by id.
    ///
    /// - Parameter status: A `CLUSTER_STATUS` answer.
    /// - Returns: The edges.
    public static func edges(in status: AdminClusterStatus) -> [EdgeAddress] {
        status.members
            .filter { $0.role == "edge" && $0.state == .alive && !$0.clientEndpoint.isEmpty }
            .map { EdgeAddress(id: $0.id, endpoint: $0.clientEndpoint) }
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
