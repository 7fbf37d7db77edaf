/// Builds RTM (signaling login) tokens the way the reference `RtmTokenBuilder2.buildToken` does:
/// one RTM service whose login privilege lasts as long as the token.
public struct RTMTokenBuilder: Sendable {
    /// Builds a login token for `userID`.
    ///
    /// - Parameters:
    ///   - appID: The app id, 32 hex digits.
    ///   - appCertificate: The app certificate, 32 hex digits.
    ///   - userID: The user id that may log in.
    ///   - expire: The token's (and the login privilege's) lifetime in seconds.
    ///   - issueTs: The issue time; now if `nil`.
    ///   - salt: The salt; random if `nil`.
    /// - Returns: The token text, "007...".
    /// - Throws: ``TokenError`` `.malformed` if the app id or certificate is not 32 hex digits.
    public static func buildToken(
        appID: String,
        appCertificate: String,
        userID: String,
        expire: UInt32,
        issueTs: UInt32? = nil,
        salt: UInt32? = nil
    ) throws(TokenError) -> String {
        let service = RTMService(userID: userID, privileges: [.login: expire])
        let token = AccessToken2(appID: appID, issueTs: issueTs, expire: expire, salt: salt, services: [.rtm(service)])
        return try token.build(appCertificate: appCertificate)
    }
}
