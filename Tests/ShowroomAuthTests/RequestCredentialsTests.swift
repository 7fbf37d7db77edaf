import ShowroomAuth
import ShowroomWire
import XCTest

/// The checks a server makes of admin signatures and users' tokens with the secrets it holds,
/// at times the test chooses.
final class RequestCredentialsTests: XCTestCase {
    private let configured = RequestCredentials(appID: Fixture.appID, appCertificate: Fixture.appCertificate, checker: "coordinator c1")
    private let issuedMs = Int64(Fixture.issueTs) * 1000

    private func refusal(_ body: () throws(ShowroomError) -> Void) -> ShowroomError? {
        guard case .failure(let error) = Result(catching: body) else { return nil }
        return error
    }

    private func verify(_ credentials: RequestCredentials, _ token: String, channel: String = Fixture.channel,
                        uid: UInt32 = Fixture.uid, nowMs: Int64) -> ShowroomError? {
        refusal { () throws(ShowroomError) in
            try credentials.verifyToken(token, channel: channel, uid: uid, nowMs: nowMs, needed: "placements need", missing: "no token")
        }
    }

    func testAdminSignaturesNeedTheCertificate() {
        let signature = AdminSigner.sign(action: "close-room", target: "r1", uid: 0, issuedAtMs: issuedMs, appCertificate: Fixture.appCertificate)
        XCTAssertNil(refusal { () throws(ShowroomError) in
            try configured.verifyAdmin(signature, action: "close-room", target: "r1", uid: 0, nowMs: issuedMs)
        })
        XCTAssertEqual(refusal { () throws(ShowroomError) in
            try configured.verifyAdmin(signature, action: "close-room", target: "r2", uid: 0, nowMs: issuedMs)
        }?.code, .adminUnauthorized, "signed for another room")
        let unconfigured = RequestCredentials(appID: Fixture.appID, appCertificate: nil, checker: "coordinator c1")
        let refused = refusal { () throws(ShowroomError) in
            try unconfigured.verifyAdmin(signature, action: "close-room", target: "r1", uid: 0, nowMs: issuedMs)
        }
        XCTAssertEqual(refused?.code, .adminUnauthorized)
        XCTAssertEqual(refused?.message,
                       "coordinator c1 has no app certificate configured, so it accepts no admin request; set appCertificate")
    }

    func testATokenIsCheckedForItsChannelUidAndTime() throws {
        let token = try Fixture.token()
        XCTAssertNil(verify(configured, token, nowMs: issuedMs + 1_000))
        XCTAssertNotNil(verify(configured, token, channel: "another", nowMs: issuedMs + 1_000), "another channel")
        XCTAssertNotNil(verify(configured, token, uid: Fixture.uid + 1, nowMs: issuedMs + 1_000), "another uid")
        XCTAssertNotNil(verify(configured, token, nowMs: issuedMs + 601_000), "expired")
        XCTAssertEqual(verify(configured, "", nowMs: issuedMs), ShowroomError(.tokenMalformed, "no token"))
        XCTAssertEqual(verify(configured, "007garbage", nowMs: issuedMs)?.code, .tokenMalformed)
    }

    func testNothingIsCheckedWithoutAppIDAndCertificate() throws {
        let token = try Fixture.token()
        for credentials in [RequestCredentials(appID: nil, appCertificate: Fixture.appCertificate, checker: "coordinator c1"),
                            RequestCredentials(appID: Fixture.appID, appCertificate: nil, checker: "coordinator c1")] {
            let refused = verify(credentials, token, nowMs: issuedMs)
            XCTAssertEqual(refused?.code, .unavailable)
            XCTAssertEqual(refused?.message,
                           "coordinator c1 has no app id and certificate configured, so it cannot check the tokens placements need; set appID and appCertificate")
        }
    }
}
