import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An AccessToken2 token, the "007..." format of Agora's token builders: build one, read one, and
/// check its signature.
///
/// Encoded form: `"007" + base64(zlib(signature + content))`, where content is the app id, issue
/// time, expire, salt and the services, and signature is
/// `HMAC-SHA256(key: HMAC-SHA256(key: salt, HMAC-SHA256(key: issueTs, appCertificate)), content)`
/// (integers as 4 little-endian bytes). Tokens built here with the same fields are byte-identical
/// to the reference builders', so business servers keep the builders they have.
///
/// ```swift
/// var token = AccessToken2(appID: appID, expire: 3600)
/// token.addService(.rtc(RTCService(channelName: "room-1", uid: 42, privileges: [.joinChannel: 3600])))
/// let text = try token.build(appCertificate: certificate)
/// ```
///
/// The app certificate is never stored in the value: it is passed to ``build(appCertificate:)``
/// and ``verifySignature(appCertificate:)`` only, so a token can be logged or printed safely.
/// To decide whether a client may join, use ``TokenVerifier``.
public struct AccessToken2: Sendable, Equatable {
    /// The version prefix of every AccessToken2 token.
    public static let version = "007"

    /// Longer token texts are refused before decoding: real ones are a few hundred characters.
    public static let maxTokenLength = 16 * 1024

    /// The app the token is for.
    public private(set) var appID: String
    /// Unix time (seconds) at which the token was issued; expiries count from it.
    public private(set) var issueTs: UInt32
    /// The token's lifetime in seconds after ``issueTs``.
    public private(set) var expire: UInt32
    /// A random number that makes two tokens with the same fields differ.
    public private(set) var salt: UInt32
    /// The services, in the order they are (or were) written.
    public private(set) var services: [AccessTokenService]
    /// The signature read by ``parse(_:)``; empty for a token that was not parsed (or was changed
    /// since).
    public private(set) var signature: [UInt8] = []
    /// The exact bytes the parsed signature covers: verifying these, rather than a re-encoding,
    /// keeps tokens with unknown services or another writer's ordering verifiable.
    private var signedContent: [UInt8] = []

    /// Creates an unsigned token.
    ///
    /// - Parameters:
    ///   - appID: The app id (32 hex digits to be buildable).
    ///   - issueTs: Unix time of issue; now unless given (give it for reproducible tokens).
    ///   - expire: Lifetime in seconds after `issueTs`.
    ///   - salt: A random number in 1 ... 99 999 999 unless given, as the reference builders draw it.
    ///   - services: The services; more can be added with ``addService(_:)``.
    public init(
        appID: String,
        issueTs: UInt32? = nil,
        expire: UInt32,
        salt: UInt32? = nil,
        services: [AccessTokenService] = []
    ) {
        self.appID = appID
        self.issueTs = issueTs ?? Self.now()
        self.expire = expire
        self.salt = salt ?? UInt32.random(in: 1...99_999_999)
        self.services = services
    }

    /// Adds a service. Several services of the same type are allowed (e.g. RTC for two channels).
    ///
    /// Changing a parsed token drops its signature: the new content is unsigned until built.
    ///
    /// - Parameter service: The service to add.
    public mutating func addService(_ service: AccessTokenService) {
        services.append(service)
        signature = []
        signedContent = []
    }

    /// Unix time at which the token stops being valid: ``issueTs`` + ``expire`` (capped at
    /// `UInt32.max`).
    public var expiresAt: UInt32 {
        Self.offset(issueTs, by: expire)
    }

    /// The RTC services, in token order.
    public var rtcServices: [RTCService] {
        services.compactMap { if case .rtc(let service) = $0 { service } else { nil } }
    }

    /// The RTM services, in token order.
    public var rtmServices: [RTMService] {
        services.compactMap { if case .rtm(let service) = $0 { service } else { nil } }
    }

    /// Signs the token and encodes it as "007...".
    ///
    /// Services are written ordered by type (stable), as the reference builders do.
    ///
    /// - Parameter appCertificate: The app certificate (32 hex digits) the verifier also holds.
    /// - Returns: The token text.
    /// - Throws: ``TokenError`` `.malformed` if the app id or certificate is not 32 hex digits (the
    ///   reference builders refuse those too), if there is no service, or if a field is too long.
    public func build(appCertificate: String) throws(TokenError) -> String {
        guard Self.isHex32(appID) else {
            throw TokenError(
                .malformed,
                "cannot build the token: the app id must be 32 hexadecimal digits, got \(appID.utf8.count) characters")
        }
        guard Self.isHex32(appCertificate) else {
            throw TokenError(
                .malformed,
                "cannot build the token: the app certificate must be 32 hexadecimal digits (check the configured certificate)")
        }
        guard !services.isEmpty else {
            throw TokenError(.malformed, "cannot build the token: it has no service; add an RTC or RTM service")
        }
        let content = try encodedContent()
        let signature = Self.sign(content, appCertificate: appCertificate, issueTs: issueTs, salt: salt)
        var body = ByteWriter()
        try body.blob(signature, "the signature")
        body.append(content)
        return Self.version + Data(Zlib.deflate(body.bytes)).base64EncodedString()
    }

