/// Decides whether a token lets a client in: the app's id and certificate against a token, a
/// channel, a uid and the time.
///
/// Checks run in this order, each with its own ``TokenError/Code``: the text is an AccessToken2
/// token (`.malformed`), for this app (`.wrongAppID`), signed with this app's certificate
/// (`.badSignature`), not expired (`.expired`), for this channel or any (`.channelMismatch`), for
/// this uid or any (`.uidMismatch`), with an unexpired join privilege (`.missingPrivilege`).
///
/// ```swift
/// let verifier = TokenVerifier(appID: config.appID, appCertificate: config.appCertificate)
/// let grant = try verifier.verify(token, channel: "room-1", uid: 42, now: UInt32(time(nil)))
/// ```
///
/// The certificate is kept out of `description` and `dump`, so a verifier can be logged.
public struct TokenVerifier: Sendable, CustomStringConvertible, CustomReflectable {
    /// The app whose tokens this verifier accepts.
    public let appID: String
    private let appCertificate: String

    /// Creates a verifier for one app.
    ///
    /// - Parameters:
    ///   - appID: The app id tokens must carry.
    ///   - appCertificate: The certificate tokens must be signed with.
    public init(appID: String, appCertificate: String) {
        self.appID = appID
        self.appCertificate = appCertificate
    }

    /// Verifies an RTC token for joining `channel` as `uid` at `now`.
    ///
    /// If the token has several RTC services, the first that covers the channel and uid and
    /// still grants join is used.
    ///
    /// - Parameters:
    ///   - token: The token text, "007...".
    ///   - channel: The channel the client joins.
    ///   - uid: The uid the client joins as.
    ///   - now: The current Unix time in seconds.
    /// - Returns: What the token allows, and until when.
    /// - Throws: ``TokenError`` with the first failed check's code.
    public func verify(_ token: String, channel: String, uid: UInt32, now: UInt32) throws(TokenError) -> TokenGrant {
        let parsed = try checkedToken(token, now: now)
        let services = parsed.rtcServices
        guard !services.isEmpty else {
            throw TokenError(
                .missingPrivilege,
                "it has no RTC service, so it grants no channel join (is it a signaling-only token?); "
                    + "build it with an RTC token builder")
        }
        let inChannel = services.filter { $0.covers(channel: channel) }
        guard !inChannel.isEmpty else {
            let names = services.map { "'\($0.channelName)'" }.joined(separator: ", ")
            throw TokenError(
                .channelMismatch,
                "it is for channel \(names), not '\(channel)'; request a token for '\(channel)' "
                    + "(or a wildcard token with an empty channel name)")
        }
        let account = String(uid)
        let forUser = inChannel.filter { $0.covers(account: account) }
        guard !forUser.isEmpty else {
            let uids = inChannel.map { "'\($0.uid)'" }.joined(separator: ", ")
            throw TokenError(
                .uidMismatch,
                "in channel '\(channel)' it is for uid \(uids), not \(uid); request a token for uid \(uid) "
                    + "(or one built with uid 0, valid for any uid)")
        }
        let grants = forUser.map {
            TokenGrant(
                service: $0, issuedAt: parsed.issueTs, tokenExpiresAt: parsed.expiresAt,
                channel: channel, uid: uid, now: now)
        }
        if let grant = grants.first(where: { $0.allows(.joinChannel, at: now) }) {
            return grant
        }
        if let expired = grants.compactMap({ $0.expiresAt(.joinChannel) }).max() {
            throw TokenError(
                .missingPrivilege,
                "its join-channel privilege expired at \(expired), \(now - expired) s ago (the token itself "
                    + "is valid until \(parsed.expiresAt)); fetch a new token and renew it")
        }
        throw TokenError(
            .missingPrivilege,
            "it grants no join-channel privilege for '\(channel)'; build it with the joinChannel privilege "
                + "(every RTC role has it)")
    }

    /// Verifies an RTM (signaling) login token for `userID` at `now`.
    ///
    /// - Parameters:
    ///   - token: The token text, "007...".
    ///   - userID: The user id logging in.
    ///   - now: The current Unix time in seconds.
    /// - Returns: Unix time at which the login privilege (capped by the token) expires.
    /// - Throws: ``TokenError``: `.uidMismatch` for another user id, `.missingPrivilege` without
    ///   an unexpired login privilege, and the common checks' codes.
    public func verifyLogin(_ token: String, userID: String, now: UInt32) throws(TokenError) -> UInt32 {
        let parsed = try checkedToken(token, now: now)
        let services = parsed.rtmServices
        guard !services.isEmpty else {
            throw TokenError(
                .missingPrivilege, "it has no RTM service, so it grants no signaling login; build it with an RTM token builder")
        }
        let forUser = services.filter { $0.userID == userID }
        guard !forUser.isEmpty else {
            let users = services.map { "'\($0.userID)'" }.joined(separator: ", ")
            throw TokenError(.uidMismatch, "it is for user id \(users), not '\(userID)'; request a token for '\(userID)'")
        }
        let expiries = forUser.compactMap { service -> UInt32? in
            guard let expire = service[.login] else { return nil }
            return expire == 0 ? parsed.expiresAt : min(AccessToken2.offset(parsed.issueTs, by: expire), parsed.expiresAt)
        }
        if let valid = expiries.filter({ now < $0 }).max() {
            return valid
        }
        if let expired = expiries.max() {
            throw TokenError(
                .missingPrivilege,
                "its login privilege expired at \(expired), \(now - expired) s ago; fetch a new token and renew it")
        }
        throw TokenError(.missingPrivilege, "it grants no login privilege for '\(userID)'")
    }

    /// The checks every service shares: format, app id, signature, token lifetime.
    private func checkedToken(_ token: String, now: UInt32) throws(TokenError) -> AccessToken2 {
        let parsed = try AccessToken2.parse(token)
        // The app id is public, so naming both is safe and tells the operator which config is off.
        guard parsed.appID == appID else {
            throw TokenError(
                .wrongAppID,
                "it was issued for app id '\(parsed.appID)', but this cluster serves app id '\(appID)'; "
                    + "build tokens with this cluster's app id and certificate")
        }
        guard parsed.verifySignature(appCertificate: appCertificate) else {
            throw TokenError(
                .badSignature,
                "its signature does not match app \(appID)'s certificate: it was signed with another "
                    + "certificate or altered after signing; build it with the app's current certificate")
        }
        let expiresAt = parsed.expiresAt
        guard now < expiresAt else {
            throw TokenError(
                .expired,
                "it expired at \(expiresAt) (issued at \(parsed.issueTs), valid \(parsed.expire) s), "
                    + "\(now - expiresAt) s ago; fetch a new token and renew it")
        }
        return parsed
    }

    /// The verifier without its certificate.
    public var description: String {
        "TokenVerifier(appID: \(appID), appCertificate: <redacted>)"
    }

    /// Keeps the certificate out of `dump` and debugger views.
    public var customMirror: Mirror {
        Mirror(self, children: ["appID": appID, "appCertificate": "<redacted>"])
    }
}
