import ShowroomWire

/// Why a token was refused or could not be built: a stable ``code`` plus a ``message`` a person
/// can act on.
///
/// Every code is one of the `ERROR_CODE_TOKEN_*` values (2001 – 2007) of
/// `proto/showroom/wire/error.proto`, so an edge can send the refusal as it is:
///
/// ```swift
/// do {
///     grant = try verifier.verify(token, channel: "room-1", uid: 42, now: now)
/// } catch {
///     reply(ShowroomError(error))   // E2004 token expired: ...
/// }
/// ```
///
/// Messages never contain the app certificate.
public struct TokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable reason, backed by the wire's `WireErrorCode`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The wire code this reason travels as.
        public let wire: WireErrorCode

        /// The number of the wire code (2001 – 2007 for the reasons below).
        public var rawValue: Int { wire.rawValue }

        private init(_ wire: WireErrorCode) {
            self.wire = wire
        }

        /// The token reason a received wire code stands for, or `nil` if it is not a token code.
        ///
        /// - Parameter wire: A code taken from a received error, e.g. by a client SDK.
        public init?(wire: WireErrorCode) {
            guard let code = Code.all.first(where: { $0.wire == wire }) else { return nil }
            self = code
        }

        /// Not an AccessToken2 token: no "007" prefix (e.g. an "006" token), not base64, not zlib,
        /// cut short, or fields that do not fit the format. Also thrown when a token cannot be
        /// built from the given values. Wire code 2001.
        public static let malformed = Code(.tokenMalformed)
        /// The signature does not match the app certificate: signed with another certificate or
        /// altered. Wire code 2002.
        public static let badSignature = Code(.tokenBadSignature)
        /// Issued for another app id. Wire code 2003.
        public static let wrongAppID = Code(.tokenWrongAppID)
        /// The token's lifetime (issue time + expire) has passed. Wire code 2004.
        public static let expired = Code(.tokenExpired)
        /// For another channel, and not a wildcard-channel token. Wire code 2005.
        public static let channelMismatch = Code(.tokenChannelMismatch)
        /// For another uid (or RTM user id), and not an any-uid token. Wire code 2006.
        public static let uidMismatch = Code(.tokenUidMismatch)
        /// The privilege an action needs (join channel, RTM login, publish ...) is absent or has
        /// expired. Wire code 2007.
        public static let missingPrivilege = Code(.tokenMissingPrivilege)

        /// Every reason, in wire-code order.
        public static let all: [Code] = [
            .malformed, .badSignature, .wrongAppID, .expired, .channelMismatch, .uidMismatch, .missingPrivilege,
        ]

        /// The reason's stable name, as the static member is called (e.g. "badSignature"): for
        /// JSON output and logs.
        public var name: String {
            switch wire {
            case .tokenMalformed: return "malformed"
            case .tokenBadSignature: return "badSignature"
            case .tokenWrongAppID: return "wrongAppID"
            case .tokenExpired: return "expired"
            case .tokenChannelMismatch: return "channelMismatch"
            case .tokenUidMismatch: return "uidMismatch"
            case .tokenMissingPrivilege: return "missingPrivilege"
            default: return "code\(rawValue)"
            }
        }

        /// A short lowercase phrase, e.g. "token expired": the code's summary.
        public var description: String { ShowroomError.Code(wire: wire).summary }
    }

    /// Why the token was refused.
    public var code: Code
    /// For people: what was wrong with the token and what to do about it. Never parsed by programs.
    public var message: String

    /// Creates an error with the given reason and message.
    ///
    /// - Parameters:
    ///   - code: Why the token was refused.
    ///   - message: What was wrong and what to do about it; never include the app certificate.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code to put on the wire.
    public var wireCode: WireErrorCode { code.wire }

    /// This error as the ``ShowroomError`` that travels in `Envelope.error`.
    public var showroomError: ShowroomError { ShowroomError(.init(wire: code.wire), message) }

    /// The error in the form `E2004 token expired: <message>`.
    public var description: String {
        "E\(code.rawValue) \(code): \(message)"
    }
}
