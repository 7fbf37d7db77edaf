import ReplicatedOwnership
import Routing
import XCTest

/// The catch-up after the alive members change: who is asked, what waits, when it is over.
final class CatchUpTests: XCTestCase {
    private func ring(_ ids: [String]) -> OwnerRing { OwnerRing(.coordinator, memberIDs: Set(ids)) }

    func testAStartingMemberWaitsForEveryOtherPageByPageAndOnlyForKeysItTookOver() {
        var catchUp = CatchUp()
        let all = ring(["c1", "c2", "c3"])
        let asks = catchUp.membersChanged(from: nil, to: all, selfID: "c1")
        XCTAssertEqual(asks.map(\.member), ["c2", "c3"])
        XCTAssertTrue(asks.allSatisfy { $0.after.isEmpty })
        let mine = (0..<50).map { "room-\($0)" }.first { all.owner(of: $0) == "c1" }!
        let theirs = (0..<50).map { "room-\($0)" }.first { all.owner(of: $0) != "c1" }!
        XCTAssertTrue(catchUp.mustWait(mine, selfID: "c1"), "at start every key it owns waits")
        XCTAssertFalse(catchUp.mustWait(theirs, selfID: "c1"), "a key owned elsewhere is forwarded, not held")

        XCTAssertTrue(catchUp.takeAsks().isEmpty, "nothing asked twice while in flight")
        XCTAssertEqual(catchUp.answered(asks[0], answered: true, more: true, last: "room-7").map(\.after), ["room-7"])
        XCTAssertTrue(catchUp.answered(asks[1], answered: false, more: false, last: "").isEmpty)
        XCTAssertEqual(catchUp.takeAsks().map(\.member), ["c3"], "a failed ask is asked again")
        let page2 = CatchUp.Ask(member: "c2", round: asks[0].round, after: "room-7")
        _ = catchUp.answered(page2, answered: true, more: false, last: "room-9")
        XCTAssertFalse(catchUp.isCaughtUp)
        _ = catchUp.answered(CatchUp.Ask(member: "c3", round: asks[1].round, after: ""), answered: true, more: false, last: "")
        XCTAssertTrue(catchUp.isCaughtUp)
        XCTAssertFalse(catchUp.mustWait(mine, selfID: "c1"))
    }

    func testAfterAChangeOnlyKeysTakenOverWaitAndOldAnswersAreIgnored() {
        var catchUp = CatchUp()
        let three = ring(["c1", "c2", "c3"])
        for ask in catchUp.membersChanged(from: nil, to: three, selfID: "c1") {
            _ = catchUp.answered(ask, answered: true, more: false, last: "")
        }
        XCTAssertTrue(catchUp.isCaughtUp)
        let two = ring(["c1", "c2"])
        let stale = CatchUp.Ask(member: "c2", round: 1, after: "")
        let asks = catchUp.membersChanged(from: three, to: two, selfID: "c1")
        XCTAssertEqual(asks.map(\.member), ["c2"])
        XCTAssertTrue(catchUp.answered(stale, answered: true, more: false, last: "").isEmpty)
        XCTAssertFalse(catchUp.isCaughtUp, "an answer of an earlier round does not count")
        let keys = (0..<200).map { "room-\($0)" }
        let keptHere = keys.first { three.owner(of: $0) == "c1" }!
        let takenOver = keys.first { three.owner(of: $0) == "c3" && two.owner(of: $0) == "c1" }!
        XCTAssertFalse(catchUp.mustWait(keptHere, selfID: "c1"), "a key owned before and after goes on")
        XCTAssertTrue(catchUp.mustWait(takenOver, selfID: "c1"))
        XCTAssertTrue(catchUp.tookOver(takenOver, selfID: "c1"))
        _ = catchUp.answered(asks[0], answered: true, more: false, last: "")
        XCTAssertFalse(catchUp.mustWait(takenOver, selfID: "c1"))
        XCTAssertTrue(catchUp.tookOver(takenOver, selfID: "c1"), "still taken over in this round: its version is raised once")
    }

