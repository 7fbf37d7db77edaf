/// The delivery state of a remote video track for one subscriber, as the edge sees it. The SDK
/// combines it with its own decoding to report the seeds' remote-video-state callback.
public enum RemoteVideoState: Sendable, Hashable, CustomStringConvertible {
    /// Not delivered (unpublished, publisher offline, muted locally, unsubscribed).
    case stopped
    /// Subscribed; waiting for a keyframe (from the GOP cache or the publisher).
    case starting
    /// Frames are delivered from a keyframe on: the subscriber can decode.
    case decoding
    /// Frames are skipped because the subscriber's queue was full, until the next keyframe.
    case frozen

    /// The state's name.
    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .starting: "starting"
        case .decoding: "decoding"
        case .frozen: "frozen"
        }
    }
}
