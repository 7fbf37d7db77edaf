/// Why a remote user's video delivery state changed.
public enum RemoteVideoStateReason: Sendable, Hashable, CustomStringConvertible {
    /// This client subscribed (explicitly, by auto-subscribe, or on joining).
    case subscribed
    /// This client unsubscribed.
    case unsubscribed
    /// This client muted the video (``ShowroomEngine/muteRemoteVideoStream(uid:muted:connection:)``).
    case localMuted
    /// This client unmuted the video.
    case localUnmuted
    /// The publisher stopped publishing its video (or lost the privilege to).
    case remoteMuted
    /// The publisher started publishing its video.
    case remoteUnmuted
    /// The publisher left, dropped or became audience.
    case remoteOffline
    /// This client's queue was full: frames are skipped until the next keyframe.
    case networkCongestion
    /// Delivery resumed at a keyframe after congestion.
    case networkRecovery

    /// The reason's name.
    public var description: String {
        switch self {
        case .subscribed: "subscribed"
        case .unsubscribed: "unsubscribed"
        case .localMuted: "local muted"
        case .localUnmuted: "local unmuted"
        case .remoteMuted: "remote muted"
        case .remoteUnmuted: "remote unmuted"
        case .remoteOffline: "remote offline"
        case .networkCongestion: "network congestion"
        case .networkRecovery: "network recovery"
        }
    }
}