    /// Reads a token's fields. Needs no certificate and checks no signature: see
    /// ``verifySignature(appCertificate:)`` and ``TokenVerifier``.
    ///
    /// - Parameter token: The token text, "007...".
    /// - Returns: The token with its fields, ``signature`` and the bytes it covers.
    /// - Throws: ``TokenError`` `.malformed` if the text is not an AccessToken2 token.
    public static func parse(_ token: String) throws(TokenError) -> AccessToken2 {
        guard token.utf8.count <= maxTokenLength else {
            throw TokenError(
                .malformed, "it is \(token.utf8.count) characters long, more than \(maxTokenLength)")
        }
        guard token.hasPrefix(version) else {
            let prefix = String(token.prefix(3))
            let hint =
                prefix == "006"
                ? "it is an AccessToken (\"006\"), the previous format, which is not accepted; build an AccessToken2 token"
                : "it starts with \"\(prefix.filter { $0.isASCII && !$0.isNewline })\"; expected \"007\""
            throw TokenError(.malformed, "not an AccessToken2 token: \(hint)")
        }
        guard let compressed = Data(base64Encoded: String(token.dropFirst(version.count))), !compressed.isEmpty else {
            throw TokenError(
                .malformed, "the text after \"007\" is not base64 (was it cut, or changed in transit?)")
        }
        var reader = ByteReader(try Zlib.inflate(Array(compressed)))
        let signature = try reader.blob("the signature")
        let signedContent = reader.rest()

        var content = ByteReader(signedContent)
        let appID = try content.string("the app id")
        let issueTs = try content.uint32("the issue time")
        let expire = try content.uint32("the expire")
        let salt = try content.uint32("the salt")
        let count = try content.uint16("the number of services")
        var services: [AccessTokenService] = []
        for _ in 0..<count {
            let type = try content.uint16("a service type")
            switch type {
            case RTCService.serviceType:
                services.append(.rtc(try RTCService.unpack(from: &content)))
            case RTMService.serviceType:
                services.append(.rtm(try RTMService.unpack(from: &content)))
            default:
                // Its length is unknown, so nothing after it can be told apart.
                services.append(.other(type: type, payload: content.rest()))
            }
            if case .other = services.last { break }
        }
        if content.remaining > 0 {
            throw TokenError(
                .malformed, "\(content.remaining) unexpected bytes follow its \(count) services")
        }

        var parsed = AccessToken2(appID: appID, issueTs: issueTs, expire: expire, salt: salt, services: services)
        parsed.signature = signature
        parsed.signedContent = signedContent
        return parsed
    }

    /// Whether the parsed token was signed with `appCertificate` and not altered since.
    ///
    /// Compares in constant time. Only meaningful for a token from ``parse(_:)``: a token built
    /// in memory has no signature yet, and this returns `false`.
    ///
    /// - Parameter appCertificate: The app certificate the token should have been signed with.
    /// - Returns: `true` if the signature matches.
    public func verifySignature(appCertificate: String) -> Bool {
        guard !signature.isEmpty else { return false }
        let key = Self.signingKey(appCertificate: appCertificate, issueTs: issueTs, salt: salt)
        return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signedContent, using: key)
    }

    /// Equal when the fields and the ``signature`` are equal (a parsed token carries the
    /// signature it was read with; one built in memory has none).
    public static func == (lhs: AccessToken2, rhs: AccessToken2) -> Bool {
        lhs.appID == rhs.appID && lhs.issueTs == rhs.issueTs && lhs.expire == rhs.expire && lhs.salt == rhs.salt
            && lhs.services == rhs.services && lhs.signature == rhs.signature
    }

    // MARK: - Internals

    /// The current Unix time in seconds, as the reference builders take it for the issue time.
    static func now() -> UInt32 {
        UInt32(clamping: Int64(Date().timeIntervalSince1970))
    }

    /// `base + seconds`, saturating: a far expiry must not wrap into the past.
    static func offset(_ base: UInt32, by seconds: UInt32) -> UInt32 {
        let (sum, overflow) = base.addingReportingOverflow(seconds)
        return overflow ? .max : sum
    }

    private func encodedContent() throws(TokenError) -> [UInt8] {
        guard let count = UInt16(exactly: services.count) else {
            throw TokenError(.malformed, "cannot build the token: \(services.count) services, the format allows at most 65535")
        }
        var writer = ByteWriter()
        try writer.string(appID, "the app id")
        writer.uint32(issueTs)
        writer.uint32(expire)
        writer.uint32(salt)
        writer.uint16(count)
        // Stable by type: the reference builders sort services by type and keep the order of
        // services of the same type.
        let ordered = services.enumerated().sorted { ($0.element.type, $0.offset) < ($1.element.type, $1.offset) }
        for (_, service) in ordered {
            try service.pack(into: &writer)
        }
        return writer.bytes
    }

    private static func sign(_ content: [UInt8], appCertificate: String, issueTs: UInt32, salt: UInt32) -> [UInt8] {
        let key = signingKey(appCertificate: appCertificate, issueTs: issueTs, salt: salt)
        return Array(HMAC<SHA256>.authenticationCode(for: content, using: key))
    }

    /// HMAC(key: salt, HMAC(key: issueTs, certificate)): a key per token, so a signature says
    /// nothing about the certificate's other tokens.
    private static func signingKey(appCertificate: String, issueTs: UInt32, salt: UInt32) -> SymmetricKey {
        let first = HMAC<SHA256>.authenticationCode(
            for: Array(appCertificate.utf8), using: SymmetricKey(data: littleEndian(issueTs)))
        let second = HMAC<SHA256>.authenticationCode(for: Array(first), using: SymmetricKey(data: littleEndian(salt)))
        return SymmetricKey(data: Array(second))
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        var writer = ByteWriter()
        writer.uint32(value)
        return writer.bytes
    }

    private static func isHex32(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { $0.isASCIIHexDigit }
    }
}

extension UInt8 {
    fileprivate var isASCIIHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
