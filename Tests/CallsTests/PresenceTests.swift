import Calls
import XCTest

final class PresenceTests: XCTestCase {
    let t0: Int64 = 5_000_000

    func testLoginLogoutAndANewerLoginReplacesTheOlder() {
        var presence = Presence()
        XCTAssertTrue(presence.login(uid: 7, session: "s1", tokenExpiresAtMs: t0 + 3_600_000, nowMs: t0).isEmpty)
        XCTAssertTrue(presence.isOnline(7))
        let replaced = presence.login(uid: 7, session: "s2", tokenExpiresAtMs: t0 + 3_600_000, nowMs: t0 + 1)
        XCTAssertEqual(replaced.count, 1)
        guard case .ended(let old, .replaced) = replaced.first else { return XCTFail("\(replaced)") }
        XCTAssertEqual(old.id, "s1")
        XCTAssertNil(presence.session("s1", nowMs: t0 + 2))
        XCTAssertEqual(presence.session("s2", nowMs: t0 + 2)?.uid, 7)
        XCTAssertEqual(presence.logout("s2").count, 1)
        XCTAssertFalse(presence.isOnline(7))
        XCTAssertTrue(presence.logout("s2").isEmpty, "logged out once")
    }

    func testASilentSessionTimesOutAndAHeardOneStays() {
        var presence = Presence(heartbeatTimeoutMs: 10_000)
        _ = presence.login(uid: 1, session: "a", tokenExpiresAtMs: t0 + 3_600_000, nowMs: t0)
        _ = presence.login(uid: 2, session: "b", tokenExpiresAtMs: t0 + 3_600_000, nowMs: t0)
        _ = presence.session("b", nowMs: t0 + 9_000)
        let ended = presence.tick(nowMs: t0 + 10_000)
        XCTAssertEqual(ended.count, 1)
        guard case .ended(let session, .timedOut) = ended.first else { return XCTFail("\(ended)") }
        XCTAssertEqual(session.uid, 1)
        XCTAssertTrue(presence.isOnline(2))
    }

    func testTheTokenIsWarnedOnce30SecondsAheadThenEndsTheSessionUnlessRenewed() {
        var presence = Presence(heartbeatTimeoutMs: 1_000_000)
        _ = presence.login(uid: 1, session: "a", tokenExpiresAtMs: t0 + 60_000, nowMs: t0)
        XCTAssertTrue(presence.tick(nowMs: t0 + 29_999).isEmpty)
        XCTAssertEqual(presence.tick(nowMs: t0 + 30_000).count, 1)
        XCTAssertTrue(presence.tick(nowMs: t0 + 31_000).isEmpty, "warned once")
        presence.renew("a", tokenExpiresAtMs: t0 + 120_000, nowMs: t0 + 40_000)
        XCTAssertTrue(presence.tick(nowMs: t0 + 60_000).isEmpty, "renewed in time")
        XCTAssertEqual(presence.tick(nowMs: t0 + 90_000).count, 1, "warned again for the new token")
        let ended = presence.tick(nowMs: t0 + 120_000)
        guard case .ended(_, .tokenExpired) = ended.first else { return XCTFail("\(ended)") }
        XCTAssertFalse(presence.isOnline(1))
    }
}

final class DialRateLimitTests: XCTestCase {
    func testAUserMayDialTenTimesInTenSecondsAndThenWaits() {
        var limit = DialRateLimit(limit: 10, windowMs: 10_000)
        let t0: Int64 = 1_000
        for n in 0..<10 { XCTAssertTrue(limit.admit(7, nowMs: t0 + Int64(n) * 100), "dial \(n)") }
        XCTAssertFalse(limit.admit(7, nowMs: t0 + 1_000))
        XCTAssertEqual(limit.nextAllowedMs(7, nowMs: t0 + 1_000), t0 + 10_000)
        XCTAssertTrue(limit.admit(8, nowMs: t0 + 1_000), "another user is not limited by it")
        XCTAssertTrue(limit.admit(7, nowMs: t0 + 10_000), "the oldest dial left the window")
        limit.purge(nowMs: t0 + 30_000)
        XCTAssertEqual(limit.trackedUsers, 0)
    }

    func testAnAdoptedSessionStaysLoggedInAndTheNewerLoginWins() {
        var presence = Presence(heartbeatTimeoutMs: 10_000)
        let state = UserRecord.SessionState(id: "7-old", loggedInAtMs: 1_000, tokenExpiresAtMs: 900_000)
        presence.adopt(state, uid: 7, nowMs: 50_000)
        XCTAssertTrue(presence.isOnline(7))
        XCTAssertEqual(presence.state(of: 7), state)
        XCTAssertTrue(presence.tick(nowMs: 59_999).isEmpty, "heard from at adoption")
        _ = presence.login(uid: 7, session: "7-new", tokenExpiresAtMs: 900_000, nowMs: 55_000)
        presence.adopt(state, uid: 7, nowMs: 56_000)
        XCTAssertEqual(presence.sessionOf[7], "7-new", "an older replica does not replace a newer login")
        presence.release(7)
        XCTAssertFalse(presence.isOnline(7))
        XCTAssertTrue(presence.tick(nowMs: 100_000).isEmpty, "released, not ended: no directive")
    }
}
