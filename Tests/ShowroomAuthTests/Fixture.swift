import ShowroomAuth

/// The fixed inputs of the public AccessToken2 test vectors (AgoraIO/Tools,
/// DynamicKey/AgoraDynamicKey/{python3,cpp,go}/test), plus helpers for the tests here.
enum Fixture {
    static let appID = "970CA35de60c44645bbae8a215061b33"
    static let appCertificate = "5CFd2fd1755d40ecb72977518be15d3b"
    static let channel = "7d72365eb983485397e3e3f9d460bdda"
    static let uid: UInt32 = 2_882_341_273
    static let account = "2882341273"
    static let userID = "test_user"
    static let expire: UInt32 = 600
    static let issueTs: UInt32 = 1_111_111
    static let salt: UInt32 = 1

    /// Another well-formed certificate, for "signed with the wrong certificate".
    static let otherCertificate = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    static let otherAppID = "0123456789abcdef0123456789abcdef"

    /// A token for the fixture app, issued at `issueTs`.
    static func token(
        channel: String = channel,
        uid: UInt32 = uid,
        expire: UInt32 = 600,
        privileges: [RTCPrivilegeExpire] = [.init(.joinChannel, 600)],
        appID: String = appID,
        certificate: String = appCertificate
    ) throws -> String {
        var service = RTCService(channelName: channel, uid: uid)
        for entry in privileges {
            service.addPrivilege(entry.privilege, expire: entry.expire)
        }
        let token = AccessToken2(appID: appID, issueTs: issueTs, expire: expire, salt: 7, services: [.rtc(service)])
        return try token.build(appCertificate: certificate)
    }

    struct RTCPrivilegeExpire {
        var privilege: RTCPrivilege
        var expire: UInt32
        init(_ privilege: RTCPrivilege, _ expire: UInt32) {
            self.privilege = privilege
            self.expire = expire
        }
    }
}
