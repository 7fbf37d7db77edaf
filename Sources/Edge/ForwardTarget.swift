/// A running destination, as the frame path needs it.
public struct ForwardTarget: Sendable, Hashable {
    /// The destination channel (the channel the forwarded frames' headers name).
    public var channel: String
    /// Its edge (the link the frames go over).
    public var edge: ForwardEdge

    /// Creates a target.
    public init(channel: String, edge: ForwardEdge) {
        self.channel = channel
        self.edge = edge
    }
}
