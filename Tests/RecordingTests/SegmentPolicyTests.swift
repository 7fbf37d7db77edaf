import Recording
import ShowroomWire
import XCTest

/// The segment policy, the timeline under it and segment names, with plain values.
final class SegmentPolicyTests: XCTestCase {
    private let minute: Int64 = 60_000

    func testTheFirstFrameBeginsSegmentZero() {
        var policy = SegmentPolicy(hasVideo: true)
        XCTAssertNil(policy.segmentIndex)
        XCTAssertEqual(policy.next(.audio, timestampMs: 123_456, keyframe: false), .beginSegment(index: 0))
        XCTAssertEqual(policy.segmentIndex, 0)
        XCTAssertEqual(policy.next(.video, timestampMs: 123_466, keyframe: true), .write)
        XCTAssertEqual(SegmentPolicy(hasVideo: false).segmentLengthMs, 30 * minute, "30 minutes by default")
    }

    func testVideoCutsAtTheFirstKeyframeAtOrAfterTheLengthAndAsksForOne() {
        var policy = SegmentPolicy(hasVideo: true, segmentLengthMs: 10_000)
        let start: Int64 = 5_000_000
        XCTAssertEqual(policy.next(.video, timestampMs: start, keyframe: true), .beginSegment(index: 0))
        // A keyframe before the length changes nothing.
        XCTAssertEqual(policy.next(.video, timestampMs: start + 9_999, keyframe: true), .write)
        // The length is reached on a delta frame and on audio: ask once, keep writing.
        XCTAssertEqual(policy.next(.video, timestampMs: start + 10_000, keyframe: false), .writeAndRequestKeyframe)
        XCTAssertEqual(policy.next(.audio, timestampMs: start + 10_010, keyframe: false), .write)
        XCTAssertEqual(policy.next(.video, timestampMs: start + 10_066, keyframe: false), .write)
        XCTAssertEqual(policy.next(.audio, timestampMs: start + 10_500, keyframe: true), .write, "an audio frame is no video keyframe")
        XCTAssertEqual(policy.next(.video, timestampMs: start + 10_600, keyframe: true), .beginSegment(index: 1))
        // The next segment is measured from its own first frame.
        XCTAssertEqual(policy.next(.video, timestampMs: start + 20_599, keyframe: true), .write)
        XCTAssertEqual(policy.next(.video, timestampMs: start + 20_600, keyframe: true), .beginSegment(index: 2))
    }

    func testAVideoTrackWithoutKeyframesIsCutAfterTheGrace() {
        var policy = SegmentPolicy(hasVideo: true, segmentLengthMs: 10_000, keyframeGraceMs: 3_000)
        XCTAssertEqual(policy.next(.video, timestampMs: 0, keyframe: true), .beginSegment(index: 0))
        XCTAssertEqual(policy.next(.audio, timestampMs: 10_000, keyframe: false), .writeAndRequestKeyframe)
        XCTAssertEqual(policy.next(.audio, timestampMs: 12_980, keyframe: false), .write)
        XCTAssertEqual(policy.next(.audio, timestampMs: 13_000, keyframe: false), .beginSegment(index: 1))
        // The new segment asks again when it is due.
        XCTAssertEqual(policy.next(.audio, timestampMs: 23_000, keyframe: false), .writeAndRequestKeyframe)
    }

    func testAudioOnlyCutsAtTheLength() {
        var policy = SegmentPolicy(hasVideo: false, segmentLengthMs: 1_000)
        var actions: [SegmentPolicy.Action] = []
        for index in 0..<151 { actions.append(policy.next(.audio, timestampMs: 40_000 + Int64(index) * 20, keyframe: false)) }
        let cuts = actions.enumerated().filter { $0.element != .write }.map(\.offset)
        XCTAssertEqual(cuts, [0, 50, 100, 150], "every 50 packets of 20 ms")
        XCTAssertEqual(actions[150], .beginSegment(index: 3))
    }

    func testHostileTimestampsNeitherTrapNorStallTheCuts() {
        var policy = SegmentPolicy(hasVideo: false, segmentLengthMs: 1_000)
        // A packet every 20 ms, five of them stamped with nonsense.
        let hostile: [Int: Int64] = [1: .max, 2: .min, 3: -1, 4: 1_000_000_000_000_000, 5: .max - 1]
        var actions: [SegmentPolicy.Action] = []
        for index in 0...100 {
            actions.append(policy.next(.audio, timestampMs: hostile[index] ?? Int64(index) * 20, keyframe: false))
        }
        XCTAssertEqual(actions[0], .beginSegment(index: 0))
        XCTAssertEqual(actions[1...5].filter { $0 != .write }.count, 0, "nonsense does not cut")
        // Honest packets go on being measured: the cut comes 1 s after the start, not never.
        XCTAssertEqual(actions.indices.filter { actions[$0] != .write }, [0, 50, 100])
    }

    // MARK: - Timeline

