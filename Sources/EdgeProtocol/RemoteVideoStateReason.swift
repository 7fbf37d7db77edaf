/// Why a remote video track's delivery state changed.
public enum RemoteVideoStateReason: Sendable, Hashable, CustomStringConvertible {
    /// The subscriber subscribed (explicitly, by auto-subscribe, or on joining).
    case subscribed
    /// The subscriber unsubscribed.
    case unsubscribed
    /// The subscriber muted the track locally.
    case localMuted
    /// The subscriber unmuted the track.
    case localUnmuted
    /// The publisher stopped publishing the track (or lost the privilege to).
    case remoteMuted
    /// The publisher started publishing the track.
    case remoteUnmuted
    /// The publisher left, dropped or became audience.
    case remoteOffline
    /// The subscriber's queue was full: frames are skipped until the next keyframe.
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
