/// One channel connection, as ``ChannelPlane/connection(_:channel:)`` reports it.
public struct ConnectionSnapshot: Sendable, Hashable {
    /// The connection.
    public var id: ConnectionID
    /// The session holding it.
    public var session: SessionID
    /// The channel.
    public var channel: String
    /// The user's uid in the channel.
    public var uid: UInt32
    /// Broadcaster or audience.
    public var role: ClientRole
    /// Its media options.
    public var options: MediaOptions
    /// Its current grant.
    public var grant: ChannelGrant
    /// The tracks it publishes now.
    public var publishing: [TrackKind]
    /// When it joined.
    public var joinedAt: Duration
}
