/// A line for the shell's logger (``EdgeDirective/log(_:)``): unusual things worth a trace, never
/// per frame.
public struct EdgeLogEntry: Sendable, Hashable, CustomStringConvertible {
    /// Severity, in the order of swift-log's levels.
    public enum Level: Sendable, Hashable, Comparable {
        /// Detail for debugging.
        case debug
        /// Normal but notable (a join, a leave).
        case info
        /// Worth attention (a session timed out, a privilege expired).
        case notice
        /// Something went wrong on the client's side (a refused frame).
        case warning
    }

    /// Severity.
    public var level: Level
    /// The text.
    public var message: String

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - level: Severity.
    ///   - message: The text.
    public init(_ level: Level, _ message: String) {
        self.level = level
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
