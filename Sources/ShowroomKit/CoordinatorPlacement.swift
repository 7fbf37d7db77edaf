internal import ShowroomWire

/// Places channels by asking the cluster's room coordinators (`CHANNEL_PLACE`): placements are
/// sticky while their edge lives, balanced by load, and moved at once when a client reports its
/// edge unreachable. Every client of a channel gets the same edge.
///
/// The alive coordinators come from any seed member's `CLUSTER_STATUS` (cached for
/// `cacheDuration`); the channel's owning coordinator is asked first, the next one on
/// `UNAVAILABLE`, `DEADLINE_EXCEEDED` or `NO_COORDINATOR`. Refusals pass through with their codes
/// (`NO_EDGE_AVAILABLE` 4005 when the cluster has no edge). A cluster without coordinators is
/// placed by rendezvous hashing over its edges, as ``ClusterPlacement`` does, unless
/// `fallbackToEdges` is off (then `NO_COORDINATOR` 4007).
package final class CoordinatorPlacement: ChannelPlacement {
    /// The cluster endpoints asked, in order.
    package var seeds: [String] { client.directory.seeds }
    /// Whether a cluster without an alive coordinator is placed by rendezvous hashing.
    package let fallbackToEdges: Bool
    private let client: MemberClient

    /// Creates a placement.
    ///
    /// - Parameters:
    ///   - seeds: Cluster endpoints of any members (`tcp://host:port`).
    ///   - loop: The loop its sockets live on.
    ///   - timeout: How long to wait for a seed or a coordinator.
    ///   - cacheDuration: How long a cluster status is reused.
    ///   - fallbackToEdges: Place by rendezvous hashing over the alive edges when the cluster has
    ///     no alive coordinator.
    package convenience init(
        seeds: [String], loop: EngineLoop, timeout: Duration = .seconds(3), cacheDuration: Duration = .seconds(2),
        fallbackToEdges: Bool = true
    ) {
        let directory = ClusterDirectory(seeds: seeds, loop: loop, timeout: timeout, cacheDuration: cacheDuration)
        self.init(client: MemberClient(directory: directory, timeout: timeout), fallbackToEdges: fallbackToEdges)
    }

    init(client: MemberClient, fallbackToEdges: Bool) {
        self.client = client
        self.fallbackToEdges = fallbackToEdges
    }

    /// The edge the coordinators place `channel` on. Without credentials the coordinators refuse
    /// to place a channel nobody hosts yet; the engine passes its join's token (see
    /// ``edge(for:avoiding:joiningAs:)``).
    package func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress {
        try await edge(for: channel, avoiding: nil, joiningAs: nil)
    }

    /// The edge the coordinators place `channel` on, told that `failedEdge` failed this client.
    package func edge(for channel: String, avoiding failedEdge: EdgeAddress?) async throws(ShowroomError) -> EdgeAddress {
        try await edge(for: channel, avoiding: failedEdge, joiningAs: nil)
    }

    /// The edge the coordinators place `channel` on for a client joining with `credentials`, told
    /// that `failedEdge` failed this client: a coordinator that cannot reach that edge either
    /// moves the channel at once.
    package func edge(
        for channel: String, avoiding failedEdge: EdgeAddress?, joiningAs credentials: PlacementCredentials?
    ) async throws(ShowroomError) -> EdgeAddress {
        let status = try await client.directory.status()
        if ClusterDirectory.coordinators(in: status).isEmpty {
            if fallbackToEdges {
                return try ClusterPlacement.choose(
                    channel: channel, among: ClusterDirectory.edges(in: status), avoiding: failedEdge, seeds: seeds)
            }
            throw ShowroomError(.noCoordinator, "no alive room coordinator in the cluster (asked \(seeds.joined(separator: ", "))); start a coordinator")
        }
        var request = RoomPlaceChannelRequest()
        request.channel = channel
        request.unreachableEdge = failedEdge?.id ?? ""
        if let credentials {
            request.uid = credentials.uid
            request.token = credentials.token
            request.audience = credentials.audience
            // The coordinators take at most 4.
            request.preferredEdges = Array(credentials.preferredEdges.prefix(4))
        }
        let answer = try await client.request(.channelPlace, body: request, key: channel, expecting: RoomPlaceChannelResponse.self)
        guard !answer.edgeID.isEmpty, !answer.clientEndpoint.isEmpty else {
            throw .malformed("a coordinator placed '\(channel)' on no edge (edge id '\(answer.edgeID)', endpoint '\(answer.clientEndpoint)')")
        }
        return EdgeAddress(id: answer.edgeID, endpoint: answer.clientEndpoint, curvePublicKey: answer.clientCurvePublicKey)
    }

    /// The alive coordinators as the cluster status shows them (cached).
    package func aliveCoordinators() async throws(ShowroomError) -> [MemberAddress] {
        try await client.members()
    }
}
