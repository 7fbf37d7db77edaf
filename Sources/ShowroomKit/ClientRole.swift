/// A user's role in one channel connection (`CLIENT_ROLE_BROADCASTER` / `CLIENT_ROLE_AUDIENCE` in
/// the seeds).
public enum ClientRole: Sendable, Hashable, CustomStringConvertible {
    /// Publishes (within its token's privileges) and is visible: the others get
    /// ``EngineEvent/userJoined(_:uid:)`` and ``EngineEvent/userOffline(_:uid:reason:)`` about it.
    case broadcaster
    /// Subscribes only, and is invisible: nobody hears of it joining or leaving.
    case audience

    /// `broadcaster` or `audience`.
    public var description: String {
        switch self {
        case .broadcaster: "broadcaster"
        case .audience: "audience"
        }
    }
}
