/// The media options of one channel connection (`ChannelMediaOptions` in the seeds): what it
/// publishes and what it subscribes to automatically. Changed live with
/// `ChannelPlane.updateOptions(_:requestID:channel:update:now:)` (`updateChannelEx`).
///
/// A flag to publish only takes effect for a broadcaster whose grant has the matching privilege;
/// an audience member's publish flags wait until it becomes a broadcaster.
public struct MediaOptions: Sendable, Hashable {
    /// Publish the microphone track.
    public var publishAudio: Bool
    /// Publish the camera track.
    public var publishVideo: Bool
    /// Send stream messages.
    public var publishData: Bool
    /// Subscribe to every remote audio track unless unsubscribed explicitly.
    public var autoSubscribeAudio: Bool
    /// Subscribe to every remote video track unless unsubscribed explicitly.
    public var autoSubscribeVideo: Bool

    /// Creates options; by default nothing is published and everything is subscribed.
    ///
    /// - Parameters:
    ///   - publishAudio: Publish the microphone track.
    ///   - publishVideo: Publish the camera track.
    ///   - publishData: Send stream messages.
    ///   - autoSubscribeAudio: Subscribe to remote audio automatically.
    ///   - autoSubscribeVideo: Subscribe to remote video automatically.
    public init(
        publishAudio: Bool = false,
        publishVideo: Bool = false,
        publishData: Bool = false,
        autoSubscribeAudio: Bool = true,
        autoSubscribeVideo: Bool = true
    ) {
        self.publishAudio = publishAudio
        self.publishVideo = publishVideo
        self.publishData = publishData
        self.autoSubscribeAudio = autoSubscribeAudio
        self.autoSubscribeVideo = autoSubscribeVideo
    }

    /// The defaults for a role: a broadcaster publishes audio, video and data; everyone
    /// auto-subscribes to audio and video.
    ///
    /// - Parameter role: The role joined with.
    /// - Returns: The options.
    public static func defaults(for role: ClientRole) -> MediaOptions {
        let publishes = role == .broadcaster
        return MediaOptions(publishAudio: publishes, publishVideo: publishes, publishData: publishes)
    }

    /// True if the track of `kind` is to be published.
    ///
    /// - Parameter kind: A track kind.
    public func publishes(_ kind: TrackKind) -> Bool {
        kind == .audio ? publishAudio : publishVideo
    }

    /// True if remote tracks of `kind` are subscribed to automatically.
    ///
    /// - Parameter kind: A track kind.
    public func autoSubscribes(_ kind: TrackKind) -> Bool {
        kind == .audio ? autoSubscribeAudio : autoSubscribeVideo
    }

    /// These options with the fields `update` sets replaced (its role is not part of the options).
    ///
    /// - Parameter update: The fields to change.
    /// - Returns: The updated options.
    public func applying(_ update: MediaOptionsUpdate) -> MediaOptions {
        var options = self
        if let value = update.publishAudio { options.publishAudio = value }
        if let value = update.publishVideo { options.publishVideo = value }
        if let value = update.publishData { options.publishData = value }
        if let value = update.autoSubscribeAudio { options.autoSubscribeAudio = value }
        if let value = update.autoSubscribeVideo { options.autoSubscribeVideo = value }
        return options
    }
}
