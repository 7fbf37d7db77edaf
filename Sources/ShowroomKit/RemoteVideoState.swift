/// The delivery state of a remote user's video (`remoteVideoStateChangedOfUid` in the seeds).
public enum RemoteVideoState: Sendable, Hashable, CustomStringConvertible {
    /// Not delivered (unpublished, publisher offline, muted locally, unsubscribed).
    case stopped
    /// Subscribed; waiting for a keyframe.
    case starting
    /// Frames arrive from a keyframe on: they can be decoded.
    case decoding
    /// Frames are skipped because this client's queue was full, until the next keyframe.
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
