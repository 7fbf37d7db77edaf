/// A member's node id: unique in the cluster and stable across restarts of the same node, so a
/// restarted process is recognised as the same member (and must out-number its old incarnation).
public struct MemberID: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The node id as configured, e.g. `edge-1`.
    public let rawValue: String

    /// Creates an id from the configured node id.
    ///
    /// - Parameter rawValue: The node id, e.g. `edge-1`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates an id from a string literal (handy in tests and configuration defaults).
    ///
    /// - Parameter value: The node id.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// Orders ids by their raw string, which is how ``Membership/members`` is sorted.
    public static func < (lhs: MemberID, rhs: MemberID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The raw node id.
    public var description: String { rawValue }
}
