/// The error every Showroom module throws, and the one that travels in `Envelope.error`.
///
/// A `ShowroomError` is a stable numeric ``code`` (from `proto/showroom/wire/error.proto`, grouped
/// in ranges by area) plus a ``message`` written for a person: what went wrong and what to do about
/// it. Programs decide on the code only; they never parse the message.
///
/// ```swift
/// throw ShowroomError.unavailable("edge-2 is draining; reconnect to another edge")
/// ```
///
/// Converts losslessly to and from the wire type with ``init(wire:)`` and ``wire``, including codes
/// this build does not know yet (`WireErrorCode.UNRECOGNIZED`).
public struct ShowroomError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable, machine-readable error code.
    public var code: WireErrorCode
    /// For people: what went wrong and what to do about it. Never parsed by programs.
    public var message: String
    /// Where to go instead, with ``WireErrorCode/channelElsewhere``; nil otherwise.
    public var redirect: WireRedirect?

    /// Creates an error with the given code and message.
    ///
    /// - Parameters:
    ///   - code: The stable error code; prefer the most specific one for the area.
    ///   - message: What went wrong and what to do about it, for a person to read.
    public init(_ code: WireErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Creates an error from one received on the wire, keeping unknown codes as they are.
    ///
    /// - Parameter wire: The `Error` message taken from an envelope.
    public init(wire: WireError) {
        self.init(wire.code, wire.message)
        if wire.hasRedirect { redirect = wire.redirect }
    }

    /// This error as the wire message that goes into `Envelope.error`.
    public var wire: WireError {
        var error = WireError()
        error.code = code
        error.message = message
        if let redirect { error.redirect = redirect }
        return error
    }

    /// The error in the form `E1000 malformed message: <message>`.
    public var description: String {
        let head = "E\(code.rawValue) \(code.summary)"
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
    public static func channelElsewhere(_ message: String, redirect: WireRedirect) -> ShowroomError {
        var error = ShowroomError(.channelElsewhere, message)
        error.redirect = redirect
        return error
    }
}

extension WireErrorCode {
    /// A short lowercase phrase naming the code, as used in ``ShowroomError/description``
    /// (e.g. "malformed message").
    ///
    /// Codes added to `error.proto` later are named after their Swift case ("channelFull" →
    /// "channel full") until given a phrase here; codes this build does not know at all are
    /// "unrecognized error".
    public var summary: String {
        switch self {
        case .unspecified: return "unspecified error"
        case .malformedMessage: return "malformed message"
        case .unknownKind: return "unknown message kind"
        case .deadlineExceeded: return "deadline exceeded"
        case .unavailable: return "unavailable"
        case .internal: return "internal error"
        case .tooLarge: return "too large"
        case .unsupportedVersion: return "unsupported version"
        case .invalidArgument: return "invalid argument"
        case .tokenMalformed: return "malformed token"
        case .tokenBadSignature: return "bad token signature"
        case .tokenWrongAppID: return "token for another app id"
        case .tokenExpired: return "token expired"
        case .tokenChannelMismatch: return "token for another channel"
        case .tokenUidMismatch: return "token for another uid"
        case .tokenMissingPrivilege: return "token lacks a privilege"
        case .notJoined: return "not joined"
        case .roleForbidsPublish: return "role forbids publish"
        case .privilegeExpired: return "privilege expired"
        case .trackNotPublished: return "track not published"
        case .frameTooLarge: return "frame too large"
        case .tooManyChannels: return "too many channels"
        case .channelFull: return "channel full"
        case .tooManyPublishers: return "too many publishers"
        case .unknownTrack: return "unknown track"
        case .streamMessageTooLarge: return "stream message too large"
        case .streamMessageRateLimited: return "stream message rate limited"
        case .alreadyJoined: return "already joined"
        case .noSession: return "no session"
        case .uidReplaced: return "uid replaced"
        case .sessionTimedOut: return "session timed out"
        case .sessionReplaced: return "session replaced"
        case .banned: return "banned"
        case .permissionDenied: return "permission denied"
        case .channelElsewhere: return "channel placed elsewhere"
        case .channelPrivate: return "private call channel"
        case .forwardTooManyDestinations: return "too many forward destinations"
        case .forwardUpdateTooFrequent: return "forward updates too frequent"
        case .forwardNotStarted: return "forward not started"
        case .forwardAlreadyStarted: return "forward already started"
        case .forwardInvalidDestination: return "invalid forward destination"
        case .forwardDestinationUnreachable: return "forward destination unreachable"
        case .forwardSourceLeft: return "forward source left"
        case .forwardSameUidInDestination: return "same uid in forward destination"
        case .roomNotFound: return "room not found"
        case .notRoomOwner: return "not the room's owner"
        case .chatMessageTooLarge: return "chat message too large"
        case .roomClosed: return "room closed"
        case .roomExists: return "room exists"
        case .noEdgeAvailable: return "no edge available"
        case .adminUnauthorized: return "admin request unauthorized"
        case .noCoordinator: return "no coordinator"
        case .notLoggedIn: return "not logged in"
        case .calleeOffline: return "callee offline"
        case .callerInCall: return "caller in a call"
        case .unknownCall: return "unknown call"
        case .notYourCall: return "not your call"
        case .callStateMismatch: return "call state mismatch"
        case .callEnded: return "call ended"
        case .noCallSignal: return "no call-signal node"
        case .callRateLimited: return "calls too frequent"
        case .UNRECOGNIZED: return "unrecognized error"
        @unknown default:
            // Split the generated camelCase case name into lowercase words.
            var words = ""
            for character in String(describing: self) {
                if character.isUppercase, !words.isEmpty { words.append(" ") }
                words.append(contentsOf: character.lowercased())
            }
            return words
        }
    }
}
