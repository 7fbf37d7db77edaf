/// How busy a member is, published in its metadata and refreshed periodically by its node.
public struct MemberLoad: Sendable, Equatable {
    /// Channels the member hosts (edges) or owns.
    public var channels: Int
    /// Client connections the member holds.
    public var connections: Int
    /// Process CPU use, in percent of one core.
    public var cpuPercent: Double

    /// Creates a load report; everything defaults to idle.
    ///
    /// - Parameters:
    ///   - channels: Channels hosted or owned.
    ///   - connections: Client connections held.
    ///   - cpuPercent: Process CPU use, percent of one core.
    public init(channels: Int = 0, connections: Int = 0, cpuPercent: Double = 0) {
        self.channels = channels
        self.connections = connections
        self.cpuPercent = cpuPercent
    }
}
