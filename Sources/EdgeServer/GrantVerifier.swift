import Edge
import ShowroomAuth
import ShowroomWire

/// What a join's AccessToken2 token grants, as the plane takes it: the token verified against
/// the app, wildcard tokens refused in a 1v1 call's private channel, and the privileges' expiries
/// placed on the plane's clock. A relay mints its links' tokens with the same app
/// (``relayLinkToken(channel:uid:unixNow:random:)``).
struct GrantVerifier {
    private let verifier: TokenVerifier
    private let appID: String
    private let appCertificate: String
    /// How long a relay link's token lasts; the origin ends the link's connection when it
    /// expires, and the relay claims and links again with a fresh one.
    static let relayLinkTokenLifetime: UInt32 = 24 * 3600

    /// Verifies the tokens of the app `appID`, signed with `appCertificate`.
    init(appID: String, appCertificate: String) {
        verifier = TokenVerifier(appID: appID, appCertificate: appCertificate)
        self.appID = appID
        self.appCertificate = appCertificate
    }

    /// The token a relay link joins `channel` on its origin edge with as `uid`: a subscriber's,
    /// issued at `unixNow` (seconds) for ``relayLinkTokenLifetime``, salted from `random`.
    func relayLinkToken(channel: String, uid: UInt32, unixNow: UInt32, random: UInt64) throws(TokenError) -> String {
        try RTCTokenBuilder.buildToken(
            appID: appID, appCertificate: appCertificate, channelName: channel, uid: uid, role: .subscriber,
            tokenExpire: Self.relayLinkTokenLifetime, issueTs: unixNow, salt: UInt32(random % 99_999_999) + 1)
    }

    /// The grant of `token` for `uid` in `channel` at `unixNow` (seconds), its expiries on the
    /// plane's clock at `now`; the token's failure otherwise.
    func grant(_ token: String, channel: String, uid: UInt32, unixNow: UInt32, now: Duration) -> Result<ChannelGrant, ShowroomError> {
        do {
            let grant = try verifier.verify(token, channel: channel, uid: uid, now: unixNow)
            if Names.isCallChannel(channel), grant.isWildcardChannel || grant.isWildcardUid {
                return .failure(ShowroomError(.channelPrivate,
                    "'\(channel)' is a 1v1 call's private channel: only the token its call gave each party (bound to this channel and uid) joins it, not a wildcard token"))
            }
            var expiries: [Privilege: UInt32] = [:]
            for privilege in RTCPrivilege.allCases {
                if let expiry = grant.expiresAt(privilege) { expiries[Self.privilege(privilege)] = expiry }
            }
            return .success(ChannelGrant(
                channel: grant.isWildcardChannel ? "" : grant.channel, uid: grant.isWildcardUid ? 0 : grant.uid,
                tokenExpiresAt: grant.tokenExpiresAt, privilegeExpiries: expiries, unixNow: unixNow, now: now))
        } catch {
            return .failure(error.showroomError)
        }
    }

    private static func privilege(_ privilege: RTCPrivilege) -> Privilege {
        switch privilege {
        case .joinChannel: .join
        case .publishAudioStream: .publishAudio
        case .publishVideoStream: .publishVideo
        case .publishDataStream: .publishData
        }
    }
}
