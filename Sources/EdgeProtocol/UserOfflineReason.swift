/// Why a visible user (a broadcaster) went offline, as the others are told.
public enum UserOfflineReason: Sendable, Hashable, CustomStringConvertible {
    /// It left the channel or closed its session.
    case quit
    /// It vanished: heartbeat timeout, unreachable, join privilege expired, or replaced by the
    /// same uid from another session.
    case dropped
    /// It switched to audience and is now invisible.
    case becameAudience

    /// `quit`, `dropped` or `became audience`.
    public var description: String {
        switch self {
        case .quit: "quit"
        case .dropped: "dropped"
        case .becameAudience: "became audience"
        }
    }
}
