/// A user's role in one channel connection.
public enum ClientRole: Sendable, Hashable, CustomStringConvertible {
    /// Publishes (within its grant's privileges) and is visible: the others get user-joined and
    /// user-offline events about it.
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
