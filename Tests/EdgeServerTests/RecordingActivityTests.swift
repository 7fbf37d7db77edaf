@testable import EdgeServer
import Foundation
import Recording
import ShowroomWire
import XCTest

/// ``RecordingActivity``: what a recording's end becomes for the channel's owner coordinator, with
/// plain values; a hostile reason or file is bounded.
final class RecordingActivityTests: XCTestCase {
    private let key = RecordingWorker.Key(channel: "show", uid: 7)

    private func file(failure: String? = nil, segment: Int = 2, bytes: Int64 = 4096) throws -> RecordedFile {
        var fields: [String: Any] = [
            "channel": "show", "uid": 7, "path": "show/7/rec-1-2.webm", "segment": segment, "startMs": 1_000, "endMs": 61_000,
            "durationMs": 60_000, "bytes": bytes, "codecs": ["vp8", "opus"], "recordingID": "rec-1",
        ]
        if let failure { fields["failure"] = failure }
        return try JSONDecoder().decode(RecordedFile.self, from: JSONSerialization.data(withJSONObject: fields))
    }

    func testAFinishedFileCarriesEverythingItsWebhookTells() throws {
        let activity = RecordingActivity.finished(key, try file(), atMs: 62_000)
        XCTAssertEqual(activity.type, .recordingFile)
        XCTAssertEqual(activity.channel, "show")
        XCTAssertEqual(activity.uid, 7)
        XCTAssertEqual(activity.atMs, 62_000)
        XCTAssertEqual(activity.recording.recordingID, "rec-1")
        XCTAssertEqual(activity.recording.path, "show/7/rec-1-2.webm")
        XCTAssertEqual(activity.recording.segment, 2)
        XCTAssertEqual(activity.recording.startMs, 1_000)
        XCTAssertEqual(activity.recording.endMs, 61_000)
        XCTAssertEqual(activity.recording.durationMs, 60_000)
        XCTAssertEqual(activity.recording.bytes, 4096)
        XCTAssertEqual(activity.recording.codecs, ["vp8", "opus"])
        XCTAssertEqual(activity.recording.failure, "")
    }

    func testAFailureBeforeAnyFileNamesItsOrderIfItRan() {
        let activity = RecordingActivity.failed(key, orderID: "rec-1", reason: "disk full", atMs: 5)
        XCTAssertEqual(activity.type, .recordingFailed)
        XCTAssertEqual(activity.recording.recordingID, "rec-1")
        XCTAssertEqual(activity.recording.failure, "disk full")
        XCTAssertEqual(activity.recording.path, "")
        XCTAssertEqual(RecordingActivity.failed(key, orderID: nil, reason: "x", atMs: 5).recording.recordingID, "", "no order: none named")
    }

    func testHostileValuesAreBounded() throws {
        let long = String(repeating: "é", count: 5_000)
        XCTAssertEqual(RecordingActivity.failed(key, orderID: nil, reason: long, atMs: 0).recording.failure.count,
                       RecordingActivity.maxFailureLength)
        let cut = RecordingActivity.finished(key, try file(failure: long, segment: -1, bytes: -5), atMs: 0)
        XCTAssertEqual(cut.recording.failure.count, RecordingActivity.maxFailureLength)
        XCTAssertEqual(cut.recording.segment, 0, "a negative segment clamps")
        XCTAssertEqual(cut.recording.bytes, 0, "a negative size clamps")
        let huge = RecordingActivity.finished(key, try file(segment: Int.max), atMs: 0)
        XCTAssertEqual(huge.recording.segment, UInt32.max)
    }
}
