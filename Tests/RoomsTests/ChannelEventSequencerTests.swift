import Rooms
import ShowroomWire
import XCTest

final class ChannelEventSequencerTests: XCTestCase {
    func testNumbersPerChannelFromOne() throws {
        var sequencer = ChannelEventSequencer()
        var activity = RoomChannelActivity()
        activity.type = .audienceLeft
        activity.channel = "show"
        activity.uid = 42
        activity.reason = .dropped
        activity.atMs = 1000

        let first = try XCTUnwrap(sequencer.number(activity, edge: "edge-a", nowMs: 1005))
        XCTAssertEqual(first.sequence, 1)
        XCTAssertEqual(first.noticeID, "show-1")
        XCTAssertEqual(first.type, .audienceLeft)
        XCTAssertEqual(first.channel, "show")
        XCTAssertEqual(first.uid, 42)
        XCTAssertEqual(first.reason, .dropped)
        XCTAssertEqual(first.atMs, 1000)
        XCTAssertEqual(first.edge, "edge-a")
        XCTAssertEqual(first.notifiedAtMs, 1005)

        XCTAssertEqual(sequencer.number(activity, edge: "edge-a", nowMs: 1006)?.noticeID, "show-2")
        activity.channel = "other"
        XCTAssertEqual(sequencer.number(activity, edge: "edge-b", nowMs: 1007)?.sequence, 1, "each channel counts on its own")
        XCTAssertEqual(sequencer.lastSequence, ["show": 2, "other": 1])
        XCTAssertEqual(sequencer.sequences.map(\.channel), ["other", "show"])
        XCTAssertEqual(sequencer.sequence(of: "show").lastSequence, 2)
    }

    func testMergeKeepsTheHigherNumber() {
        var sequencer = ChannelEventSequencer()
        var activity = RoomChannelActivity()
        activity.channel = "show"
        for _ in 0..<5 { _ = sequencer.number(activity, edge: "e", nowMs: 0) }

        let taken = sequencer.merge([sequence("show", 3), sequence("new", 7), sequence("late", 9)])
        XCTAssertEqual(taken.map(\.channel), ["late", "new"], "a lower number never goes back")
        XCTAssertEqual(sequencer.lastSequence["show"], 5)
        XCTAssertEqual(sequencer.merge([sequence("show", 8)]).map(\.lastSequence), [8])
        activity.channel = "show"
        XCTAssertEqual(sequencer.number(activity, edge: "e", nowMs: 0)?.sequence, 9, "numbering goes on after the merged number")
        activity.channel = "new"
        XCTAssertEqual(sequencer.number(activity, edge: "e", nowMs: 0)?.noticeID, "new-8")
    }

    /// An edge sends again what was not answered: each (origin, origin sequence) is numbered once,
    /// a restarted edge (a new origin) starts over, and activities without an origin are never
    /// taken for repeats.
    func testAnActivitySentAgainIsNumberedOnce() {
        var sequencer = ChannelEventSequencer()
        let first = activity("show", origin: "edge-a/1", 1)
        let second = activity("show", origin: "edge-a/1", 2)
        XCTAssertEqual(sequencer.number(first, edge: "edge-a", nowMs: 0)?.sequence, 1)
        XCTAssertEqual(sequencer.number(second, edge: "edge-a", nowMs: 0)?.sequence, 2)
        XCTAssertNil(sequencer.number(first, edge: "edge-a", nowMs: 0), "the first, sent again")
        XCTAssertNil(sequencer.number(second, edge: "edge-a", nowMs: 0), "the second, sent again")
        XCTAssertEqual(sequencer.number(activity("show", origin: "edge-a/1", 5), edge: "edge-a", nowMs: 0)?.sequence, 3,
                       "numbers of one run may skip (they count across channels)")
        XCTAssertEqual(sequencer.number(activity("show", origin: "edge-a/2", 1), edge: "edge-a", nowMs: 0)?.sequence, 4,
                       "the edge restarted: a new run")
        XCTAssertEqual(sequencer.number(activity("other", origin: "edge-a/1", 2), edge: "edge-a", nowMs: 0)?.sequence, 1,
                       "marks are per channel")
        let unmarked = activity("show", origin: "", 0)
        XCTAssertEqual(sequencer.number(unmarked, edge: "old-edge", nowMs: 0)?.sequence, 5)
        XCTAssertEqual(sequencer.number(unmarked, edge: "old-edge", nowMs: 0)?.sequence, 6)
        XCTAssertEqual(sequencer.sequence(of: "show").origins.map(\.origin), ["edge-a/1", "edge-a/2"])
        XCTAssertEqual(sequencer.sequence(of: "show").origins.map(\.originSequence), [5, 1])
    }

    /// The marks travel with the numbers: a coordinator that merged another's state (a successor,
    /// or one reloading its store) skips what the other numbered; a merge that only brings marks
    /// still reports the channel as changed, so it is persisted.
    func testMarksTravelWithTheNumbers() {
        var owner = ChannelEventSequencer()
        _ = owner.number(activity("show", origin: "edge-a/1", 7), edge: "edge-a", nowMs: 0)
        var successor = ChannelEventSequencer()
        XCTAssertEqual(successor.merge(owner.sequences).map(\.channel), ["show"])
        XCTAssertNil(successor.number(activity("show", origin: "edge-a/1", 7), edge: "edge-a", nowMs: 0))
        XCTAssertEqual(successor.number(activity("show", origin: "edge-a/1", 8), edge: "edge-a", nowMs: 0)?.sequence, 2)

        var marksOnly = RoomChannelSequence()
        marksOnly.channel = "show"
        marksOnly.lastSequence = 1
        var mark = RoomActivityOriginMark()
        mark.origin = "edge-b/1"
        mark.originSequence = 3
        marksOnly.origins = [mark]
        XCTAssertEqual(successor.merge([marksOnly]).map(\.lastSequence), [2], "changed: a new mark; the higher number kept")
        XCTAssertEqual(successor.merge([marksOnly]), [], "nothing new the second time")
        XCTAssertNil(successor.number(activity("show", origin: "edge-b/1", 3), edge: "edge-b", nowMs: 0))
    }

    /// Only the most recent runs are remembered per channel.
    func testOnlyTheMostRecentRunsAreRemembered() {
        var sequencer = ChannelEventSequencer()
        for run in 0...ChannelEventSequencer.originsKept {
            _ = sequencer.number(activity("show", origin: "edge/\(run)", 1), edge: "edge", nowMs: 0)
        }
        let origins = sequencer.sequence(of: "show").origins.map(\.origin)
        XCTAssertEqual(origins.count, ChannelEventSequencer.originsKept)
        XCTAssertFalse(origins.contains("edge/0"), "the oldest run is forgotten")
        XCTAssertNil(sequencer.number(activity("show", origin: "edge/1", 1), edge: "edge", nowMs: 0))
    }

    private func activity(_ channel: String, origin: String, _ number: UInt64) -> RoomChannelActivity {
        var activity = RoomChannelActivity()
        activity.type = .audienceJoined
        activity.channel = channel
        activity.uid = 7
        activity.origin = origin
        activity.originSequence = number
        return activity
    }

    private func sequence(_ channel: String, _ last: UInt64) -> RoomChannelSequence {
        var sequence = RoomChannelSequence()
        sequence.channel = channel
        sequence.lastSequence = last
        return sequence
    }
}
