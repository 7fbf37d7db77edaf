/// What one channel connection publishes and subscribes to (`ChannelMediaOptions` in the seeds).
///
/// On join, `nil` fields take the role's default (a broadcaster publishes audio, video and data;
/// everyone auto-subscribes to audio and video). In ``ShowroomEngine/updateChannelEx(options:connection:)``
/// `nil` fields keep their current value and a non-nil `role` is a role switch.
public struct ChannelMediaOptions: Sendable, Hashable {
    /// The role; on join `nil` means audience.
    public var role: ClientRole?
    /// Publish the microphone track.
    public var publishAudio: Bool?
    /// Publish the camera track.
    public var publishVideo: Bool?
    /// Send stream messages.
    public var publishData: Bool?
    /// Subscribe to every remote audio track unless unsubscribed explicitly.
    public var autoSubscribeAudio: Bool?
    /// Subscribe to every remote video track unless unsubscribed explicitly.
    public var autoSubscribeVideo: Bool?

    /// Creates options; every field defaults to "the role's default" (join) or "unchanged"
    /// (update).
    ///
    /// - Parameters:
    ///   - role: The role.
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

    /// A broadcaster with the defaults: publishes audio, video and data, subscribes to everything.
    public static var broadcaster: ChannelMediaOptions { ChannelMediaOptions(role: .broadcaster) }
    /// An audience member with the defaults: subscribes to everything, publishes nothing.
    public static var audience: ChannelMediaOptions { ChannelMediaOptions(role: .audience) }

    /// The role a join with these options takes: audience unless said otherwise, as on the wire.
    public var joinRole: ClientRole { role ?? .audience }
}
