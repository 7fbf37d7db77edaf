internal import Ownership
internal import ShowroomWire

/// Places channels over the alive edges of a cluster by rendezvous hashing (an ``OwnerRing`` of
/// the edges): every client picks the same edge for a channel without coordination.
/// For clusters without a room coordinator; ``CoordinatorPlacement`` asks one when there is.
///
/// The edge list comes from any seed member's `CLUSTER_STATUS` answer (the members with role
/// `edge`, state alive and a client endpoint), tried in order, and is reused for
/// `cacheDuration` so a burst of joins asks once.
package final class ClusterPlacement: ChannelPlacement {
    /// The cluster endpoints asked, in order.
    package var seeds: [String] { directory.seeds }
    let directory: ClusterDirectory

    /// Creates a placement.
    ///
    /// - Parameters:
    ///   - seeds: Cluster endpoints of any members (`tcp://host:port`).
    ///   - loop: The loop the status requests run on.
    ///   - timeout: How long to wait for each seed.
    ///   - cacheDuration: How long an edge list is reused.
    package convenience init(seeds: [String], loop: EngineLoop, timeout: Duration = .seconds(3), cacheDuration: Duration = .seconds(2)) {
        self.init(directory: ClusterDirectory(seeds: seeds, loop: loop, timeout: timeout, cacheDuration: cacheDuration))
    }

    init(directory: ClusterDirectory) {
        self.directory = directory
    }

    /// The edge chosen by rendezvous hashing over ``aliveEdges()``.
    package func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress {
        try await edge(for: channel, avoiding: nil)
    }

    /// The edge chosen by rendezvous hashing over the alive edges except `failedEdge` (unless it
    /// is the only one): the channel's next edge in every client's eyes, so the audience of a
    /// failed edge gathers on one edge again.
    package func edge(for channel: String, avoiding failedEdge: EdgeAddress?) async throws(ShowroomError) -> EdgeAddress {
        // A cached list is fine: the failed edge is left out whatever the membership says yet.
        let edges = try await aliveEdges()
        return try Self.choose(channel: channel, among: edges, avoiding: failedEdge, seeds: seeds)
    }

    /// The alive edges as the first seed that answers sees them (cached).
    ///
    /// - Throws: The last seed's error when none answers, `INVALID_ARGUMENT` without seeds.
    package func aliveEdges() async throws(ShowroomError) -> [EdgeAddress] {
        Self.edges(in: try await directory.status())
    }

    /// The alive edges with a client endpoint in a status document, sorted by id.
    ///
    /// - Parameter status: A `CLUSTER_STATUS` answer.
    /// - Returns: The edges.
    static func edges(in status: AdminClusterStatus) -> [EdgeAddress] {
        ClusterDirectory.edges(in: status)
    }

    /// Rendezvous choice over `edges`, leaving out `failedEdge` unless nothing else is left.
    static func choose(channel: String, among edges: [EdgeAddress], avoiding failedEdge: EdgeAddress?, seeds: [String]) throws(ShowroomError) -> EdgeAddress {
        let all = OwnerRing(.edge, memberIDs: edges.map(\.id))
        // The failed edge by its id or its endpoint (it may be back under another id).
        let others = edges.filter { $0.id == failedEdge?.id || $0.endpoint == failedEdge?.endpoint }
            .reduce(all) { ring, failed in ring.removing(failed.id) }
        guard let id = (others.isEmpty ? all : others).owner(of: channel),
              let edge = edges.first(where: { $0.id == id })
        else {
            throw .unavailable("no alive edge with a client endpoint in the cluster (asked \(seeds.joined(separator: ", "))); start an edge")
        }
        return edge
    }
}
