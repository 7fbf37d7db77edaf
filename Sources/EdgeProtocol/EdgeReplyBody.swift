/// The body of a successful reply; each case is the response message of its request kind.
public enum EdgeReplyBody: Sendable, Hashable {
    /// The session is open: how often to send heartbeats and what the edge accepts (only the
    /// limits a session meets travel: frame size, channels, stream messages).
    case sessionOpened(session: SessionID, heartbeatInterval: Duration, heartbeatTimeout: Duration, limits: EdgeLimits)
    /// The session is closed.
    case sessionClosed
    /// Heartbeat answer, echoing the client's time for round-trip measurement.
    case heartbeat(clientTime: UInt64)
    /// The channel connection is live (`joinChannelEx` success); events about the channel follow.
    case joined(channel: String, uid: UInt32, connection: ConnectionID, role: ClientRole)
    /// The channel connection is gone.
    case left(channel: String)
    /// The options (and role, if it was part of the update) are in effect.
    case optionsUpdated(channel: String)
    /// The role is in effect.
    case roleSet(channel: String, role: ClientRole)
    /// The new token is in effect.
    case tokenRenewed(channel: String)
    /// `PreloadChannelResponse`: the grant is kept this long.
    case preloaded(channel: String, kept: Duration)
    /// Subscribe, unsubscribe, mute, volume indication: done.
    case done
    /// The stream message went out with this sequence number.
    case streamMessageSent(sequence: UInt32)
}
