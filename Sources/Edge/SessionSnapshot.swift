/// An open session, as ``ChannelPlane/session(_:)`` reports it.
public struct SessionSnapshot: Sendable, Hashable {
    /// The session.
    public var id: SessionID
    /// The client id it opened with.
    public var clientID: String
    /// The SDK version it reported.
    public var sdkVersion: String
    /// When it opened.
    public var openedAt: Duration
    /// When it was last heard from.
    public var lastHeard: Duration
    /// Its channels, in join order.
    public var channels: [String]
    /// Its volume indication settings, if enabled.
    public var volumeIndication: VolumeIndicationConfig?
}
