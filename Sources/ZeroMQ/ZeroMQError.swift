import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure reported by libzmq (or by this wrapper about libzmq), with the errno value and
/// libzmq's own text.
///
/// Conditions that are part of normal operation — a peer at its high-water mark (`EAGAIN`) or an
/// unknown routing id under `ROUTER_MANDATORY` (`EHOSTUNREACH`) — are not errors: sends report
/// them as ``SendOutcome`` values.
public struct ZeroMQError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The errno value libzmq set (for example `EINVAL`, `ETERM`, `EMFILE`).
    public let errno: Int32
    /// What the wrapper was doing, e.g. `"bind tcp://127.0.0.1:5555"`.
    public let operation: String
    /// libzmq's text for `errno`, or the wrapper's own explanation.
    public let message: String

    /// Creates an error from an errno value, taking the text from `zmq_strerror`.
    public init(errno: Int32, operation: String) {
        self.errno = errno
        self.operation = operation
        self.message = String(cString: zmq_strerror(errno))
    }

    /// Creates an error with a message of the wrapper's own.
    public init(errno: Int32, operation: String, message: String) {
        self.errno = errno
        self.operation = operation
        self.message = message
    }

    /// The error for the errno libzmq set on the calling thread.
    static func last(_ operation: @autoclosure () -> String) -> ZeroMQError {
        ZeroMQError(errno: zmq_errno(), operation: operation())
    }

    /// True when the context was terminated (`ETERM`): the socket or loop is shutting down.
    public var isTerminated: Bool { errno == ETERM }

    public var description: String { "\(operation): \(message) (errno \(errno))" }
}
