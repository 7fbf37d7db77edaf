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
        // Ended bans are kept a day (so no older copy brings them back), then forgotten.
        XCTAssertTrue(list.purge(nowMs: 200).isEmpty)
        XCTAssertEqual(list.held.count, 3)
        XCTAssertEqual(list.purge(nowMs: 200 + BanList.tombstoneMs).map { "\($0.channel)/\($0.uid)" }, ["a/2", "b/1"])
        XCTAssertEqual(list.bans.keys.map { "\($0.channel)/\($0.uid)" }, ["a/1"])
        XCTAssertTrue(list.purge(nowMs: 200 + BanList.tombstoneMs).isEmpty)
    }

    private func rule(_ channel: String, _ uid: UInt32, _ privileges: [UInt32] = [1], seconds: UInt32) -> RoomBanRuleCreate {
        RoomBanRuleCreate.with { $0.channel = channel; $0.uid = uid; $0.privileges = privileges; $0.seconds = seconds }
    }

    func testARuleNamesAChannelAUidOrBothWithPrivilegesAndADuration() throws {
        let both = try BanList.rule(for: rule("show", 5, [2, 2, 3], seconds: 60), nowMs: 1_000)
        XCTAssertEqual(both.privileges, [2, 3])
        XCTAssertEqual(both.untilMs, 61_000)
        XCTAssertEqual(both.updatedAtMs, 1_000)
        XCTAssertNoThrow(try BanList.rule(for: rule("", 5, seconds: 10), nowMs: 0), "a uid in every channel")
        XCTAssertNoThrow(try BanList.rule(for: rule("show", 0, seconds: 10), nowMs: 0), "everyone in a channel")
        XCTAssertEqual(try BanList.rule(for: rule("show", 0, seconds: 0), nowMs: 7).untilMs, 7, "0 s: a kick, no rule")
        for bad in [rule("", 0, seconds: 10), rule("show", 5, [], seconds: 10), rule("show", 5, [4], seconds: 10),
                    rule("show", 5, seconds: 86_431), rule("bad/name", 5, seconds: 10), rule(String(repeating: "c", count: 65), 5, seconds: 10)] {
            XCTAssertThrowsError(try BanList.rule(for: bad, nowMs: 0), "\(bad)") {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
            }
        }
        XCTAssertNoThrow(try BanList.rule(for: rule("show", 5, seconds: 60), nowMs: .max), "a hostile clock does not trap")
    }

    func testARuleMayNameAnAddressKeptInOneSpellingBesideTheRuleForEveryAddress() throws {
        var fromThere = rule("show", 5, seconds: 60)
        fromThere.ip = "::FFFF:10.0.0.5"
        let ban = try BanList.rule(for: fromThere, nowMs: 0)
        XCTAssertEqual(ban.ip, "10.0.0.5", "IPv4-mapped IPv6 is the IPv4 address, as edges see it")
        var anywhere = rule("", 0, seconds: 60)
        anywhere.ip = "2001:DB8:0::1"
        XCTAssertEqual(try BanList.rule(for: anywhere, nowMs: 0).ip, "2001:db8::1", "an address alone is a filter")
        for bad in ["localhost", "10.0.0.5:80", "10.0.0.0/8", "fe80::1%eth0", "1.2.3", String(repeating: "9", count: 10_000)] {
            var hostile = rule("show", 5, seconds: 60)
            hostile.ip = bad
            XCTAssertThrowsError(try BanList.rule(for: hostile, nowMs: 0), bad) {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
                XCTAssertTrue(($0 as? ShowroomError)?.message.contains("not an IPv4 or IPv6 address") == true)
            }
        }
        // One rule per filter: the address makes another rule, with another id.
        var list = BanList()
        let plain = list.add(try BanList.rule(for: rule("show", 5, seconds: 60), nowMs: 0))
        list.add(ban)
        XCTAssertEqual(list.bans.count, 2)
        XCTAssertNotEqual(BanList.ruleID(of: plain), BanList.ruleID(of: ban))
        XCTAssertEqual(BanList.ruleID(of: plain), BanList.ruleID(channel: "show", uid: 5), "ids of rules without an address are unchanged")
        XCTAssertEqual(list.rule(id: BanList.ruleID(of: ban))?.ip, "10.0.0.5")
        XCTAssertEqual(list.active(nowMs: 1).map(\.ip), ["", "10.0.0.5"])
        // A copy from a peer with an address the edges would refuse is not taken.
        var odd = ban
        odd.ip = "10.000.0.5"
        odd.uid = 6
        XCTAssertEqual(list.merge([odd]), [])
        XCTAssertEqual(list.bans.count, 2)
    }

    func testABanRuleRequestMakesChangesLiftsAndListsRules() throws {
        var list = BanList()
        func request(_ change: RoomBanRuleRequest.OneOf_Change?) -> RoomBanRuleRequest {
            var request = RoomBanRuleRequest()
            request.change = change
            return request
        }
        // Made, then made again for the same filter: one rule, joined.
        guard case .enforce(let made, keep: true) = try list.change(request(.create(rule("show", 5, [2], seconds: 60))), nowMs: 1_000)
        else { return XCTFail("a rule is enforced and kept") }
        XCTAssertEqual(made.untilMs, 61_000)
        guard case .enforce(let joined, keep: true) = try list.change(request(.create(rule("show", 5, [3], seconds: 10))), nowMs: 2_000)
        else { return XCTFail("a rule is enforced and kept") }
        XCTAssertEqual(joined.privileges, [2, 3])
        XCTAssertEqual(joined.untilMs, 61_000, "the later end stands")
        // 0 seconds: a kick, enforced, keeping nothing.
        guard case .enforce(_, keep: false) = try list.change(request(.create(rule("other", 0, seconds: 0))), nowMs: 2_000)
        else { return XCTFail("a kick keeps no rule") }
        XCTAssertEqual(try list.change(request(.list(true)), nowMs: 3_000), .list([joined]))

        // Changed from now, later than any copy; then lifted, kept as a tombstone, not listed.
        let id = BanList.ruleID(of: joined)
        var update = RoomBanRuleUpdate()
        update.id = id
        update.seconds = 5
        guard case .enforce(let shorter, keep: true) = try list.change(request(.update(update)), nowMs: 3_000)
        else { return XCTFail("a change is enforced") }
        XCTAssertEqual(shorter.untilMs, 8_000)
        XCTAssertGreaterThan(shorter.updatedAtMs, joined.updatedAtMs)
        guard case .enforce(let lifted, keep: true) = try list.change(request(.deleteID(id)), nowMs: 3_000)
        else { return XCTFail("a lifting is enforced") }
        XCTAssertTrue(lifted.lifted)
        XCTAssertEqual(try list.change(request(.list(true)), nowMs: 3_000), .list([]))
        XCTAssertEqual(list.held.count, 1)

        // Refusals change nothing: a rule not in force, a duration too long, no change named, a full list.
        for (bad, code) in [(request(.deleteID(id)), ShowroomError.Code.banRuleNotFound),
                            (request(.update(update)), .banRuleNotFound),
                            (request(.create(rule("show", 6, seconds: BanList.maxRuleSeconds + 1))), .invalidArgument),
                            (request(nil), .invalidArgument)] {
            XCTAssertThrowsError(try list.change(bad, nowMs: 3_000), "\(bad)") { XCTAssertEqual(($0 as? ShowroomError)?.code, code) }
        }
        update.id = BanList.ruleID(channel: "nowhere", uid: 9)
        update.seconds = BanList.maxRuleSeconds + 1
        XCTAssertEqual((try? list.change(request(.update(update)), nowMs: 3_000)), nil)
        var full = BanList()
        for uid in 1...UInt32(BanList.maxBans) { full.add(ban("show", uid, [1], until: 10_000)) }
        XCTAssertThrowsError(try full.change(request(.create(rule("show", 0, seconds: 60))), nowMs: 0)) {
            XCTAssertTrue(($0 as? ShowroomError)?.message.contains("lift some first") == true)
        }
        XCTAssertNoThrow(try full.change(request(.create(rule("show", 7, seconds: 60))), nowMs: 0), "joining a rule held adds none")
        XCTAssertNoThrow(try full.change(request(.create(rule("show", 0, seconds: 0))), nowMs: 0), "a kick keeps nothing, even when full")
        XCTAssertEqual(full.bans.count, BanList.maxBans)
    }

    func testRuleIDsAreTheSameEverywhereAndFindTheirRule() throws {
        XCTAssertEqual(BanList.ruleID(channel: "show", uid: 5), BanList.ruleID(channel: "show", uid: 5))
        XCTAssertNotEqual(BanList.ruleID(channel: "show", uid: 5), BanList.ruleID(channel: "show", uid: 6))
        XCTAssertNotEqual(BanList.ruleID(channel: "", uid: 5), BanList.ruleID(channel: "5", uid: 0))
        XCTAssertGreaterThan(BanList.ruleID(channel: "", uid: 0), 0)
        var list = BanList()
        list.add(try BanList.rule(for: rule("show", 5, seconds: 60), nowMs: 0))
        XCTAssertEqual(list.rule(id: BanList.ruleID(channel: "show", uid: 5))?.uid, 5)
        XCTAssertNil(list.rule(id: BanList.ruleID(channel: "show", uid: 6)))
    }

    func testALaterChangeWinsWholeSoAShortenedOrLiftedRuleStaysSo() throws {
        var here = BanList()
        var there = BanList()
        let made = try BanList.rule(for: rule("show", 5, seconds: 3_600), nowMs: 1_000)
        here.add(made)
        _ = there.merge([made])
        // Here the rule is lifted; there the old copy stays until the change arrives.
        var lifted = made
        lifted.untilMs = 2_000
        lifted.updatedAtMs = 2_000
        lifted.lifted = true
        here.replace(lifted)
        XCTAssertTrue(here.active(nowMs: 2_000).isEmpty)
        // The old copy does not bring it back; the lifting does reach the other copy.
        XCTAssertTrue(here.merge(there.held).isEmpty)
        XCTAssertTrue(here.active(nowMs: 2_000).isEmpty)
        XCTAssertEqual(there.merge(here.held).count, 1)
        XCTAssertTrue(there.active(nowMs: 2_000).isEmpty)
        // A lifted copy taken in, again and again, in any order with a live copy of its moment, stays lifted.
        var fresh = BanList()
        var sameMoment = made
        sameMoment.updatedAtMs = lifted.updatedAtMs
        XCTAssertEqual(fresh.merge([sameMoment, lifted]).first?.lifted, true)
        XCTAssertTrue(fresh.merge([sameMoment, lifted]).isEmpty, "merged twice, nothing changes")
        XCTAssertTrue(fresh.merge([lifted, sameMoment]).isEmpty)
        XCTAssertTrue(fresh.active(nowMs: 0).isEmpty)
        // The same change on two copies combines as before (a kick and a kick).
        var kick = made
        kick.privileges = [2]
        kick.untilMs = 9_000_000
        var both = BanList()
        _ = both.merge([made, kick])
        XCTAssertEqual(both.held.first?.privileges, [1, 2])
        XCTAssertEqual(both.held.first?.untilMs, 9_000_000)
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
