import ShowroomWire

/// What a server holds of the app's secrets (its id and certificate, either of which may be left
/// unconfigured) and the checks it makes with them of what requests carry: admin signatures and
/// users' tokens. Pure: the time is passed in.
public struct RequestCredentials: Sendable {
    /// The app id tokens are minted for; nil when not configured.
    public var appID: String?
    /// The app certificate tokens and admin signatures are made with; nil when not configured.
    public var appCertificate: String?
    /// Who checks, as refusals name it ("coordinator n1").
    public var checker: String

    /// Checks made by `checker` with `appID` and `appCertificate`.
    public init(appID: String?, appCertificate: String?, checker: String) {
        self.appID = appID
        self.appCertificate = appCertificate
        self.checker = checker
    }

    /// Checks an admin request's signature against the app certificate (``AdminSigner/verify(_:action:target:uid:nowMs:appCertificate:)``).
    ///
    /// - Throws: `ADMIN_UNAUTHORIZED` when no certificate is configured, or the signature does not hold.
    public func verifyAdmin(_ signature: RoomAdminSignature, action: String, target: String, uid: UInt32,
                            nowMs: Int64) throws(ShowroomError) {
        guard let appCertificate else {
            throw ShowroomError(.adminUnauthorized,
                                "\(checker) has no app certificate configured, so it accepts no admin request; set appCertificate")
        }
        try AdminSigner.verify(signature, action: action, target: target, uid: uid, nowMs: nowMs, appCertificate: appCertificate)
    }

    /// Checks that `token` is `uid`'s token for `channel` with the join privilege, valid at `nowMs`.
    ///
    /// - Parameters:
    ///   - needed: What needs the token, as a refusal says it ("PK and co-host requests carry",
    ///     "placements need").
    ///   - missing: The refusal's message for an empty token.
    /// - Throws: `UNAVAILABLE` when no app id and certificate are configured (nothing can be
    ///   checked), `TOKEN_MALFORMED` for an empty token, the token's own refusal otherwise.
    public func verifyToken(_ token: String, channel: String, uid: UInt32, nowMs: Int64, needed: String,
                            missing: String) throws(ShowroomError) {
        guard let appID, let appCertificate else {
            throw .unavailable(
                "\(checker) has no app id and certificate configured, so it cannot check the tokens \(needed); set appID and appCertificate")
        }
        guard !token.isEmpty else { throw ShowroomError(.tokenMalformed, missing) }
        do {
            _ = try TokenVerifier(appID: appID, appCertificate: appCertificate)
                .verify(token, channel: channel, uid: uid, now: UInt32(clamping: nowMs / 1000))
        } catch {
            throw error.showroomError
        }
    }
}
