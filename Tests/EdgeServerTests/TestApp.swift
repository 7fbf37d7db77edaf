import Foundation
import ShowroomAuth

/// Tokens for the test app.
enum TestApp {
    static let appID = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    static func token(
        channel: String, uid: UInt32, role: RTCRole = .publisher, expire: UInt32 = 600,
        appID: String = appID, certificate: String = certificate, issuedAgo: UInt32 = 0
    ) throws -> String {
        let now = UInt32(Date().timeIntervalSince1970)
        return try RTCTokenBuilder.buildToken(
            appID: appID, appCertificate: certificate, channelName: channel, uid: uid, role: role,
            tokenExpire: expire, issueTs: now - issuedAgo)
    }
}
