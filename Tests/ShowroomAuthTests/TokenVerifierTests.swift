@testable import ShowroomAuth
import ShowroomWire
import XCTest

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Build → verify round trips, every rejection with its own code, wildcards, roles and the
/// "token will expire" arithmetic.
final class TokenVerifierTests: XCTestCase {
    private let verifier = TokenVerifier(appID: Fixture.appID, appCertificate: Fixture.appCertificate)
    private let issued = Fixture.issueTs

    private func rtcToken(
        channel: String = Fixture.channel, uid: UInt32 = Fixture.uid, role: RTCRole,
        tokenExpire: UInt32 = 600, privilegeExpire: UInt32 = 600
    ) throws -> String {
        try RTCTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, channelName: channel, uid: uid,
            role: role, tokenExpire: tokenExpire, privilegeExpire: privilegeExpire, issueTs: issued, salt: 99)
    }

    /// Asserts that verifying fails with `code` and that the message never shows the certificate.
    private func assertRejected(
        _ token: String, channel: String = Fixture.channel, uid: UInt32 = Fixture.uid, now: UInt32? = nil,
        with code: TokenError.Code, verifier: TokenVerifier? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let grant = try (verifier ?? self.verifier).verify(token, channel: channel, uid: uid, now: now ?? issued + 1)
            XCTFail("expected \(code), got a grant \(grant)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
            XCTAssertFalse(error.message.isEmpty, file: file, line: line)
            XCTAssertFalse(error.message.contains(Fixture.appCertificate), "message shows the certificate", file: file, line: line)
            XCTAssertFalse(error.message.contains(Fixture.otherCertificate), "message shows a certificate", file: file, line: line)
        }
    }

    /// Re-encodes a token after changing its inflated body, as a forger would.
    private func tampered(_ token: String, _ change: (inout [UInt8]) -> Void) throws -> String {
        var body = try Zlib.inflate(Array(Data(base64Encoded: String(token.dropFirst(3)))!))
        change(&body)
        return "007" + Data(Zlib.deflate(body)).base64EncodedString()
    }

    // MARK: - Round trips and roles

    func testPublisherTokenRoundTrip() throws {
        let token = try rtcToken(role: .publisher)
        let grant = try verifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued + 10)
        XCTAssertEqual(grant.channel, Fixture.channel)
        XCTAssertEqual(grant.uid, Fixture.uid)
        XCTAssertFalse(grant.isWildcardChannel)
        XCTAssertFalse(grant.isWildcardUid)
        XCTAssertEqual(grant.issuedAt, issued)
        XCTAssertEqual(grant.tokenExpiresAt, issued + 600)
        XCTAssertEqual(grant.verifiedAt, issued + 10)
        for privilege in RTCPrivilege.allCases {
            XCTAssertEqual(grant.expiresAt(privilege), issued + 600, "\(privilege)")
            XCTAssertTrue(grant.allows(privilege, at: issued + 599), "\(privilege)")
            XCTAssertFalse(grant.allows(privilege, at: issued + 600), "\(privilege)")
        }
        XCTAssertEqual(grant.privileges(at: issued + 10), Set(RTCPrivilege.allCases))

        let parsed = try AccessToken2.parse(token)
        XCTAssertEqual(parsed.issueTs, issued)
        XCTAssertEqual(parsed.salt, 99)
        XCTAssertEqual(parsed.rtcServices.first?[.publishVideoStream], 600)
    }

    func testSubscriberTokenDoesNotAllowPublishing() throws {
        let grant = try verifier.verify(
            try rtcToken(role: .subscriber), channel: Fixture.channel, uid: Fixture.uid, now: issued)
        XCTAssertTrue(grant.allows(.joinChannel, at: issued))
        for privilege in [RTCPrivilege.publishAudioStream, .publishVideoStream, .publishDataStream] {
            XCTAssertFalse(grant.allows(privilege, at: issued), "\(privilege)")
            XCTAssertNil(grant.expiresAt(privilege), "\(privilege)")
        }
        XCTAssertEqual(grant.privileges(at: issued), [.joinChannel])
    }

    func testTokenWithPrivilegeExpiresPerPrivilege() throws {
        let token = try RTCTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, channelName: "c", uid: 7,
            tokenExpire: 3600, joinChannelPrivilegeExpire: 3000, publishAudioPrivilegeExpire: 100,
            publishVideoPrivilegeExpire: 200, publishDataStreamPrivilegeExpire: 0, issueTs: issued, salt: 5)
        let grant = try verifier.verify(token, channel: "c", uid: 7, now: issued)
        XCTAssertEqual(grant.expiresAt(.joinChannel), issued + 3000)
        XCTAssertEqual(grant.expiresAt(.publishAudioStream), issued + 100)
        XCTAssertEqual(grant.expiresAt(.publishVideoStream), issued + 200)
        XCTAssertEqual(grant.expiresAt(.publishDataStream), issued + 3600, "0 lasts as long as the token")
        XCTAssertEqual(grant.privileges(at: issued + 150), [.joinChannel, .publishVideoStream, .publishDataStream])
    }

    func testPrivilegeNeverOutlivesTheToken() throws {
        let token = try rtcToken(role: .publisher, tokenExpire: 100, privilegeExpire: 5000)
        let grant = try verifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued)
        XCTAssertEqual(grant.expiresAt(.joinChannel), issued + 100)
        XCTAssertEqual(grant.willExpireAt, issued + 100)
    }

    func testFarExpirySaturatesInsteadOfWrapping() throws {
        let token = try AccessToken2(
            appID: Fixture.appID, issueTs: .max - 10, expire: 1000, salt: 1,
            services: [.rtc(RTCService(channelName: "c", uid: 1, privileges: [.joinChannel: 1000]))]
        ).build(appCertificate: Fixture.appCertificate)
        let grant = try verifier.verify(token, channel: "c", uid: 1, now: .max - 1)
        XCTAssertEqual(grant.tokenExpiresAt, .max)
        XCTAssertEqual(grant.expiresAt(.joinChannel), .max)
    }

    func testBuildingIsRandomisedUnlessIssueTimeAndSaltAreGiven() throws {
        let first = try RTCTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, channelName: "c", uid: 1,
            role: .publisher, tokenExpire: 600)
        let second = try RTCTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, channelName: "c", uid: 1,
            role: .publisher, tokenExpire: 600)
        XCTAssertNotEqual(first, second, "the salt is random")
        let parsed = try AccessToken2.parse(first)
        XCTAssertTrue((1...99_999_999).contains(parsed.salt))
        let now = UInt32(Date().timeIntervalSince1970)
        XCTAssertLessThanOrEqual(Int(now) - Int(parsed.issueTs), 5)
        XCTAssertNoThrow(try verifier.verify(first, channel: "c", uid: 1, now: now))
    }

    // MARK: - Wildcards

    func testWildcardChannelTokenAcceptsAnyChannel() throws {
        let token = try rtcToken(channel: "", role: .publisher)
        for channel in ["room-1", "room-2", Fixture.channel, ""] {
            let grant = try verifier.verify(token, channel: channel, uid: Fixture.uid, now: issued)
            XCTAssertTrue(grant.isWildcardChannel)
            XCTAssertEqual(grant.channel, channel)
        }
        assertRejected(token, channel: "room-1", uid: 1, with: .uidMismatch)
    }

    func testUID0TokenAcceptsAnyUID() throws {
        let token = try rtcToken(uid: 0, role: .subscriber)
        for uid: UInt32 in [0, 1, 42, Fixture.uid, .max] {
            let grant = try verifier.verify(token, channel: Fixture.channel, uid: uid, now: issued)
            XCTAssertTrue(grant.isWildcardUid)
            XCTAssertEqual(grant.uid, uid)
        }
        assertRejected(token, channel: "other", with: .channelMismatch)
    }

    func testFullyWildcardToken() throws {
        let token = try rtcToken(channel: "", uid: 0, role: .publisher)
        let grant = try verifier.verify(token, channel: "anything", uid: 12345, now: issued)
        XCTAssertTrue(grant.isWildcardChannel && grant.isWildcardUid)
    }

    func testSeveralRTCServicesUseTheOneForTheChannel() throws {
        let token = try AccessToken2(
            appID: Fixture.appID, issueTs: issued, expire: 600, salt: 3,
            services: [
                .rtc(RTCService(channelName: "a", uid: 1, privileges: [.joinChannel: 600])),
                .rtm(RTMService(userID: "1", privileges: [.login: 600])),
                .rtc(RTCService(channelName: "b", uid: 1, privileges: [.joinChannel: 300, .publishAudioStream: 300])),
            ]
        ).build(appCertificate: Fixture.appCertificate)
        let grantA = try verifier.verify(token, channel: "a", uid: 1, now: issued)
        XCTAssertNil(grantA.expiresAt(.publishAudioStream))
        let grantB = try verifier.verify(token, channel: "b", uid: 1, now: issued)
        XCTAssertEqual(grantB.expiresAt(.publishAudioStream), issued + 300)
        XCTAssertEqual(try verifier.verifyLogin(token, userID: "1", now: issued), issued + 600)
        assertRejected(token, channel: "c", uid: 1, with: .channelMismatch)
    }

    // MARK: - Rejections, one code each

    func testForgedSignatureIsRejected() throws {
        let token = try rtcToken(role: .subscriber)
        let flipped = try tampered(token) { body in body[5] ^= 0x01 }  // a byte of the signature
        assertRejected(flipped, with: .badSignature)
    }

    func testSubscriberTokenEditedIntoPublisherIsRejected() throws {
        // The publisher's content under the subscriber's signature: a privilege escalation attempt.
        let subscriber = try rtcToken(role: .subscriber)
        let publisher = try rtcToken(role: .publisher)
        let subscriberBody = try Zlib.inflate(Array(Data(base64Encoded: String(subscriber.dropFirst(3)))!))
        let forged = try tampered(publisher) { body in body.replaceSubrange(0..<34, with: subscriberBody[0..<34]) }
        assertRejected(forged, with: .badSignature)
    }

    func testTokenSignedWithAnotherCertificateIsRejected() throws {
        let token = try Fixture.token(certificate: Fixture.otherCertificate)
        assertRejected(token, with: .badSignature)
        let otherVerifier = TokenVerifier(appID: Fixture.appID, appCertificate: Fixture.otherCertificate)
        XCTAssertNoThrow(try otherVerifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued))
    }

    func testTokenForAnotherAppIsRejected() throws {
        assertRejected(try Fixture.token(appID: Fixture.otherAppID), with: .wrongAppID)
    }

    func testExpiredTokenIsRejected() throws {
        let token = try Fixture.token(expire: 600, privileges: [.init(.joinChannel, 0)])
        XCTAssertNoThrow(try verifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued + 599))
        assertRejected(token, now: issued + 600, with: .expired)
        assertRejected(token, now: issued + 100_000, with: .expired)
    }

    func testExpiredJoinPrivilegeIsRejected() throws {
        let token = try Fixture.token(expire: 3600, privileges: [.init(.joinChannel, 60), .init(.publishAudioStream, 3600)])
        XCTAssertNoThrow(try verifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued + 59))
        assertRejected(token, now: issued + 60, with: .missingPrivilege)
    }

    func testExpiredPublishPrivilegeNoLongerAllowsPublishing() throws {
        let token = try Fixture.token(expire: 3600, privileges: [.init(.joinChannel, 3600), .init(.publishVideoStream, 60)])
        let grant = try verifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued + 61)
        XCTAssertTrue(grant.allows(.joinChannel, at: issued + 61))
        XCTAssertFalse(grant.allows(.publishVideoStream, at: issued + 61))
        XCTAssertEqual(grant.expiresAt(.publishVideoStream), issued + 60)
    }

    func testWrongChannelIsRejected() throws {
        assertRejected(try Fixture.token(), channel: "another-channel", with: .channelMismatch)
    }

    func testWrongUIDIsRejected() throws {
        assertRejected(try Fixture.token(), uid: 42, with: .uidMismatch)
        assertRejected(try Fixture.token(uid: 42), uid: 0, with: .uidMismatch)
    }

    func testTokenWithoutJoinPrivilegeIsRejected() throws {
        assertRejected(try Fixture.token(privileges: [.init(.publishAudioStream, 600)]), with: .missingPrivilege)
        assertRejected(try Fixture.token(privileges: []), with: .missingPrivilege)
        // A signaling-only token is valid but grants no channel.
        let rtm = try RTMTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, userID: "u", expire: 600, issueTs: issued)
        assertRejected(rtm, with: .missingPrivilege)
    }

    func testGarbageIsMalformed() throws {
        let valid = try Fixture.token()
        let cases = [
            "",
            "007",
            "007!!!!",
            "007" + Data("hello, world".utf8).base64EncodedString(),  // base64 but not zlib
            String(valid.dropLast(12)),  // cut: base64 or zlib fails
            valid + "AAAA",  // bytes after the zlib stream
            "006" + String(valid.dropFirst(3)),  // the previous format's version
            "006970CA35de60c44645bbae8a215061b33IAD...",
            "008" + String(valid.dropFirst(3)),
            " " + valid,
            "007" + String(repeating: "A", count: AccessToken2.maxTokenLength),
            "007" + Data(Zlib.deflate([1, 2, 3])).base64EncodedString(),  // zlib, content cut short
        ]
        for text in cases {
            assertRejected(text, with: .malformed)
        }
        // Content cut short after a valid signature, and content with bytes after its services.
        assertRejected(try tampered(valid) { $0.removeLast(3) }, with: .malformed)
        assertRejected(try tampered(valid) { $0.append(0) }, with: .malformed)
        // Bytes after the zlib stream itself.
        let body = try Zlib.inflate(Array(Data(base64Encoded: String(valid.dropFirst(3)))!))
        assertRejected("007" + Data(Zlib.deflate(body) + [0, 0]).base64EncodedString(), with: .malformed)
        XCTAssertNoThrow(try AccessToken2.parse("007" + Data(Zlib.deflate(body)).base64EncodedString()))

        do {
            _ = try AccessToken2.parse("006" + String(valid.dropFirst(3)))
            XCTFail("parsed an 006 token")
        } catch {
            XCTAssertTrue(error.message.contains("006"), error.message)
        }
    }

    func testRandomMutationsNeverCrash() throws {
        let valid = Array(try Fixture.token().utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)
        var generator = SplitMix(seed: 0x5EED)
        var accepted = 0
        for _ in 0..<2000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 3..<bytes.count, using: &generator)
                bytes[index] = alphabet.randomElement(using: &generator)!
            }
            if (try? verifier.verify(String(decoding: bytes, as: UTF8.self), channel: Fixture.channel, uid: Fixture.uid, now: issued))
                != nil
            {
                accepted += 1
            }
        }
        // Only mutations that leave the decoded bytes unchanged (e.g. in base64 padding bits) pass.
        XCTAssertLessThan(accepted, 40)
    }

    func testRejectionsHaveDistinctStableCodes() {
        XCTAssertEqual(TokenError.Code.all.map(\.rawValue), Array(2001...2007))
        XCTAssertEqual(Set(TokenError.Code.all).count, 7)
        XCTAssertEqual(Set(TokenError.Code.all.map(\.description)).count, 7)
        XCTAssertEqual(TokenError.Code.malformed.wire, .tokenMalformed)
        XCTAssertEqual(TokenError.Code.badSignature.wire, .tokenBadSignature)
        XCTAssertEqual(TokenError.Code.wrongAppID.wire, .tokenWrongAppID)
        XCTAssertEqual(TokenError.Code.expired.wire, .tokenExpired)
        XCTAssertEqual(TokenError.Code.channelMismatch.wire, .tokenChannelMismatch)
        XCTAssertEqual(TokenError.Code.uidMismatch.wire, .tokenUidMismatch)
        XCTAssertEqual(TokenError.Code.missingPrivilege.wire, .tokenMissingPrivilege)
        for code in TokenError.Code.all {
            XCTAssertEqual(TokenError.Code(wire: code.wire), code)
        }
        XCTAssertNil(TokenError.Code(wire: .malformedMessage))
    }

    // MARK: - Token will expire

    func testWillExpireArithmetic() throws {
        let token = try Fixture.token(
            expire: 600, privileges: [.init(.joinChannel, 600), .init(.publishAudioStream, 120), .init(.publishVideoStream, 10)])
        // Verified at +20: video (10) is already gone and does not count; audio (120) is the earliest.
        let grant = try verifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued + 20)
        XCTAssertEqual(TokenGrant.willExpireWarning, 30)
        XCTAssertEqual(grant.willExpireAt, issued + 120)
        XCTAssertEqual(grant.warnAt, issued + 90)
        XCTAssertEqual(grant.secondsUntilExpiry(now: issued + 20), 100)
        XCTAssertEqual(grant.secondsUntilExpiry(now: issued + 100), 20)
        XCTAssertEqual(grant.secondsUntilExpiry(now: issued + 500), 0)
        XCTAssertFalse(grant.willExpireSoon(now: issued + 89))
        XCTAssertTrue(grant.willExpireSoon(now: issued + 90))

        // Once audio has gone too, only join and the token remain.
        let later = try verifier.verify(token, channel: Fixture.channel, uid: Fixture.uid, now: issued + 130)
        XCTAssertEqual(later.willExpireAt, issued + 600)
        XCTAssertEqual(later.warnAt, issued + 570)

        // A token shorter than the warning: warn at once.
        let short = try verifier.verify(try Fixture.token(expire: 20), channel: Fixture.channel, uid: Fixture.uid, now: issued)
        XCTAssertEqual(short.willExpireAt, issued + 20)
        XCTAssertEqual(short.warnAt, issued)
        XCTAssertTrue(short.willExpireSoon(now: issued))
    }

    // MARK: - Errors on the wire, building, secrets

    func testTokenErrorConvertsToShowroomError() throws {
        let error = TokenError(.expired, "token expired at 5")
        XCTAssertEqual(error.wireCode, .tokenExpired)
        XCTAssertEqual(error.wireCode.rawValue, 2004)
        let wire = ShowroomError(error)
        XCTAssertEqual(wire.code, .tokenExpired)
        XCTAssertEqual(wire.message, "token expired at 5")
        XCTAssertEqual(error.showroomError, wire)
        XCTAssertEqual(ShowroomError(wire: wire.wire), wire)
        XCTAssertTrue(error.description.hasPrefix("E2004 token expired: "), error.description)
    }

    func testBuildRefusesWhatTheReferenceRefuses() {
        let service = AccessTokenService.rtc(RTCService(channelName: "c", uid: 1, privileges: [.joinChannel: 60]))
        let cases: [(AccessToken2, String)] = [
            (AccessToken2(appID: "abc", expire: 60, services: [service]), Fixture.appCertificate),
            (AccessToken2(appID: "Z70CA35de60c44645bbae8a215061b33", expire: 60, services: [service]), Fixture.appCertificate),
            (AccessToken2(appID: Fixture.appID, expire: 60, services: [service]), "abc"),
            (AccessToken2(appID: Fixture.appID, expire: 60, services: [service]), "5CFd2fd1755d40ecb72977518be15d3Z"),
            (AccessToken2(appID: Fixture.appID, expire: 60), Fixture.appCertificate),
            (
                AccessToken2(
                    appID: Fixture.appID, expire: 60,
                    services: [.rtc(RTCService(channelName: String(repeating: "x", count: 70_000), uid: 1))]),
                Fixture.appCertificate
            ),
        ]
        for (token, certificate) in cases {
            XCTAssertThrowsError(try token.build(appCertificate: certificate)) { error in
                XCTAssertEqual((error as? TokenError)?.code, .malformed)
                XCTAssertFalse((error as? TokenError)?.message.contains(certificate) ?? true)
            }
        }
    }

    func testUnparsedOrChangedTokenHasNoSignatureToVerify() throws {
        var token = try AccessToken2.parse(try Fixture.token())
        XCTAssertTrue(token.verifySignature(appCertificate: Fixture.appCertificate))
        token.addService(.rtm(RTMService(userID: "x")))
        XCTAssertTrue(token.signature.isEmpty)
        XCTAssertFalse(token.verifySignature(appCertificate: Fixture.appCertificate))
        XCTAssertFalse(
            AccessToken2(appID: Fixture.appID, expire: 1).verifySignature(appCertificate: Fixture.appCertificate))
    }

    func testVerifierDoesNotShowItsCertificate() {
        XCTAssertFalse(String(describing: verifier).contains(Fixture.appCertificate))
        var dumped = ""
        dump(verifier, to: &dumped)
        XCTAssertFalse(dumped.contains(Fixture.appCertificate))
        XCTAssertTrue(dumped.contains(Fixture.appID))
    }

    func testLoginTokenVerification() throws {
        let token = try RTMTokenBuilder.buildToken(
            appID: Fixture.appID, appCertificate: Fixture.appCertificate, userID: "alice", expire: 300, issueTs: issued)
        XCTAssertEqual(try verifier.verifyLogin(token, userID: "alice", now: issued), issued + 300)
        XCTAssertThrowsError(try verifier.verifyLogin(token, userID: "bob", now: issued)) {
            XCTAssertEqual(($0 as? TokenError)?.code, .uidMismatch)
        }
        XCTAssertThrowsError(try verifier.verifyLogin(token, userID: "alice", now: issued + 300)) {
            XCTAssertEqual(($0 as? TokenError)?.code, .expired)
        }
        XCTAssertThrowsError(try verifier.verifyLogin(try Fixture.token(), userID: "alice", now: issued)) {
            XCTAssertEqual(($0 as? TokenError)?.code, .missingPrivilege)
        }
    }
}

/// A small seeded generator, so the mutation test is the same on every run.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
