import Rooms
import ShowroomWire
import XCTest

final class ChannelEventSequencerTests: XCTestCase {
    func testNumbersPerChannelFromOne() {
        var sequencer = ChannelEventSequencer()
        var activity = RoomChannelActivity()
        activity.type = .audienceLeft
        activity.channel = "show"
        activity.uid = 42
        activity.reason = .dropped
        activity.atMs = 1000

        let first = sequencer.number(activity, edge: "edge-a", nowMs: 1005)
        XCTAssertEqual(first.sequence, 1)
        XCTAssertEqual(first.noticeID, "show-1")
        XCTAssertEqual(first.type, .audienceLeft)
        XCTAssertEqual(first.channel, "show")
        XCTAssertEqual(first.uid, 42)
        XCTAssertEqual(first.reason, .dropped)
        XCTAssertEqual(first.atMs, 1000)
        XCTAssertEqual(first.edge, "edge-a")
        XCTAssertEqual(first.notifiedAtMs, 1005)

        XCTAssertEqual(sequencer.number(activity, edge: "edge-a", nowMs: 1006).noticeID, "show-2")
        activity.channel = "other"
        XCTAssertEqual(sequencer.number(activity, edge: "edge-b", nowMs: 1007).sequence, 1, "each channel counts on its own")
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
        XCTAssertEqual(sequencer.number(activity, edge: "e", nowMs: 0).sequence, 9, "numbering goes on after the merged number")
        activity.channel = "new"
        XCTAssertEqual(sequencer.number(activity, edge: "e", nowMs: 0).noticeID, "new-8")
    }

    private func sequence(_ channel: String, _ last: UInt64) -> RoomChannelSequence {
        var sequence = RoomChannelSequence()
        sequence.channel = channel
        sequence.lastSequence = last
        return sequence
    }
}