    func testARepairAnswersOnlyTheWritesItCarried() {
        var replication = Replication(selfID: "c1", role: .coordinator, scope: .ownerAndSuccessor, members: ["c1", "c2"])
        let first = replication.beginWrite(key: "k")
        XCTAssertNil(replication.replicaAnswered(write: first.id, by: "c2", held: false), "a live replica that failed is owed")
        XCTAssertEqual(replication.owed, ["c2": ["k"]])
        let repairs = replication.takeRepairs()
        XCTAssertEqual(repairs.map(\.member), ["c2"])
        let second = replication.beginWrite(key: "k")
        let done = replication.repaired(repairs[0].keys, by: "c2", held: true, through: repairs[0].through)
        XCTAssertEqual(done.map(\.write), [first.id], "the write made after the repair was sent still waits")
        XCTAssertEqual(replication.owed, ["c2": ["k"]], "and keeps the key owed until it is answered")
        XCTAssertEqual(replication.replicaAnswered(write: second.id, by: "c2", held: true)?.write, second.id)
        // A replica that leaves is waited for no more, and owed nothing.
        let third = replication.beginWrite(key: "k")
        _ = replication.replicaAnswered(write: third.id, by: "c2", held: false)
        let handOver = replication.membersChanged(to: ["c1"], holding: ["k"])
        XCTAssertEqual(handOver.acknowledged, [.init(write: third.id, key: "k", fullyReplicated: false)])
        XCTAssertTrue(replication.owed.isEmpty)
    }
}

/// The terms a take-over begins: once per key, kept while the key stays owned, begun again
/// after it was lost and taken back.
final class TakeOverTests: XCTestCase {
    private func ring(_ ids: [String]) -> OwnerRing { OwnerRing(.coordinator, memberIDs: Set(ids)) }

    func testATermBeginsOncePerTakeOverAndAgainAfterTheKeyWasLostAndTakenBack() throws {
        let three = ring(["c1", "c2", "c3"])
        let two = ring(["c1", "c2"])
        var takeOver = TakeOver(selfID: "c1")
        for ask in try XCTUnwrap(takeOver.membersChanged(to: three, known: three, nowMs: 0)) {
            _ = takeOver.answered(ask, answered: true, more: false, last: "")
        }
        XCTAssertNil(takeOver.membersChanged(to: three, known: three, nowMs: 0), "the same members: nothing to do")
        let keys = (0..<300).map { "room-\($0)" }
        let owned = try XCTUnwrap(keys.first { three.owner(of: $0) == "c1" })
        let fromC3 = try XCTUnwrap(keys.first { three.owner(of: $0) == "c3" && two.owner(of: $0) == "c1" })

        // c3 goes: its keys are taken over; each begins a room term and a series once, dated by
        // when c1 saw c3 go, not by its first write (c3, cut off and unaware, writes with its
        // older view meanwhile, so its terms are older).
        let asks = try XCTUnwrap(takeOver.membersChanged(to: two, known: three, nowMs: 5_000))
        XCTAssertEqual(takeOver.termMs, 5_000)
        XCTAssertEqual(asks.map(\.member), ["c2"])
        XCTAssertTrue(takeOver.mustWait(fromC3), "not before c2 answered")
        _ = takeOver.answered(asks[0], answered: true, more: false, last: "")
        XCTAssertFalse(takeOver.mustWait(fromC3))
        XCTAssertTrue(takeOver.beginsTerm(.roomVersion, of: fromC3))
        takeOver.began(.roomVersion, of: fromC3)
        XCTAssertFalse(takeOver.beginsTerm(.roomVersion, of: fromC3))
        XCTAssertTrue(takeOver.beginsTerm(.channelSeries, of: fromC3), "each term on its own")
        takeOver.began(.channelSeries, of: fromC3)
        XCTAssertFalse(takeOver.beginsTerm(.roomVersion, of: owned), "a key owned all along begins nothing")

        // c2 goes too: what c1 owned before and owns still keeps its term.
        _ = takeOver.membersChanged(to: ring(["c1"]), known: three, nowMs: 0)
        XCTAssertFalse(takeOver.beginsTerm(.roomVersion, of: fromC3))
        // c3 comes back and takes its key; when it goes again, c1 begins a new term.
        for ask in try XCTUnwrap(takeOver.membersChanged(to: three, known: three, nowMs: 0)) {
            _ = takeOver.answered(ask, answered: true, more: false, last: "")
        }
        for ask in try XCTUnwrap(takeOver.membersChanged(to: two, known: three, nowMs: 0)) {
            _ = takeOver.answered(ask, answered: true, more: false, last: "")
        }
        XCTAssertTrue(takeOver.beginsTerm(.roomVersion, of: fromC3))
    }

