/// Why a visible user (a broadcaster) went offline, as the others are told.
public enum UserOfflineReason: Sendable, Hashable, CustomStringConvertible {
    /// It left the channel or closed its session.
    case quit
    /// It vanished: heartbeat timeout, unreachable, join privilege expired, or replaced by the
    /// same uid from another session.
    case dropped
    /// It switched to audience and is now invisible.
    case becameAudience
    /// It was a broadcaster of another channel forwarded into this one, and the forward stopped.
    case forwardStopped

    /// `quit`, `dropped`, `became audience` or `forward stopped`.
    public var description: String {
        switch self {
        case .quit: "quit"
        case .dropped: "dropped"
        case .becameAudience: "became audience"
        case .forwardStopped: "forward stopped"
        }
    }
}
