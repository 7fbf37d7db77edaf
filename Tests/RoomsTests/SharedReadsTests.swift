import Rooms
import XCTest

final class SharedReadsTests: XCTestCase {
    private typealias Reads = SharedReads<String, Int, String>

    /// Whether the read asks the edges now.
    private func asksNow(_ read: Reads.Read) -> Bool {
        if case .askNow = read { return true }
        return false
    }

    /// Whether the read waits for a round.
    private func waits(_ read: Reads.Read) -> Bool {
        if case .waits = read { return true }
        return false
    }

    /// The kept answer a read is served, or nil if it asks or waits.
    private func kept(_ read: Reads.Read) -> String? {
        if case .answered(let answer) = read { return answer }
        return nil
    }

    func testCallersArrivingWhileAQuestionIsOutShareTheNextRound() {
        var reads = Reads(maxKept: 0)  // nothing kept: rounds alone
        XCTAssertTrue(asksNow(reads.ask("show", topic: "show", for: 1, nowMs: 0)), "nothing out: ask now")
        XCTAssertTrue(waits(reads.ask("show", topic: "show", for: 2, nowMs: 0)), "out already: wait for the next round")
        XCTAssertTrue(waits(reads.ask("show", topic: "show", for: 3, nowMs: 0)))
        XCTAssertTrue(asksNow(reads.ask("other", topic: "other", for: 4, nowMs: 0)), "another question is asked on its own")
        XCTAssertEqual(reads.questionsOut, 2)

        // The round out answers only the caller that was there when it went out.
        let first = reads.answered("show", with: "a", from: ["edge-1"], complete: true, nowMs: 1)
        XCTAssertEqual(first.callers, [1])
        XCTAssertTrue(first.askAgain, "callers 2 and 3 arrived meanwhile")
        XCTAssertTrue(waits(reads.ask("show", topic: "show", for: 5, nowMs: 1)), "the second round is out now")
        let second = reads.answered("show", with: "b", from: ["edge-1"], complete: true, nowMs: 2)
        XCTAssertEqual(second.callers, [2, 3])
        XCTAssertTrue(second.askAgain)
        let third = reads.answered("show", with: "c", from: ["edge-1"], complete: true, nowMs: 3)
        XCTAssertEqual(third.callers, [5])
        XCTAssertFalse(third.askAgain)

        XCTAssertEqual(reads.answered("other", with: "d", from: [], complete: true, nowMs: 3).callers, [4])
        XCTAssertEqual(reads.questionsOut, 0)
        XCTAssertEqual(reads.keptCount, 0)
        XCTAssertTrue(asksNow(reads.ask("show", topic: "show", for: 6, nowMs: 4)), "all answered, nothing kept: the next caller asks anew")
        XCTAssertEqual(reads.answered("never asked", with: "e", from: [], complete: true, nowMs: 4).callers, [],
                       "an answer nobody waits for is dropped")
    }

    func testACompleteAnswerServesUntilItsEdgeReportsOrItsChannelMoves() {
        var reads = Reads(keepMs: 1000)
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 1, nowMs: 0)))
        _ = reads.answered("room-1", with: "alice", from: ["edge-1"], complete: true, nowMs: 10)
        XCTAssertEqual(kept(reads.ask("room-1", topic: "room-1", for: 2, nowMs: 20)), "alice", "kept: served at once")
        XCTAssertEqual(reads.questionsOut, 0, "no round for a kept answer")

        // Another edge's report, another channel's activity: still kept.
        reads.heard(from: "edge-2", about: ["room-9"])
        XCTAssertEqual(kept(reads.ask("room-1", topic: "room-1", for: 3, nowMs: 30)), "alice")
        // The channel's activity: asked anew.
        reads.heard(from: nil, about: ["room-1"])
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 4, nowMs: 40)))
        _ = reads.answered("room-1", with: "alice+bob", from: ["edge-1"], complete: true, nowMs: 45)
        XCTAssertEqual(kept(reads.ask("room-1", topic: "room-1", for: 5, nowMs: 50)), "alice+bob")
        // A report of the edge it came from: asked anew.
        reads.heard(from: "edge-1", about: [])
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 6, nowMs: 60)))
        _ = reads.answered("room-1", with: "bob", from: ["edge-1"], complete: true, nowMs: 65)
        // A ban enforced: everything asked anew.
        reads.forgetAll()
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 7, nowMs: 70)))
        _ = reads.answered("room-1", with: "bob", from: ["edge-1"], complete: true, nowMs: 75)
        // No report for a whole period: asked anew all the same.
        XCTAssertEqual(kept(reads.ask("room-1", topic: "room-1", for: 8, nowMs: 1074)), "bob")
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 9, nowMs: 1075)), "a period old: asked anew")
    }

    func testAnAnswerAChangeOvertookOrThatMissesAnEdgeIsHandedOutButNotKept() {
        var reads = Reads()
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 1, nowMs: 0)))
        reads.heard(from: nil, about: ["room-1"])  // while the round is out
        XCTAssertEqual(reads.answered("room-1", with: "old", from: ["edge-1"], complete: true, nowMs: 5).callers, [1],
                       "its caller arrived before the round went out: the answer is for it")
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 2, nowMs: 6)), "not kept: the change may not be in it")

        _ = reads.answered("room-1", with: "partial", from: ["edge-1", "edge-2"], complete: false, nowMs: 7)
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 3, nowMs: 8)), "an edge did not answer: not kept")

        // Any edge reporting overtakes every round out (which edges a round asks is the shell's).
        reads.heard(from: "edge-7", about: [])
        _ = reads.answered("room-1", with: "maybe", from: ["edge-1"], complete: true, nowMs: 9)
        XCTAssertTrue(asksNow(reads.ask("room-1", topic: "room-1", for: 4, nowMs: 10)))
        reads.forgetAll()
        _ = reads.answered("room-1", with: "maybe", from: ["edge-1"], complete: true, nowMs: 11)
        XCTAssertEqual(reads.keptCount, 0, "a ban enforced while the round was out: not kept")
    }

    func testHostileClocksAndTheBoundOnKeptAnswers() {
        var reads = Reads(keepMs: 1000, maxKept: 2)
        for (index, channel) in ["a", "b", "c"].enumerated() {
            XCTAssertTrue(asksNow(reads.ask(channel, topic: channel, for: index, nowMs: Int64(index))))
            _ = reads.answered(channel, with: channel, from: ["edge-1"], complete: true, nowMs: Int64(index))
        }
        XCTAssertEqual(reads.keptCount, 2, "at most maxKept answers")
        XCTAssertTrue(asksNow(reads.ask("a", topic: "a", for: 9, nowMs: 5)), "the oldest went first")
        XCTAssertEqual(kept(reads.ask("c", topic: "c", for: 10, nowMs: 5)), "c")

        // A clock that jumps back, or to the far ends of its range, does not keep an answer alive or trap.
        XCTAssertTrue(asksNow(reads.ask("c", topic: "c", for: 11, nowMs: -5)), "a clock gone back: the answer counts as old")
        _ = reads.answered("c", with: "c", from: ["edge-1"], complete: true, nowMs: .min)
        XCTAssertTrue(asksNow(reads.ask("c", topic: "c", for: 12, nowMs: .max)))
        _ = reads.answered("c", with: "c", from: ["edge-1"], complete: true, nowMs: .max)
        XCTAssertTrue(asksNow(reads.ask("c", topic: "c", for: 13, nowMs: .min)))
        XCTAssertEqual(Reads(keepMs: -5, maxKept: -1).keepMs, 0, "negative settings are none")
    }
}
