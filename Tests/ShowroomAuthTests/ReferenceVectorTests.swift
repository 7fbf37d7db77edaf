import ShowroomAuth
import XCTest

/// The public AccessToken2 test vectors reproduce byte for byte, and tokens from other writers
/// parse and verify.
///
/// Sources (AgoraIO/Tools): DynamicKey/AgoraDynamicKey/python3/test/AccessToken2Test.py,
/// DynamicKey/AgoraDynamicKey/cpp/test/AccessToken2_test.cpp and
/// DynamicKey/AgoraDynamicKey/go/src/accesstoken2/accesstoken_test.go. Every vector uses the
/// inputs in ``Fixture`` (issue time 1111111, salt 1, expire 600).
final class ReferenceVectorTests: XCTestCase {
    // python3 test_service_rtc and test_service_rtc_account; cpp TestAccessToken2WithIntUid and
    // TestAccessToken2WithStringUid.
    static let rtcUID =
        "007eJxTYBBbsMMnKq7p9Hf/HcIX5kce9b518kCiQgSr5Zrp4X1Tu6UUGCzNDZwdjU1TUs0Mkk1MzExMk5ISUy0SjQxNDcwMk4yN3b8IMEQwMTAwMoAwBIL4CgzmKeZGxmamqUmWFsYmFqbGluapxqnGaZYpJmYGSSkpiVwMRhYWRsYmhkbmxgDCaiTj"
    // python3 test_service_rtc_uid_0; cpp TestAccessToken2WithIntUidZero.
    static let rtcUID0 =
        "007eJxTYLhzZP08Lxa1Pg57+TcXb/3cZ3wi4V6kbpbOog0G2dOYk20UGCzNDZwdjU1TUs0Mkk1MzExMk5ISUy0SjQxNDcwMk4yN3b8IMEQwMTAwMoAwBIL4CgzmKeZGxmamqUmWFsYmFqbGluapxqnGaZYpJmYGSSkpiQwMADacImo="
    // cpp TestAccessToken2Rtm (user id "2882341273").
    static let rtm =
        "007eJxTYEhuZrAR/XT+XPihI+6t4t5F9RtUltw9em3Pwi2sr6P/lAspMFiaGzg7GpumpJoZJJuYmJmYJiUlplokGhmaGpgZJhkbu38RYIhgYmBgZABhJiBmBPO5GIwsLIyMTQyNzI0BndAdKg=="
    // cpp TestAccessToken2WithMultiService and TestOldTokenParse: RTC (all four privileges),
    // RTM "test_user", FPA (type 4), chat user "2882341273" (type 5).
    static let multiService =
        "007eJxTYLjhFiNy2/+8zqRJj20tt73SKA2e3/joPVv4761qZnrOyqYKDJbmBs6OxqYpqWYGySYmZiamSUmJqRaJRoamBmaGScbG7l8EGCKYGBgYGRgYWIAkCIP4TGCSGUyygEkFBvMUcyNjM9PUJEsLYxMLU2NL81TjVOM0yxQTM4OklJRELgYjCwsjYxNDI3NjJqA5EJM4GUpSi0viS4tTi1jggqxwFrImAAIiLHc="
    // python3 test_multi_service: RTC (all four), RTM "2882341273", FPA, chat "2882341273",
    // APaaS user "2882341273" (type 7).
    static let multiServiceWithApaas =
        "007eJxTYHh8IPKzTvBdf9ce8bk7G61vs06oca1e815/ot4+x7rfjDIKDJbmBs6OxqYpqWYGySYmZiamSUmJqRaJRoamBmaGScbG7l8EGCKYGBgYGRgYWIEkCxCD+ExgkhlMsoBJBQbzFHMjYzPT1CRLC2MTC1NjS/NU41TjNMsUEzODpJSURC4GIwsLI2MTQyNzYyagORCTkEVZ4KKsWOXZgWIQm1HF//8HAL01L5I="

    private static func rtcService(_ privileges: [RTCPrivilege]) -> RTCService {
        RTCService(
            channelName: Fixture.channel, uid: Fixture.uid,
            privileges: Dictionary(uniqueKeysWithValues: privileges.map { ($0, Fixture.expire) }))
    }

    private static func token(_ services: [AccessTokenService]) -> AccessToken2 {
        AccessToken2(
            appID: Fixture.appID, issueTs: Fixture.issueTs, expire: Fixture.expire, salt: Fixture.salt, services: services)
    }

