/// Builds RTC tokens the way the reference `RtcTokenBuilder2` does (`buildTokenWithUid`,
/// `buildTokenWithUserAccount`, `buildTokenWithUidAndPrivilege`), with the same results.
///
/// All expiries are seconds after the issue time. `privilegeExpire` 0 means "as long as the
/// token". Pass `issueTs` and `salt` only to reproduce a token exactly; by default they are now
/// and random, as in the reference.
///
/// ```swift
/// let token = try RTCTokenBuilder.buildToken(
///     appID: appID, appCertificate: certificate, channelName: "room-1", uid: 42,
///     role: .publisher, tokenExpire: 3600, privilegeExpire: 3600)
/// ```
public struct RTCTokenBuilder: Sendable {
    /// Builds a token for a numeric uid (0: any uid); `buildTokenWithUid` in the reference.
    ///
    /// - Parameters:
    ///   - appID: The app id, 32 hex digits.
    ///   - appCertificate: The app certificate, 32 hex digits.
    ///   - channelName: The channel; empty for any channel.
    ///   - uid: The uid; 0 for any uid.
    ///   - role: `.publisher` grants join and publish audio, video and data; `.subscriber` join only.
    ///   - tokenExpire: The token's lifetime in seconds.
    ///   - privilegeExpire: Every granted privilege's lifetime in seconds; 0 for as long as the token.
    ///   - issueTs: The issue time; now if `nil`.
    ///   - salt: The salt; random if `nil`.
    /// - Returns: The token text, "007...".
    /// - Throws: ``TokenError`` `.malformed` if the app id or certificate is not 32 hex digits.
    public static func buildToken(
        appID: String,
        appCertificate: String,
        channelName: String,
        uid: UInt32,
        role: RTCRole,
        tokenExpire: UInt32,
        privilegeExpire: UInt32 = 0,
        issueTs: UInt32? = nil,
        salt: UInt32? = nil
    ) throws(TokenError) -> String {
        let service = RTCService(
            channelName: channelName, uid: uid,
            privileges: Dictionary(uniqueKeysWithValues: role.privileges.map { ($0, privilegeExpire) }))
        return try build(service, appID, appCertificate, tokenExpire, issueTs, salt)
    }

    /// Builds a token for a string user account; `buildTokenWithUserAccount` in the reference.
    ///
    /// - Parameters:
    ///   - appID: The app id, 32 hex digits.
    ///   - appCertificate: The app certificate, 32 hex digits.
    ///   - channelName: The channel; empty for any channel.
    ///   - account: The user account, carried as is; empty for any user.
    ///   - role: `.publisher` grants join and publish audio, video and data; `.subscriber` join only.
    ///   - tokenExpire: The token's lifetime in seconds.
    ///   - privilegeExpire: Every granted privilege's lifetime in seconds; 0 for as long as the token.
    ///   - issueTs: The issue time; now if `nil`.
    ///   - salt: The salt; random if `nil`.
    /// - Returns: The token text, "007...".
    /// - Throws: ``TokenError`` `.malformed` if the app id or certificate is not 32 hex digits.
    public static func buildToken(
        appID: String,
        appCertificate: String,
        channelName: String,
        account: String,
        role: RTCRole,
        tokenExpire: UInt32,
        privilegeExpire: UInt32 = 0,
        issueTs: UInt32? = nil,
        salt: UInt32? = nil
    ) throws(TokenError) -> String {
        let service = RTCService(
            channelName: channelName, account: account,
            privileges: Dictionary(uniqueKeysWithValues: role.privileges.map { ($0, privilegeExpire) }))
        return try build(service, appID, appCertificate, tokenExpire, issueTs, salt)
    }

    /// Builds a token with a lifetime per privilege; `buildTokenWithUidAndPrivilege` in the
    /// reference (all four privileges are written, as there).
    ///
    /// - Parameters:
    ///   - appID: The app id, 32 hex digits.
    ///   - appCertificate: The app certificate, 32 hex digits.
    ///   - channelName: The channel; empty for any channel.
    ///   - uid: The uid; 0 for any uid.
    ///   - tokenExpire: The token's lifetime in seconds.
    ///   - joinChannelPrivilegeExpire: Seconds the join privilege lasts.
    ///   - publishAudioPrivilegeExpire: Seconds the publish-audio privilege lasts.
    ///   - publishVideoPrivilegeExpire: Seconds the publish-video privilege lasts.
    ///   - publishDataStreamPrivilegeExpire: Seconds the publish-data privilege lasts.
    ///   - issueTs: The issue time; now if `nil`.
    ///   - salt: The salt; random if `nil`.
    /// - Returns: The token text, "007...".
    /// - Throws: ``TokenError`` `.malformed` if the app id or certificate is not 32 hex digits.
    public static func buildToken(
        appID: String,
        appCertificate: String,
        channelName: String,
        uid: UInt32,
        tokenExpire: UInt32,
        joinChannelPrivilegeExpire: UInt32,
        publishAudioPrivilegeExpire: UInt32,
        publishVideoPrivilegeExpire: UInt32,
        publishDataStreamPrivilegeExpire: UInt32,
        issueTs: UInt32? = nil,
        salt: UInt32? = nil
    ) throws(TokenError) -> String {
        let service = RTCService(
            channelName: channelName, uid: uid,
            privileges: [
                .joinChannel: joinChannelPrivilegeExpire,
                .publishAudioStream: publishAudioPrivilegeExpire,
                .publishVideoStream: publishVideoPrivilegeExpire,
                .publishDataStream: publishDataStreamPrivilegeExpire,
            ])
        return try build(service, appID, appCertificate, tokenExpire, issueTs, salt)
    }

    private static func build(
        _ service: RTCService, _ appID: String, _ appCertificate: String,
        _ tokenExpire: UInt32, _ issueTs: UInt32?, _ salt: UInt32?
    ) throws(TokenError) -> String {
        let token = AccessToken2(appID: appID, issueTs: issueTs, expire: tokenExpire, salt: salt, services: [.rtc(service)])
        return try token.build(appCertificate: appCertificate)
    }
}
