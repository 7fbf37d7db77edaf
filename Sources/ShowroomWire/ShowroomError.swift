/// The error every Showroom module throws, and the one that travels in `Envelope.error`.
///
/// A `ShowroomError` is a stable numeric ``code`` (grouped in ranges by area, see ``Code``) plus a
/// ``message`` written for a person: what went wrong and what to do about it. Programs decide on
/// the code only; they never parse the message.
///
/// ```swift
/// do {
///     try await engine.joinChannel(token: token, channel: "room-1", uid: 42, options: options)
/// } catch let error as ShowroomError where error.code == .tokenExpired {
///     // fetch a new token and join again
/// }
/// ```
public struct ShowroomError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code's number as it travelled: `code.rawValue`, or for a code this build does not
    /// know (``Code/unrecognized``) the number received.
    public internal(set) var number: Int
    /// For people: what went wrong and what to do about it. Never parsed by programs.
    public var message: String
    /// Where to go instead, with ``Code/channelElsewhere``; nil otherwise. Only the SDK follows it.
    package var redirect: WireRedirect?

    /// The stable, machine-readable error code (``Code/unrecognized`` for one this build does not
    /// know).
    public var code: Code {
        get { Code(rawValue: number) ?? .unrecognized }
        set { number = newValue.rawValue }
    }

    /// Creates an error with the given code and message.
    ///
    /// - Parameters:
    ///   - code: The stable error code; prefer the most specific one for the area.
    ///   - message: What went wrong and what to do about it, for a person to read.
    public init(_ code: Code, _ message: String) {
        number = code.rawValue
        self.message = message
    }

    /// The error in the form `E1000 malformed message: <message>`.
    public var description: String {
        let head = "E\(number) \(code.summary)"
        return message.isEmpty ? head : "\(head): \(message)"
    }
}

// MARK: - General codes (1000 – 1999)

extension ShowroomError {
    /// The message could not be decoded (not protobuf, wrong frame count, missing fields).
    ///
    /// - Parameter message: Which message was malformed and how.
    /// - Returns: An error with code `ERROR_CODE_MALFORMED_MESSAGE` (1000).
    public static func malformed(_ message: String) -> ShowroomError {
        ShowroomError(.malformedMessage, message)
    }

    /// The receiver does not handle this message kind.
    ///
    /// - Parameter message: Which kind was received and by whom.
    /// - Returns: An error with code `ERROR_CODE_UNKNOWN_KIND` (1001).
    public static func unknownKind(_ message: String) -> ShowroomError {
        ShowroomError(.unknownKind, message)
    }

    /// The answer did not arrive within the request's deadline.
    ///
    /// - Parameter message: Which request timed out, after how long, and waiting for whom.
    /// - Returns: An error with code `ERROR_CODE_DEADLINE_EXCEEDED` (1002).
    public static func deadlineExceeded(_ message: String) -> ShowroomError {
        ShowroomError(.deadlineExceeded, message)
    }

    /// The receiver cannot serve now (shutting down, draining, overloaded); retry elsewhere or later.
    ///
    /// - Parameter message: Why the receiver is unavailable and where or when to retry.
    /// - Returns: An error with code `ERROR_CODE_UNAVAILABLE` (1003).
    public static func unavailable(_ message: String) -> ShowroomError {
        ShowroomError(.unavailable, message)
    }

    /// A bug or an unexpected failure inside the receiver.
    ///
    /// - Parameter message: What failed, with enough context to find it in the logs.
    /// - Returns: An error with code `ERROR_CODE_INTERNAL` (1004).
    public static func `internal`(_ message: String) -> ShowroomError {
        ShowroomError(.internal, message)
    }

    /// A message or frame is larger than the receiver accepts.
    ///
    /// - Parameter message: What was too large, its size, and the limit.
    /// - Returns: An error with code `ERROR_CODE_TOO_LARGE` (1005).
    public static func tooLarge(_ message: String) -> ShowroomError {
        ShowroomError(.tooLarge, message)
    }

    /// The sender speaks a protocol version the receiver does not support.
    ///
    /// - Parameter message: The version received and the versions supported.
    /// - Returns: An error with code `ERROR_CODE_UNSUPPORTED_VERSION` (1006).
    public static func unsupportedVersion(_ message: String) -> ShowroomError {
        ShowroomError(.unsupportedVersion, message)
    }

    /// A request field has a value outside what is allowed.
    ///
    /// - Parameter message: Which field, the value received, and what is allowed.
    /// - Returns: An error with code `ERROR_CODE_INVALID_ARGUMENT` (1007).
    public static func invalidArgument(_ message: String) -> ShowroomError {
        ShowroomError(.invalidArgument, message)
    }

    /// An internal (cluster) message kind arrived on a client endpoint, or from a peer that is not
    /// an authenticated cluster member; nothing was done.
    ///
    /// - Parameter message: Which kind was refused and where such requests go.
    /// - Returns: An error with code `ERROR_CODE_PERMISSION_DENIED` (1008).
    public static func permissionDenied(_ message: String) -> ShowroomError {
        ShowroomError(.permissionDenied, message)
    }

    /// The channel is placed on another edge; nothing was joined.
    ///
    /// - Parameters:
    ///   - message: Which channel, and where it is.
    ///   - redirect: The edge to join instead.
    /// - Returns: An error with code `ERROR_CODE_CHANNEL_ELSEWHERE` (3017) carrying `redirect`.
    package static func channelElsewhere(_ message: String, redirect: WireRedirect) -> ShowroomError {
        var error = ShowroomError(.channelElsewhere, message)
        error.redirect = redirect
        return error
    }
}
