import ShowroomWire

/// A hosted channel in brief, as the edge reports it to the room-coordinators
/// (``ChannelPlane/channelSummaries``).
public struct ChannelSummary: Sendable, Hashable {
    /// The channel name.
    public var name: String
    /// The broadcasters' uids, in join order.
    public var broadcasters: [UInt32]
    /// Channel connections, broadcasters and audience.
    public var connections: Int
    /// Its broadcasters forwarded into other channels, with their destinations' states (set by
    /// the edge's shell, which runs the forwards).
    public var forwardedPublishers: [EdgeForwardedPublisher] = []
    /// The origin edge's node id when this edge hosts the channel as a relay (set by the edge's
    /// shell, which runs the relays); empty on the origin.
    public var originEdge = ""
    /// The publishers recorded on this edge (set from its ``RecordingDesk``:
    /// ``EdgeReportBook/summaries(_:forwards:relays:recordings:)``).
    public var recording: [UInt32] = []

    /// Creates a summary.
    ///
    /// - Parameters:
    ///   - name: The channel name.
    ///   - broadcasters: The broadcasters' uids.
    ///   - connections: Channel connections.
    public init(name: String, broadcasters: [UInt32], connections: Int) {
        self.name = name
        self.broadcasters = broadcasters
        self.connections = connections
    }
}
