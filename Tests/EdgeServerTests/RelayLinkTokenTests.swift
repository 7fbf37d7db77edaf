import Edge
@testable import EdgeServer
import ShowroomWire
import XCTest

/// ``GrantVerifier/relayLinkToken(channel:uid:unixNow:random:)``: the token a relay link joins
/// its origin with, checked by the verifier an origin uses: a subscriber's, bound to the channel
/// and the link's uid, for ``GrantVerifier/relayLinkTokenLifetime``.
final class RelayLinkTokenTests: XCTestCase {
    private let grants = GrantVerifier(appID: "970CA35de60c44645bbae8a215061b33", appCertificate: "5CFd2fd1755d40ecb72977518be15d3b")
    private let uid = RelayLinkIdentity.firstUID + 1
    private let issued: UInt32 = 1_800_000_000

    func testTheLinkJoinsItsChannelAsAudienceForTheLifetime() throws {
        let token = try grants.relayLinkToken(channel: "show", uid: uid, unixNow: issued, random: 42)
        let grant = try grants.grant(token, channel: "show", uid: uid, unixNow: issued, now: .zero).get()
        XCTAssertEqual(grant.channel, "show")
        XCTAssertEqual(grant.uid, uid)
        XCTAssertTrue(grant.allows(.join, at: .zero))
        XCTAssertFalse(grant.allows(.publishAudio, at: .zero), "a link never publishes")
        XCTAssertFalse(grant.allows(.publishVideo, at: .zero))
        XCTAssertEqual(grant.tokenExpiry, .at(.seconds(Int64(GrantVerifier.relayLinkTokenLifetime))))
    }

    func testTheTokenOpensNoOtherChannelUidOrTime() throws {
        let token = try grants.relayLinkToken(channel: "show", uid: uid, unixNow: issued, random: .max)
        XCTAssertThrowsError(try grants.grant(token, channel: "other", uid: uid, unixNow: issued, now: .zero).get())
        XCTAssertThrowsError(try grants.grant(token, channel: "show", uid: uid + 1, unixNow: issued, now: .zero).get())
        XCTAssertThrowsError(try grants.grant(token, channel: "show", uid: uid, unixNow: issued + GrantVerifier.relayLinkTokenLifetime + 1,
                                              now: .zero).get(), "expired")
        let other = GrantVerifier(appID: "970CA35de60c44645bbae8a215061b33", appCertificate: "0000000000000000000000000000000a")
        XCTAssertThrowsError(try other.grant(token, channel: "show", uid: uid, unixNow: issued, now: .zero).get(), "another app's certificate")
    }
}
