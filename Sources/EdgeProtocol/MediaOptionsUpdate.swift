/// A partial change of a channel connection's options (`updateChannelEx`): `nil` fields stay as
/// they are. Setting ``role`` is a role switch, with the same checks as
/// `ChannelPlane.setRole(_:requestID:channel:role:now:)`.
public struct MediaOptionsUpdate: Sendable, Hashable {
    /// The new role, or `nil` to keep it.
    public var role: ClientRole?
    /// See ``MediaOptions/publishAudio``.
    public var publishAudio: Bool?
    /// See ``MediaOptions/publishVideo``.
    public var publishVideo: Bool?
    /// See ``MediaOptions/publishData``.
    public var publishData: Bool?
    /// See ``MediaOptions/autoSubscribeAudio``.
    public var autoSubscribeAudio: Bool?
    /// See ``MediaOptions/autoSubscribeVideo``.
    public var autoSubscribeVideo: Bool?

    /// Creates an update; every field defaults to "unchanged".
    ///
    /// - Parameters:
    ///   - role: The new role.
    ///   - publishAudio: Publish the microphone track.
    ///   - publishVideo: Publish the camera track.
    ///   - publishData: Send stream messages.
    ///   - autoSubscribeAudio: Subscribe to remote audio automatically.
    ///   - autoSubscribeVideo: Subscribe to remote video automatically.
    public init(
        role: ClientRole? = nil,
        publishAudio: Bool? = nil,
        publishVideo: Bool? = nil,
        publishData: Bool? = nil,
        autoSubscribeAudio: Bool? = nil,
        autoSubscribeVideo: Bool? = nil
    ) {
        self.role = role
        self.publishAudio = publishAudio
        self.publishVideo = publishVideo
        self.publishData = publishData
        self.autoSubscribeAudio = autoSubscribeAudio
        self.autoSubscribeVideo = autoSubscribeVideo
    }
}
