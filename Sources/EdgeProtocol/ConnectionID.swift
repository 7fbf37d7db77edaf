/// The edge's id for one channel connection (a session's membership in one channel), unique for
/// the edge's lifetime; for logs, the join response and the status tool.
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The value, counting from 1 in join order.
    public let rawValue: UInt64

    /// Creates an id.
    ///
    /// - Parameter rawValue: The value.
    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Orders ids by value, i.e. by join order.
    public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// `c` followed by the value.
    public var description: String { "c\(rawValue)" }
}
