/// One channel connection of an engine (`RtcConnection` in the seeds): a channel and the uid the
/// engine holds in it. An engine holds at most one connection per channel.
public struct ChannelConnection: Sendable, Hashable, CustomStringConvertible {
    /// The channel name.
    public var channel: String
    /// The local uid in the channel; 0 before a join that lets the edge pick one.
    public var uid: UInt32

    /// Creates a connection value.
    ///
    /// - Parameters:
    ///   - channel: The channel name.
    ///   - uid: The local uid; 0 lets the edge assign one (the token must allow any uid).
    public init(channel: String, uid: UInt32) {
        self.channel = channel
        self.uid = uid
    }

    /// `channel/uid`.
    public var description: String { "\(channel)/\(uid)" }
}
