import Rooms
import ShowroomWire
import ShowroomTesting
import XCTest

final class RoomLifecycleTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000
    let minute: Int64 = 60_000

    // MARK: tick

    func testRoomExpiresAfterItsLifetime() {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        _ = registry.ownerPresence(channel: "r", uid: 7, present: true, nowMs: t0 + 1)
        XCTAssertTrue(registry.tick(nowMs: t0 + 20 * minute - 1).isEmpty, "not before its time")
        let changes = registry.tick(nowMs: t0 + 20 * minute)
        XCTAssertEqual(changes.count, 1)
        XCTAssertEqual(changes.first?.notice, .roomExpired)
        XCTAssertEqual(changes.first?.room.state, .closed)
        XCTAssertEqual(changes.first?.room.closeReason, .expired)
        XCTAssertEqual(changes.first?.room.closedAtMs, t0 + 20 * minute)
        XCTAssertTrue(registry.tick(nowMs: t0 + 20 * minute).isEmpty, "tick is idempotent")
        XCTAssertTrue(registry.tick(nowMs: t0 + 21 * minute).isEmpty)
    }

    func testOwnerWhoNeverJoinsClosesTheRoomAfterTheGrace() {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        XCTAssertTrue(registry.tick(nowMs: t0 + 5 * minute - 1).isEmpty)
        let changes = registry.tick(nowMs: t0 + 5 * minute)
        XCTAssertEqual(changes.map(\.notice), [.roomDestroyed])
        XCTAssertEqual(changes.first?.room.closeReason, .ownerOffline)
    }

    func testOwnerPresenceHoldsTheRoomOpenAndAbsenceRestartsTheGrace() {
        var registry = RoomRegistry()
        registry.mustCreate("r", owner: 7, channel: "stage", nowMs: t0)

        let joined = registry.ownerPresence(channel: "stage", uid: 7, present: true, nowMs: t0 + minute)
        XCTAssertEqual(joined.count, 1)
        XCTAssertEqual(joined.first?.room.ownerOfflineSinceMs, 0)
        XCTAssertEqual(joined.first?.room.version, 2)
        XCTAssertNil(joined.first?.notice)
        XCTAssertTrue(registry.ownerPresence(channel: "stage", uid: 7, present: true, nowMs: t0 + minute).isEmpty,
                      "no change, no version bump")
        XCTAssertTrue(registry.ownerPresence(channel: "stage", uid: 8, present: false, nowMs: t0 + minute).isEmpty,
                      "another uid leaving is not the owner")
        XCTAssertTrue(registry.ownerPresence(channel: "r", uid: 7, present: false, nowMs: t0 + minute).isEmpty,
                      "the room runs in its channel, not one named after its id")

        XCTAssertTrue(registry.tick(nowMs: t0 + 10 * minute).isEmpty, "the owner is there")

        let left = registry.ownerPresence(channel: "stage", uid: 7, present: false, nowMs: t0 + 10 * minute)
        XCTAssertEqual(left.first?.room.ownerOfflineSinceMs, t0 + 10 * minute)
        XCTAssertTrue(registry.ownerPresence(channel: "stage", uid: 7, present: false, nowMs: t0 + 11 * minute).isEmpty,
                      "absence keeps its first time")
        XCTAssertTrue(registry.tick(nowMs: t0 + 15 * minute - 1).isEmpty)
        XCTAssertEqual(registry.tick(nowMs: t0 + 15 * minute).first?.room.closeReason, .ownerOffline)
        XCTAssertTrue(registry.ownerPresence(channel: "stage", uid: 7, present: true, nowMs: t0 + 16 * minute).isEmpty,
                      "closed rooms do not track presence")
    }

    func testEarlierDeadlineNamesTheReasonWhenTicksWereMissed() {
        var registry = RoomRegistry()
        registry.mustCreate("gone-owner", nowMs: t0)
        registry.mustCreate("expired", nowMs: t0)
        _ = registry.ownerPresence(channel: "expired", uid: 7, present: true, nowMs: t0)
        _ = registry.ownerPresence(channel: "expired", uid: 7, present: false, nowMs: t0 + 19 * minute)
        let changes = registry.tick(nowMs: t0 + 30 * minute)
        XCTAssertEqual(changes.map(\.room.roomID), ["expired", "gone-owner"])
        XCTAssertEqual(changes.map(\.room.closeReason), [.expired, .ownerOffline])
        XCTAssertEqual(changes.map(\.notice), [.roomExpired, .roomDestroyed])
    }

    func testClosedRoomsArePurgedAfterRetention() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        _ = try registry.sendChat(Requests.chat("r", text: "x"), nowMs: t0)
        let closed = try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + minute)
        XCTAssertTrue(registry.tick(nowMs: t0 + 11 * minute - 1).isEmpty, "kept for GET until retention ends")
        XCTAssertNotNil(registry.room("r"))
        let purged = registry.tick(nowMs: t0 + 11 * minute)
        XCTAssertEqual(purged, [RoomChange(room: closed.room, purged: true)])
        XCTAssertNil(registry.room("r"))
        assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.get(Requests.get("r")) }
        XCTAssertTrue(registry.tick(nowMs: t0 + 12 * minute).isEmpty)
        // The id is free again.
        registry.mustCreate("r", nowMs: t0 + 12 * minute)
    }

    // MARK: merge / forget

    func testMergeKeepsTheHigherVersionAndOursOnEqual() throws {
        var ours = RoomRegistry()
        ours.mustCreate("r", nowMs: t0)
        _ = try ours.join(Requests.join("r", uid: 1), nowMs: t0 + 1)   // version 2

        var newer = try XCTUnwrap(ours.room("r"))
        newer.version = 3
        newer.audienceUids = [1, 2]
        newer.audienceCount = 2
        var sameVersion = newer
        sameVersion.version = 2
        sameVersion.name = "theirs"
        var older = newer
        older.version = 1

        // Two records of one version: every holder keeps the same one, whichever arrives where.
        var theirs = RoomRegistry()
        _ = theirs.merge(rooms: [sameVersion], messages: [])
        _ = theirs.merge(rooms: [try XCTUnwrap(ours.room("r"))], messages: [])
        _ = ours.merge(rooms: [sameVersion], messages: [])
        XCTAssertEqual(ours.room("r"), theirs.room("r"), "equal versions: one record wins on every holder")
        let kept = try XCTUnwrap(ours.room("r"))
        XCTAssertTrue(ours.merge(rooms: [older], messages: []).isEmpty)
        XCTAssertEqual(ours.room("r"), kept)
        let applied = ours.merge(rooms: [newer], messages: [])
        XCTAssertEqual(applied, [RoomChange(room: newer)])
        XCTAssertEqual(ours.room("r"), newer)
    }

    func testAnOwnersWriteFromAnOlderRecordIsHeldOver() throws {
        var replica = RoomRegistry()
        replica.mustCreate("r", nowMs: t0)
        _ = try replica.join(Requests.join("r", uid: 1), nowMs: t0 + 1)   // version 2
        let held = try XCTUnwrap(replica.room("r"))
        var older = held
        older.version = 1
        var rival = held
        rival.name = "another record of the same version"
        var newer = held
        newer.version = 3
        var unknown = held
        unknown.roomID = "s"
        XCTAssertEqual(replica.heldOver([older]), [held], "the owner had not seen version 2")
        XCTAssertEqual(replica.heldOver([rival]), [held], "two records of one version: neither is acknowledged over the other")
        XCTAssertEqual(replica.heldOver([held, newer, unknown]), [], "the same, a newer or an unknown room is taken")
    }

    func testMergeBringsNewRoomsAndMessagesByRoomAndSequence() throws {
        var owner = RoomRegistry()
        owner.mustCreate("r", nowMs: t0)
        for index in 1...3 { _ = try owner.sendChat(Requests.chat("r", text: "m\(index)"), nowMs: t0 + Int64(index)) }
        let room = try XCTUnwrap(owner.room("r"))
        let messages = owner.messages(in: "r")

        var successor = RoomRegistry()
        var orphan = messages[0]
        orphan.roomID = "unknown"
        let applied = successor.merge(rooms: [room], messages: messages + [orphan])
        XCTAssertEqual(applied.count, 4, "the room and its three messages")
        XCTAssertEqual(applied.compactMap(\.message).map(\.sequence), [1, 2, 3])
        XCTAssertTrue(applied.allSatisfy { $0.notice == nil })
        XCTAssertEqual(successor.messages(in: "r"), messages)
        XCTAssertTrue(successor.messages(in: "unknown").isEmpty, "messages of rooms not held are not kept")
        XCTAssertTrue(successor.merge(rooms: [room], messages: messages).isEmpty, "merging again changes nothing")

        // The successor goes on where the owner stopped.
        let next = try successor.sendChat(Requests.chat("r", text: "m4"), nowMs: t0 + 10)
        XCTAssertEqual(next.message?.sequence, 4)
    }

    func testTheChatFollowsTheRecordThatWins() throws {
        var base = RoomRegistry()
        base.mustCreate("r", nowMs: t0)
        _ = try base.sendChat(Requests.chat("r", text: "both"), nowMs: t0 + 1)
        var loser = base
        var winner = base
        _ = try loser.sendChat(Requests.chat("r", text: "lost 2"), nowMs: t0 + 2)
        _ = try loser.sendChat(Requests.chat("r", text: "lost 3"), nowMs: t0 + 3)
        let raised = try XCTUnwrap(winner.raiseVersion(of: "r", termMs: t0 + 4))
        XCTAssertEqual(raised.version, UInt64(t0 + 4) * 1_000, "a term of its own, above the old owner's")
        XCTAssertEqual(winner.raiseVersion(of: "r", termMs: 1)?.version, raised.version + 1_000, "a clock behind still raises")
        _ = try winner.sendChat(Requests.chat("r", text: "kept 2"), nowMs: t0 + 4)
        let applied = loser.merge(rooms: [try XCTUnwrap(winner.room("r"))], messages: winner.messages(in: "r"))
        XCTAssertEqual(loser.room("r"), winner.room("r"))
        XCTAssertEqual(loser.messages(in: "r").map(\.text), ["both", "kept 2"], "the losing side's numbers go")
        XCTAssertEqual(applied.flatMap(\.droppedMessageSequences), [3], "number 3 is deleted from the store")
        XCTAssertTrue(winner.merge(rooms: [try XCTUnwrap(base.room("r"))], messages: loser.messages(in: "r")).isEmpty,
                      "an older record and its chat change nothing")
    }

    func testMergeTrimsHistory() throws {
        var owner = RoomRegistry()
        owner.mustCreate("r", nowMs: t0)
        for index in 1...5 { _ = try owner.sendChat(Requests.chat("r", text: "m\(index)"), nowMs: t0 + Int64(index)) }
        var successor = RoomRegistry(settings: RoomSettings(chatHistoryKept: 3))
        _ = successor.merge(rooms: [try XCTUnwrap(owner.room("r"))], messages: Array(owner.messages(in: "r").prefix(2)))
        let applied = successor.merge(rooms: [], messages: owner.messages(in: "r"))
        XCTAssertEqual(applied.compactMap(\.message).map(\.sequence), [3, 4, 5])
        XCTAssertEqual(applied.last?.droppedMessageSequences, [1, 2], "stored messages trimmed are reported once")
        XCTAssertEqual(successor.messages(in: "r").map(\.sequence), [3, 4, 5])
    }

    func testForgetDropsRoomsAndMessages() throws {
        var registry = RoomRegistry()
        registry.mustCreate("a", nowMs: t0)
        registry.mustCreate("b", nowMs: t0)
        _ = try registry.sendChat(Requests.chat("a", text: "x"), nowMs: t0)
        registry.forget(["a", "missing"])
        XCTAssertNil(registry.room("a"))
        XCTAssertTrue(registry.messages(in: "a").isEmpty)
        XCTAssertTrue(registry.ownerPresence(channel: "a", uid: 7, present: true, nowMs: t0).isEmpty)
        XCTAssertNotNil(registry.room("b"))
    }
}