    /// A service this module does not model, written as the reference packs it: the privilege
    /// map (count, key, value) followed by the service's own fields.
    private static func opaque(_ type: UInt16, privilege: UInt16, fields: [UInt8] = []) -> AccessTokenService {
        var payload: [UInt8] = [1, 0, UInt8(privilege), UInt8(privilege >> 8)]
        payload += [UInt8(Fixture.expire & 0xFF), UInt8(Fixture.expire >> 8), 0, 0]
        return .other(type: type, payload: payload + fields)
    }

    private static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [UInt8(bytes.count & 0xFF), UInt8(bytes.count >> 8)] + bytes
    }

    // MARK: - Byte-for-byte builds

    func testRTCWithUIDMatchesReference() throws {
        let token = Self.token([.rtc(Self.rtcService([.joinChannel]))])
        XCTAssertEqual(try token.build(appCertificate: Fixture.appCertificate), Self.rtcUID)
    }

    func testRTCWithUID0MatchesReference() throws {
        var service = RTCService(channelName: Fixture.channel, uid: 0)
        service.addPrivilege(.joinChannel, expire: Fixture.expire)
        XCTAssertEqual(service.uid, "", "uid 0 is written as the empty string")
        XCTAssertEqual(try Self.token([.rtc(service)]).build(appCertificate: Fixture.appCertificate), Self.rtcUID0)
    }

    func testRTCWithAccountMatchesReference() throws {
        let service = RTCService(channelName: Fixture.channel, account: Fixture.account, privileges: [.joinChannel: 600])
        XCTAssertEqual(try Self.token([.rtc(service)]).build(appCertificate: Fixture.appCertificate), Self.rtcUID)
    }

    func testRTMMatchesReference() throws {
        let token = Self.token([.rtm(RTMService(userID: Fixture.account, privileges: [.login: Fixture.expire]))])
        XCTAssertEqual(try token.build(appCertificate: Fixture.appCertificate), Self.rtm)
        XCTAssertEqual(
            try RTMTokenBuilder.buildToken(
                appID: Fixture.appID, appCertificate: Fixture.appCertificate, userID: Fixture.account,
                expire: Fixture.expire, issueTs: Fixture.issueTs, salt: Fixture.salt),
            Self.rtm)
    }

    func testMultiServiceMatchesReference() throws {
        // Added out of type order on purpose: building orders services by type, as the reference does.
        let token = Self.token([
            Self.opaque(5, privilege: 1, fields: Self.string(Fixture.account)),  // chat user
            .rtm(RTMService(userID: Fixture.userID, privileges: [.login: Fixture.expire])),
            Self.opaque(4, privilege: 1),  // FPA login
            .rtc(Self.rtcService(RTCPrivilege.allCases)),
        ])
        XCTAssertEqual(try token.build(appCertificate: Fixture.appCertificate), Self.multiService)
    }

    func testMultiServiceWithApaasMatchesReference() throws {
        let apaasFields = Self.string("") + Self.string(Fixture.account) + [0xFF, 0xFF]  // room, user, role -1
        let token = Self.token([
            .rtc(Self.rtcService(RTCPrivilege.allCases)),
            .rtm(RTMService(userID: Fixture.account, privileges: [.login: Fixture.expire])),
            Self.opaque(4, privilege: 1),
            Self.opaque(5, privilege: 1, fields: Self.string(Fixture.account)),
            Self.opaque(7, privilege: 2, fields: apaasFields),
        ])
        XCTAssertEqual(try token.build(appCertificate: Fixture.appCertificate), Self.multiServiceWithApaas)
    }

    func testRTCTokenBuilderMatchesReferenceAccessToken() throws {
        // buildTokenWithUid(subscriber) writes the same single join privilege as the vector.
        let subscriber = try RTCTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, channelName: Fixture.channel,
            uid: Fixture.uid, role: .subscriber, tokenExpire: Fixture.expire, privilegeExpire: Fixture.expire,
            issueTs: Fixture.issueTs, salt: Fixture.salt)
        XCTAssertEqual(subscriber, Self.rtcUID)
        let wildcard = try RTCTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, channelName: Fixture.channel,
            uid: 0, role: .subscriber, tokenExpire: Fixture.expire, privilegeExpire: Fixture.expire,
            issueTs: Fixture.issueTs, salt: Fixture.salt)
        XCTAssertEqual(wildcard, Self.rtcUID0)
    }

    // MARK: - Parsing the vectors

    func testRTCVectorParses() throws {
        let token = try AccessToken2.parse(Self.rtcUID)
        XCTAssertEqual(token.appID, Fixture.appID)
        XCTAssertEqual(token.issueTs, Fixture.issueTs)
        XCTAssertEqual(token.expire, Fixture.expire)
        XCTAssertEqual(token.salt, Fixture.salt)
        XCTAssertEqual(token.expiresAt, Fixture.issueTs + Fixture.expire)
        XCTAssertEqual(token.signature.count, 32)
        XCTAssertEqual(token.services, [.rtc(Self.rtcService([.joinChannel]))])
        XCTAssertTrue(token.verifySignature(appCertificate: Fixture.appCertificate))
        XCTAssertFalse(token.verifySignature(appCertificate: Fixture.otherCertificate))

        let wildcard = try AccessToken2.parse(Self.rtcUID0)
        XCTAssertEqual(wildcard.rtcServices.first?.uid, "")
        XCTAssertEqual(wildcard.rtcServices.first?.isWildcardUid, true)
        XCTAssertTrue(wildcard.verifySignature(appCertificate: Fixture.appCertificate))
    }

    func testRTMVectorParses() throws {
        let token = try AccessToken2.parse(Self.rtm)
        XCTAssertEqual(token.rtmServices, [RTMService(userID: Fixture.account, privileges: [.login: 600])])
        XCTAssertTrue(token.rtcServices.isEmpty)
        XCTAssertTrue(token.verifySignature(appCertificate: Fixture.appCertificate))
    }

    func testMultiServiceVectorParsesUpToTheFirstUnknownServiceAndVerifies() throws {
        let token = try AccessToken2.parse(Self.multiService)
        XCTAssertEqual(token.services.map(\.type), [1, 2, 4], "FPA (4) is unknown here and holds the chat service after it")
        XCTAssertEqual(token.rtcServices, [Self.rtcService(RTCPrivilege.allCases)])
        XCTAssertEqual(token.rtmServices.first?.userID, Fixture.userID)
        XCTAssertTrue(token.verifySignature(appCertificate: Fixture.appCertificate))

        // The unknown service keeps its bytes (and the chat service after it): rebuilding the parsed
        // fields and parsing again loses nothing.
        let rebuilt = try AccessToken2(
            appID: token.appID, issueTs: token.issueTs, expire: token.expire, salt: token.salt, services: token.services
        ).build(appCertificate: Fixture.appCertificate)
        let reparsed = try AccessToken2.parse(rebuilt)
        XCTAssertEqual(reparsed.services, token.services)
        XCTAssertTrue(reparsed.verifySignature(appCertificate: Fixture.appCertificate))
    }

    /// Writers whose deflate differs from zlib's (Go's compress/flate, C#, Dart, Rust) produce
    /// other bytes for the same content; they must still parse and verify.
    func testTokensFromOtherDeflateImplementationsParseAndVerify() throws {
        // go accesstoken_test.go: Test_AccessToken_Build_ServiceRtc, ..._Uid0, ..._ServiceRtm ("test_user").
        let goRTC =
            "007eJxSYBBbsMMnKq7p9Hf/HcIX5kce9b518kCiQgSr5Zrp4X1Tu6UUGCzNDZwdjU1TUs0Mkk1MzExMk5ISUy0SjQxNDcwMk4yN3b8IMEQwMTAwMoAwBIL4CgzmKeZGxmamqUmWFsYmFqbGluapxqnGaZYpJmYGSSkpiVwMRhYWRsYmhkbmxoAAAAD//8JqJOM="
        let goRTCUID0 =
            "007eJxSYLhzZP08Lxa1Pg57+TcXb/3cZ3wi4V6kbpbOog0G2dOYk20UGCzNDZwdjU1TUs0Mkk1MzExMk5ISUy0SjQxNDcwMk4yN3b8IMEQwMTAwMoAwBIL4CgzmKeZGxmamqUmWFsYmFqbGluapxqnGaZYpJmYGSSkpiQwMgAAAAP//Npwiag=="
        let goRTM =
            "007eJxSYOCdJftjyTM2zxW6Xhm/5T0j5LdcUt/xYVt48fb5Mp3PX9coMFiaGzg7GpumpJoZJJuYmJmYJiUlplokGhmaGpgZJhkbu38RYIhgYmBgZABhJgZGBkYwn5OhJLW4JL60OLUIEAAA//9ZVh6A"
        let goRTCToken = try AccessToken2.parse(goRTC)
        XCTAssertNotEqual(goRTC, Self.rtcUID)
        XCTAssertEqual(goRTCToken.services, try AccessToken2.parse(Self.rtcUID).services)
        XCTAssertEqual(try AccessToken2.parse(goRTCUID0).rtcServices.first?.uid, "")
        XCTAssertEqual(try AccessToken2.parse(goRTM).rtmServices.first?.userID, Fixture.userID)

        // cpp TestCrossLanguageExtendedServiceTokens: streaming (3) and FCDN (6) services written
        // by Go, Node.js, C# SharpZipLib, Dart archive and Rust flate2.
        let crossLanguage = [
            "007eJxSYLi93GuuUHrO9Fr71KVJKqfDby8RezlVfGLMO77DIl79U40UGCzNDZwdjU1TUs0Mkk1MzExMk5ISUy0SjQxNDcwMk4yN3b8IMEQwMTAwMjAwsDEwMzAyMIL5CgzmKeZGxmamqUmWFsYmFqbGluapxqnGaZYpJmYGSSkpiVwMRhYWRsYmhkbmxiB9TETqY2BgZmCC2kKsHj6G4pKi1MRc3cTk5PzSvBI2Mt3JRpI72Uh2Jw9DWnJKHsyVgAAAAP//SW9fVw==",
            "007eJxTYLi93GuuUHrO9Fr71KVJKqfDby8RezlVfGLMO77DIl79U40UGCzNDZwdjU1TUs0Mkk1MzExMk5ISUy0SjQxNDcwMk4yN3b8IMEQwMTAwMjAwsDEwMzAyMIL5CgzmKeZGxmamqUmWFsYmFqbGluapxqnGaZYpJmYGSSkpiVwMRhYWRsYmhkbmxiB9TETqY2BgZmCC2kKsHj6G4pKi1MRc3cTk5PzSvBI2Mt3JRpI72Uh2Jw9DWnJKHsyVAElvX1c=",
            "007eJydjjsKwkAURZ8RUogEEdE2ha2QzJtfKhELwQ1oYTOTGW38gJ/SNYhFsLJTXIilS8gKbKxcgB+0N1aXWxzO8SE9dffl0Xi3btqjrl966aF6TWrbwc07V7qbhPgQiaDdQmYsD2JKOWVaKysVCVnAQ43YuZeg7wDkAMCF/HNz7++DMIIgZ1ZHEqlkGAmLFoeRoTzQxqgCECkJ0pAIfHHOjxw8Lc7H8ivjwWI5t2rSUHE8W02X7p+dbqZON3NnEYaxmX4rH0lvX1c=",
            "007eAFTYLi93GuuUHrO9Fr71KVJKqfDby8RezlVfGLMO77DIl79U40UGCzNDZwdjU1TUs0Mkk1MzExMk5ISUy0SjQxNDcwMk4yN3b8IMEQwMTAwMjAwsDEwA2lGMF+BwTzF3MjYzDQ1ydLC2MTC1NjSPNU41TjNMsXEzCApJSWRi8HIwsLI2MTQyNwYpI+JSH0MQFuYoLYQq4ePobikKDUxVzcxOTm/NK+EjUx3spHkTjaS3cnDkJackgdzJQBJb19X",
            "007eJydjjsOAVEYRn8jmUJERIR2Cq1k5v73NZWIQmIDFJp7514aj8SjtAZRiEpHLERpCbMCjcoCDKGfUX35ipNzPIgvvWNlPDlsWvasG7d+fKrd9/Xd8FG6VnvbPfEgFH6njcxY7keUcsq0VlYqEjCfBxqx+yzDwAHIAYAL+WRzn++BMIIgZ1aHEqlkGAqLFkehodzXxqgCECkJ0oAIfHNOSg4Si/O1pGVKsFwtrJo2VRTN17OV+2enm6nTzdxZhFFkZr/KF0lvX1c=",
        ]
        for text in [goRTC, goRTCUID0, goRTM] + crossLanguage {
            let token = try AccessToken2.parse(text)
            XCTAssertEqual(token.appID, Fixture.appID)
            XCTAssertEqual(token.issueTs, Fixture.issueTs)
            XCTAssertEqual(token.salt, Fixture.salt)
            XCTAssertTrue(token.verifySignature(appCertificate: Fixture.appCertificate), "signature of \(text.prefix(24))...")
            XCTAssertFalse(token.verifySignature(appCertificate: Fixture.otherCertificate))
        }
    }

    func testReferenceVectorPassesTheVerifier() throws {
        let verifier = TokenVerifier(appID: Fixture.appID, appCertificate: Fixture.appCertificate)
        let grant = try verifier.verify(Self.rtcUID, channel: Fixture.channel, uid: Fixture.uid, now: Fixture.issueTs + 1)
        XCTAssertEqual(grant.expiresAt(.joinChannel), Fixture.issueTs + 600)
        XCTAssertNil(grant.expiresAt(.publishAudioStream))
        XCTAssertEqual(
            try verifier.verifyLogin(Self.rtm, userID: Fixture.account, now: Fixture.issueTs), Fixture.issueTs + 600)
    }
}
