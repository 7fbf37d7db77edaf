import ShowroomWire

/// An edge a client can connect to.
public struct EdgeAddress: Sendable, Hashable, CustomStringConvertible {
    /// The edge's node id (the endpoint itself for an edge given directly).
    public var id: String
    /// Its client endpoint, `tcp://host:port`.
    public var endpoint: String

    /// Creates an address.
    ///
    /// - Parameters:
    ///   - id: The edge's node id.
    ///   - endpoint: Its client endpoint.
    public init(id: String, endpoint: String) {
        self.id = id
        self.endpoint = endpoint
    }

    /// `id@endpoint`.
    public var description: String { "\(id)@\(endpoint)" }
}

/// Decides which edge serves a channel. The engine asks once per join; the room coordinator's
/// placement can replace the built-in ones without the engine changing.
public protocol ChannelPlacement: Sendable {
    /// The edge to join `channel` on.
    ///
    /// - Parameter channel: The channel name.
    /// - Returns: The edge.
    /// - Throws: `UNAVAILABLE` when no edge is known to be alive, `DEADLINE_EXCEEDED` when the
    ///   cluster did not answer.
    func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress
}

/// Every channel on one edge: for a single-edge deployment and tests.
public struct FixedEdgePlacement: ChannelPlacement {
    /// The edge.
    public let edge: EdgeAddress

    /// Creates a placement onto `endpoint`.
    ///
    /// - Parameter endpoint: The edge's client endpoint.
    public init(endpoint: String) {
        edge = EdgeAddress(id: endpoint, endpoint: endpoint)
    }

    /// Always ``edge``.
    public func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress { edge }
}
