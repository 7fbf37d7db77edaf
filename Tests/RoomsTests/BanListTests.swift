import Rooms
import ShowroomWire
import XCTest

final class BanListTests: XCTestCase {
    func testSameKeyKeepsTheLaterEndAndUnionsPrivileges() {
        var list = BanList()
        XCTAssertEqual(list.add(ban("show", 5, [2], until: 1000)), ban("show", 5, [2], until: 1000))
        let combined = list.add(ban("show", 5, [3, 2], until: 500))
        XCTAssertEqual(combined, ban("show", 5, [2, 3], until: 1000), "an earlier end does not shorten the ban")
        XCTAssertEqual(list.add(ban("show", 5, [1], until: 2000)), ban("show", 5, [1, 2, 3], until: 2000))
        XCTAssertEqual(list.bans.count, 1)
        XCTAssertEqual(list.add(ban("show", 6, [], until: 100)).privileges, [1], "no privilege listed means join")
        XCTAssertEqual(list.bans[BanKey(channel: "show", uid: 6)]?.untilMs, 100)
    }

    func testActiveAndPurge() {
        var list = BanList()
        list.add(ban("b", 1, [1], until: 100))
        list.add(ban("a", 2, [1], until: 200))
        list.add(ban("a", 1, [1], until: 300))
        XCTAssertEqual(list.active(nowMs: 99).map { "\($0.channel)/\($0.uid)" }, ["a/1", "a/2", "b/1"])
        XCTAssertEqual(list.active(nowMs: 100).map { "\($0.channel)/\($0.uid)" }, ["a/1", "a/2"], "a ban ends at untilMs")
        XCTAssertEqual(list.purge(nowMs: 200).map { "\($0.channel)/\($0.uid)" }, ["a/2", "b/1"])
        XCTAssertEqual(list.bans.keys.map { "\($0.channel)/\($0.uid)" }, ["a/1"])
        XCTAssertTrue(list.purge(nowMs: 200).isEmpty)
    }

    func testMergeReportsOnlyChangedBans() {
        var list = BanList()
        list.add(ban("show", 5, [2], until: 1000))
        let changed = list.merge([
            ban("show", 5, [2], until: 900),    // nothing new
            ban("show", 6, [1], until: 50),      // new key
            ban("show", 5, [3], until: 1000),   // a privilege more
        ])
        XCTAssertEqual(changed, [ban("show", 5, [2, 3], until: 1000), ban("show", 6, [1], until: 50)])
        XCTAssertTrue(list.merge([ban("show", 6, [1], until: 50)]).isEmpty)
    }

    private func ban(_ channel: String, _ uid: UInt32, _ privileges: [UInt32], until: Int64) -> RoomBan {
        var ban = RoomBan()
        ban.channel = channel
        ban.uid = uid
        ban.privileges = privileges
        ban.untilMs = until
        return ban
    }

    func testAKickNamesAValidChannelAndUidAndADurationUpToADay() throws {
        var kick = RoomKickRequest()
        kick.channel = "room-1"
        kick.uid = 9
        kick.banSeconds = 60
        let ban = try BanList.ban(for: kick, nowMs: 1_000)
        XCTAssertEqual(ban.untilMs, 61_000)
        XCTAssertEqual(ban.privileges, [BanList.joinPrivilege])
        for channel in ["", String(repeating: "c", count: 65), "bad/name", "tab\there"] {
            var bad = kick
            bad.channel = channel
            XCTAssertThrowsError(try BanList.ban(for: bad, nowMs: 0), channel) {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
            }
        }
        var noUid = kick
        noUid.uid = 0
        XCTAssertThrowsError(try BanList.ban(for: noUid, nowMs: 0))
        var long = kick
        long.banSeconds = 86_401
        XCTAssertThrowsError(try BanList.ban(for: long, nowMs: 0))
        var privilege = kick
        privilege.privileges = [4]
        XCTAssertThrowsError(try BanList.ban(for: privilege, nowMs: 0))
        // A hostile clock does not trap.
        XCTAssertNoThrow(try BanList.ban(for: kick, nowMs: .max))
    }
}