    func testAMemberBackFromAViewCutOffFromMostOfTheClusterTakesOverEveryKeyItOwnsAsIfItHadJustStarted() throws {
        let three = ring(["c1", "c2", "c3"])
        let alone = ring(["c1"])
        let keys = (0..<300).map { "room-\($0)" }
        let owned = try XCTUnwrap(keys.first { three.owner(of: $0) == "c1" })
        for cutOff in [false, true] {
            var takeOver = TakeOver(selfID: "c1")
            for ask in try XCTUnwrap(takeOver.membersChanged(to: three, known: three, nowMs: 0)) {
                _ = takeOver.answered(ask, answered: true, more: false, last: "")
            }
            // Alone: sure of the cluster's majority (the other roles still seen) or cut off.
            _ = takeOver.membersChanged(to: alone, known: three, nowMs: 1_000, seesMostOfTheCluster: !cutOff)
            XCTAssertFalse(takeOver.beginsTerm(.channelSeries, of: owned), "owned all along, in either view")
            let asks = try XCTUnwrap(takeOver.membersChanged(to: three, known: three, nowMs: 9_000))
            XCTAssertEqual(asks.map(\.member), ["c2", "c3"])
            // Back from a cut-off view, the others may have written its keys meanwhile, and one that
            // has not seen it back yet may still write them: it catches up first, then begins a new
            // term above theirs.
            XCTAssertEqual(takeOver.mustWait(owned), cutOff, cutOff ? "waits for the catch-up" : "owned all along")
            for ask in asks { _ = takeOver.answered(ask, answered: true, more: false, last: "") }
            XCTAssertFalse(takeOver.mustWait(owned))
            XCTAssertEqual(takeOver.beginsTerm(.channelSeries, of: owned), cutOff)
            XCTAssertEqual(takeOver.beginsTerm(.roomVersion, of: owned), cutOff)
            XCTAssertEqual(takeOver.termMs, 9_000)
        }
    }

    func testARequestHeldForACatchUpIsServedOnceItIsOverOrRefusedAtItsDeadline() throws {
        let three = ring(["c1", "c2", "c3"])
        let two = ring(["c1", "c2"])
        var takeOver = TakeOver(selfID: "c1")
        for ask in try XCTUnwrap(takeOver.membersChanged(to: three, known: three, nowMs: 0)) {
            _ = takeOver.answered(ask, answered: true, more: false, last: "")
        }
        let keys = (0..<300).map { "room-\($0)" }
        let fromC3 = try XCTUnwrap(keys.first { three.owner(of: $0) == "c3" && two.owner(of: $0) == "c1" })
        let asks = try XCTUnwrap(takeOver.membersChanged(to: two, known: three, nowMs: 0))
        let early = takeOver.hold(fromC3, deadlineMs: 1_000)
        let late = takeOver.hold(fromC3, deadlineMs: 3_000)
        XCTAssertNotEqual(early, late)
        var released = takeOver.release(nowMs: 500)
        XCTAssertEqual(released.serve, [])
        XCTAssertEqual(released.refuse, [], "nothing before its deadline")
        released = takeOver.release(nowMs: 1_000)
        XCTAssertEqual(released.refuse, [early], "the deadline passed while c2 had not answered")
        _ = takeOver.answered(asks[0], answered: true, more: false, last: "")
        released = takeOver.release(nowMs: 5_000)
        XCTAssertEqual(released.serve, [late], "caught up: served, even past its deadline")
        XCTAssertEqual(takeOver.release(nowMs: 6_000).serve, [], "each request released once")
    }
}
