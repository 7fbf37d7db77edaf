import Foundation
import ShowroomAuth

/// The app every test runs as: the in-process edges and the kit's clusters are given its id and
/// certificate, and tests mint its tokens here. For tests only.
public enum TestApp {
    /// The test app's id.
    public static let appID = "970CA35de60c44645bbae8a215061b33"
    /// The test app's certificate.
    public static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    /// A token for `uid` in `channel` (a publisher's by default: join, publish audio, video,
    /// data), valid for `expire` seconds from its issue time, `issuedAgo` seconds ago; another
    /// `appID` or `certificate` makes a token the test app's edges refuse.
    public static func token(
        channel: String, uid: UInt32, role: RTCRole = .publisher, expire: UInt32 = 3600,
        appID: String = appID, certificate: String = certificate, issuedAgo: UInt32 = 0
    ) throws -> String {
        try RTCTokenBuilder.buildToken(
            appID: appID, appCertificate: certificate, channelName: channel, uid: uid, role: role,
            tokenExpire: expire, issueTs: UInt32(Date().timeIntervalSince1970) - issuedAgo)
    }

    /// A signaling login token (RTM service) for `uid`; `userID` names another user to log in as.
    public static func loginToken(uid: UInt32, userID: String? = nil) throws -> String {
        try RTMTokenBuilder.buildToken(appID: appID, appCertificate: certificate, userID: userID ?? "\(uid)", expire: 3600)
    }
}