    func testTheTimelineRebasesBothTracksOnTheFirstFrame() {
        var timeline = RecordingTimeline()
        XCTAssertTrue(timeline.isEmpty)
        XCTAssertEqual(timeline.place(.video, timestampMs: 9_000_000), 0)
        XCTAssertEqual(timeline.place(.audio, timestampMs: 9_000_010), 10)
        XCTAssertEqual(timeline.place(.video, timestampMs: 9_000_066), 66)
        XCTAssertEqual(timeline.place(.audio, timestampMs: 9_000_030), 30)
        XCTAssertEqual(timeline.corrections, 0)
        // A muted track that resumes lands where its timestamp says while the other went on.
        for ms in stride(from: Int64(9_000_050), through: 9_120_000, by: 20) { _ = timeline.place(.audio, timestampMs: ms) }
        XCTAssertEqual(timeline.place(.video, timestampMs: 9_120_010), 120_010)
        XCTAssertEqual(timeline.corrections, 0)
    }

    func testOneOutOfLineFrameLeavesItsTrackWhereItWas() {
        var timeline = RecordingTimeline()
        XCTAssertEqual(timeline.place(.video, timestampMs: 1_000), 0)
        XCTAssertEqual(timeline.place(.video, timestampMs: 1_066), 66)
        // The frame due at 1133 carries nonsense instead.
        for hostile in [Int64.max, .min, -5_000, 1_066, 1_000_000_000_000_000] {
            var copy = timeline
            XCTAssertEqual(copy.place(.video, timestampMs: hostile), 132, "\(hostile) goes one step after the last frame")
            XCTAssertEqual(copy.place(.video, timestampMs: 1_200), 200, "and the next honest frame is where it belongs")
            XCTAssertEqual(copy.corrections, 1)
        }
    }

    func testATrackWhoseClockRestartedFollowsItAfterAFewFrames() {
        var timeline = RecordingTimeline()
        for index in 0..<50 { _ = timeline.place(.audio, timestampMs: 500_000 + Int64(index) * 20) }
        XCTAssertEqual(timeline.latestMs, 980)
        var positions: [Int64] = []
        for index in 0..<20 { positions.append(timeline.place(.audio, timestampMs: 3 + Int64(index) * 20)!) }
        XCTAssertEqual(positions, positions.sorted(), "never backwards")
        XCTAssertEqual(timeline.corrections, RecordingTimeline.reanchorAfter)
        // After re-anchoring the track steps 20 ms again.
        XCTAssertEqual(positions[19] - positions[18], 20)
        XCTAssertEqual(positions[RecordingTimeline.reanchorAfter] - positions[RecordingTimeline.reanchorAfter - 1], 20)
    }

    func testATrackOnAnotherClockStartsWhereTheTimelineStands() {
        var timeline = RecordingTimeline()
        XCTAssertEqual(timeline.place(.video, timestampMs: 10_000_000), 0)
        XCTAssertEqual(timeline.place(.video, timestampMs: 10_000_500), 500)
        XCTAssertEqual(timeline.place(.audio, timestampMs: -42), 500)
        XCTAssertEqual(timeline.place(.audio, timestampMs: -22), 520)
    }

    // MARK: - Names

    func testSegmentNamesAreChannelUidStartAndNumber() throws {
        let name = try SegmentName(channel: "room-1", uid: 42, startMs: 1_764_201_234_567, index: 0)
        XCTAssertEqual(name.relativePath, "room-1/42/1764201234567-0.webm")
        XCTAssertEqual(name.next.relativePath, "room-1/42/1764201234567-1.webm")
        XCTAssertEqual(try SegmentName(channel: "a b", uid: 0, startMs: 0, index: 7).relativePath, "a b/0/0-7.webm")
    }

    func testAChannelNameNeverMakesAPathOfItsOwn() throws {
        XCTAssertEqual(try SegmentName(channel: "..", uid: 1, startMs: 0, index: 0).relativePath, "%2E./1/0-0.webm")
        XCTAssertEqual(try SegmentName(channel: ".", uid: 1, startMs: 0, index: 0).channelDirectory, "%2E")
        XCTAssertEqual(try SegmentName(channel: ".hidden", uid: 1, startMs: 0, index: 0).channelDirectory, "%2Ehidden")
        XCTAssertEqual(try SegmentName(channel: "100%", uid: 1, startMs: 0, index: 0).channelDirectory, "100%25")
        XCTAssertEqual(try SegmentName(channel: "%2E.", uid: 1, startMs: 0, index: 0).channelDirectory, "%252E.", "escapes stay apart")
        for invalid in ["", "a/b", "../x", String(repeating: "x", count: 65), "tab\there", "nul\u{0}"] {
            XCTAssertThrowsError(try SegmentName(channel: invalid, uid: 1, startMs: 0, index: 0)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, invalid)
            }
        }
        XCTAssertThrowsError(try SegmentName(channel: "ok", uid: 1, startMs: -1, index: 0))
        XCTAssertThrowsError(try SegmentName(channel: "ok", uid: 1, startMs: 0, index: -1))
    }
}
