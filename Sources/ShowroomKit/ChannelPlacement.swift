internal import ShowroomWire

/// An edge a client can connect to.
package struct EdgeAddress: Sendable, Hashable, CustomStringConvertible {
    /// The edge's node id (the endpoint itself for an edge given directly).
    package var id: String
    /// Its client endpoint, `tcp://host:port`.
    package var endpoint: String
    /// The edge's CURVE public key (Z85) when it encrypts client links; "" for plain links.
    package var curvePublicKey: String = ""

    /// Creates an address.
    ///
    /// - Parameters:
    ///   - id: The edge's node id.
    ///   - endpoint: Its client endpoint.
    ///   - curvePublicKey: Its client-link CURVE key, "" for plain links.
    package init(id: String, endpoint: String, curvePublicKey: String = "") {
        self.id = id
        self.endpoint = endpoint
        self.curvePublicKey = curvePublicKey
    }

    /// `id@endpoint`.
    package var description: String { "\(id)@\(endpoint)" }
}

/// Who asks for a placement: the uid and token the client joins with. Coordinators place a
/// channel only for a token that lets its holder join it.
package struct PlacementCredentials: Sendable, Hashable {
    /// The uid the client joins as.
    package var uid: UInt32
    /// The AccessToken2 token it joins with.
    package var token: String
    /// It joins as audience: a busy channel's audience may be placed on a relay edge.
    package var audience: Bool
    /// Edges (node ids, at most 4) the client already has sessions with, best first: a channel not
    /// placed yet goes to one of them, so joining it opens no new session.
    package var preferredEdges: [String]

    /// Creates credentials.
    ///
    /// - Parameters:
    ///   - uid: The uid the client joins as.
    ///   - token: The token it joins with.
    ///   - audience: Whether it joins as audience.
    ///   - preferredEdges: Edges the client already has sessions with, best first (at most 4).
    package init(uid: UInt32, token: String, audience: Bool = false, preferredEdges: [String] = []) {
        self.uid = uid
        self.token = token
        self.audience = audience
        self.preferredEdges = preferredEdges
    }
}

/// Decides which edge serves a channel. The engine asks once per join, and again (naming the edge
/// that failed) for every connection it rejoins after an edge died or drained.
package protocol ChannelPlacement: Sendable {
    /// The edge to join `channel` on.
    ///
    /// - Parameter channel: The channel name.
    /// - Returns: The edge.
    /// - Throws: `UNAVAILABLE` when no edge is known to be alive, `DEADLINE_EXCEEDED` when the
    ///   cluster did not answer.
    func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress

    /// The edge to join `channel` on when `failedEdge` just failed this client (its connection
    /// broke, it went silent, or it is draining): another edge if there is one.
    ///
    /// The default asks ``edge(for:)`` again, for placements with nowhere else to go.
    ///
    /// - Parameters:
    ///   - channel: The channel name.
    ///   - failedEdge: The edge that failed, or `nil` for a first join.
    /// - Returns: The edge.
    func edge(for channel: String, avoiding failedEdge: EdgeAddress?) async throws(ShowroomError) -> EdgeAddress

    /// The edge to join `channel` on, for a client that joins with `credentials` (what the
    /// engine calls: a placement that asks the cluster's coordinators shows them the token).
    ///
    /// The default ignores the credentials and asks ``edge(for:avoiding:)``.
    ///
    /// - Parameters:
    ///   - channel: The channel name.
    ///   - failedEdge: The edge that failed, or `nil` for a first join.
    ///   - credentials: The uid and token the client joins with.
    /// - Returns: The edge.
    func edge(for channel: String, avoiding failedEdge: EdgeAddress?, joiningAs credentials: PlacementCredentials?)
        async throws(ShowroomError) -> EdgeAddress
}

extension ChannelPlacement {
    /// ``edge(for:)``, whatever failed: the placement knows no other edge.
    package func edge(for channel: String, avoiding failedEdge: EdgeAddress?) async throws(ShowroomError) -> EdgeAddress {
        try await edge(for: channel)
    }

    /// ``edge(for:avoiding:)``: the placement needs no credentials.
    package func edge(
        for channel: String, avoiding failedEdge: EdgeAddress?, joiningAs credentials: PlacementCredentials?
    ) async throws(ShowroomError) -> EdgeAddress {
        try await edge(for: channel, avoiding: failedEdge)
    }
}

/// Every channel on one edge: for a single-edge deployment and tests.
package struct FixedEdgePlacement: ChannelPlacement {
    /// The edge.
    package let edge: EdgeAddress

    /// Creates a placement onto `endpoint`.
    ///
    /// - Parameter endpoint: The edge's client endpoint.
    package init(endpoint: String) {
        edge = EdgeAddress(id: endpoint, endpoint: endpoint)
    }

    /// Always ``edge``; a rejoin after it failed tries it again.
    package func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress { edge }
}
