import Foundation
import Recording
import ShowroomWire
import Synchronization
import XCTest

/// One publisher's recording cut into segments and written on the recording worker's thread, read
/// back with ffprobe and ffmpeg.
final class PublisherRecordingTests: RecordingDirectoryTestCase {
    private static let startedAtMs: Int64 = 1_790_000_000_000

    private func settings(segmentLengthMs: Int64 = SegmentPolicy.defaultSegmentLengthMs) -> PublisherRecording.Settings {
        PublisherRecording.Settings(directory: directory.path, segmentLengthMs: segmentLengthMs)
    }

    /// Feeds `frames` to `recording`, the recorder's clock at the frames' own pace.
    private func feed(_ frames: [TestFrame], to recording: PublisherRecording) -> [PublisherRecording.Event] {
        frames.flatMap { frame in
            let now = Self.startedAtMs + frame.timestampMs - TestMedia.clockStartMs
            return frame.payload.withUnsafeBytes { payload in
                switch frame.track {
                case .video:
                    recording.video(payload, timestampMs: frame.timestampMs, keyframe: frame.keyframe, width: 320, height: 240, nowMs: now)
                case .audio:
                    recording.audio(payload, timestampMs: frame.timestampMs, nowMs: now)
                }
            }
        }
    }

    private static func files(_ events: [PublisherRecording.Event]) -> [RecordedFile] {
        events.compactMap { if case .finished(let file) = $0 { file } else { nil } }
    }

    func testSegmentsAreCutAtKeyframesNamedInOrderAndEachReadsBackWhole() throws {
        // 6 s with a keyframe every second, cut every 2 s.
        let frames = try TestMedia.make(seconds: 6, keyframeInterval: 15)
        let recording = try PublisherRecording(channel: "show-1", uid: 42, settings: settings(segmentLengthMs: 2_000),
                                               startedAtMs: Self.startedAtMs)
        var events = feed(frames, to: recording)
        events += recording.finish(nowMs: Self.startedAtMs + 6_000)
        XCTAssertEqual(recording.state, .finished)
        XCTAssertFalse(events.contains { if case .failed = $0 { true } else { false } }, "\(events)")

        let files = Self.files(events)
        XCTAssertEqual(files.map(\.path), (0..<3).map { "show-1/42/\(Self.startedAtMs)-\($0).webm" })
        XCTAssertEqual(files.map(\.segment), [0, 1, 2])
        var total = 0.0
        for file in files {
            let path = directory.appendingPathComponent(file.path).path
            let probe = try FFmpegTools.probe(path)
            XCTAssertEqual(probe.codec("video"), "vp8", file.path)
            XCTAssertEqual(probe.codec("audio"), "opus", file.path)
            XCTAssertEqual(probe.packetFlags("video").first?.hasPrefix("K"), true, "\(file.path) starts on a keyframe")
            XCTAssertEqual(try FFmpegTools.decodeErrors(path), "", file.path)
            XCTAssertEqual(file.codecs, ["vp8", "opus"])
            XCTAssertEqual(file.bytes, try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64 ?? Int64(-1))
            XCTAssertNil(file.failure)
            XCTAssertLessThanOrEqual(file.startMs, file.endMs)
            total += try XCTUnwrap(probe.duration, "\(file.path) has its duration")
        }
        XCTAssertEqual(total, 6.0, accuracy: 0.5, "the segments together hold the 6 s")
        // Each segment starts where the one before ended.
        for (before, after) in zip(files, files.dropFirst()) {
            XCTAssertLessThanOrEqual(after.startMs - before.endMs, 100, "no gap between \(before.path) and \(after.path)")
        }
        // Finished: more frames change nothing.
        XCTAssertEqual(feed(Array(frames.prefix(5)), to: recording), [])
    }

    func testTheFirstSegmentWaitsForAKeyframeAndAsksForItOnce() throws {
        // Joined mid-GOP: delta frames (and audio) first, the next keyframe at 2 s.
        let frames = try TestMedia.make(seconds: 3, keyframeInterval: 30)
        let firstKeyframe = try XCTUnwrap(frames.indices.first { frames[$0].track == .video && frames[$0].keyframe })
        let midGOP = Array(frames[(firstKeyframe + 1)...])
        let recording = try PublisherRecording(channel: "show-2", uid: 7, settings: settings(), startedAtMs: Self.startedAtMs)
        let events = feed(midGOP, to: recording) + recording.finish(nowMs: Self.startedAtMs + 3_000)

        XCTAssertEqual(events.filter { $0 == .wantKeyframe }.count, 1, "\(events)")
        XCTAssertGreaterThan(recording.framesDropped, 0)
        let files = Self.files(events)
        XCTAssertEqual(files.count, 1)
        let probe = try FFmpegTools.probe(directory.appendingPathComponent(files[0].path).path)
        XCTAssertEqual(probe.packetFlags("video").first?.hasPrefix("K"), true)
        let fromKeyframe = midGOP.drop { !($0.track == .video && $0.keyframe) }
        XCTAssertEqual(probe.packetTimes("video").count, fromKeyframe.filter { $0.track == .video }.count,
                       "every video frame from the keyframe on is written")
        XCTAssertEqual(recording.framesDropped, midGOP.count - fromKeyframe.count, "what came before it is dropped")
    }

    func testAFullDiskEndsTheRecordingWithItsReasonAndKeepsWhatWasWritten() throws {
        let frames = try TestMedia.threeSeconds()
        let recording = try PublisherRecording(channel: "show-3", uid: 9, settings: settings(), startedAtMs: Self.startedAtMs)
        // The files may not grow past 60 kB, as a full disk would stop them.
        let events = withFileSizeLimit(60_000) { feed(frames, to: recording) }

        guard case .failed(let reason) = recording.state else { return XCTFail("the recording failed: \(recording.state)") }
        XCTAssertTrue(reason.contains("File too large"), reason)
        XCTAssertEqual(events.last, .failed(reason: reason))
        let files = Self.files(events)
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(files.first?.failure, reason)
        let path = directory.appendingPathComponent(files[0].path).path
        XCTAssertGreaterThan(try FFmpegTools.probe(path).packetTimes("video").count, 0, "what was whole reads back")
        XCTAssertEqual(try FFmpegTools.decodeErrors(path), "")
        // Failed: it takes nothing more, and finishing tells nothing new.
        XCTAssertEqual(feed(Array(frames.suffix(3)), to: recording), [])
        XCTAssertEqual(recording.finish(nowMs: Self.startedAtMs + 5_000), [])
    }

    func testBadNamesAndNoTrackAreRefused() {
        for channel in ["", "a/b", String(repeating: "x", count: 65), "room\u{0}"] {
            XCTAssertThrowsError(try PublisherRecording(channel: channel, uid: 1, settings: settings(), startedAtMs: 0)) {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument, channel)
            }
        }
        var none = settings()
        none.video = false
        none.audio = false
        XCTAssertThrowsError(try PublisherRecording(channel: "ok", uid: 1, settings: none, startedAtMs: 0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
        }
        var stereo = settings()
        stereo.audioChannels = 6
        XCTAssertThrowsError(try PublisherRecording(channel: "ok", uid: 1, settings: stereo, startedAtMs: 0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
        }
        // A hostile channel name that passes the name rules never leaves the directory.
        XCTAssertNoThrow(try PublisherRecording(channel: "..", uid: 1, settings: settings(), startedAtMs: 0))
    }

    // MARK: - The worker

    /// What a worker reported, in order.
    private final class Reports: Sendable {
        let events = Mutex<[(RecordingWorker.Key, PublisherRecording.Event)]>([])
        func of(_ key: RecordingWorker.Key) -> [PublisherRecording.Event] { events.withLock { $0.filter { $0.0 == key }.map(\.1) } }
    }

    func testTheWorkerWritesOnItsOwnThreadAndASlowDiskFailsTheRecordingNotTheCaller() throws {
        let reports = Reports()
        let worker = RecordingWorker(maxQueuedBytes: 50_000, clock: { Self.startedAtMs }) { key, event in
            reports.events.withLock { $0.append((key, event)) }
        }
        let frames = try TestMedia.threeSeconds()
        let slow = RecordingWorker.Key(channel: "slow", uid: 1)
        let later = RecordingWorker.Key(channel: "later", uid: 2)
        func hand(_ frame: TestFrame, _ key: RecordingWorker.Key) -> Bool {
            frame.payload.withUnsafeBytes { payload in
                switch frame.track {
                case .video: worker.video(key, payload, timestampMs: frame.timestampMs, keyframe: frame.keyframe, width: 320, height: 240)
                case .audio: worker.audio(key, payload, timestampMs: frame.timestampMs)
                }
            }
        }
        XCTAssertFalse(hand(frames[0], slow), "a recording not started takes no frames")

        // The disk stalls: the worker's thread waits until it is let go.
        let stalled = DispatchSemaphore(value: 0)
        worker.perform { stalled.wait() }
        worker.start(slow, settings: settings(), startedAtMs: Self.startedAtMs)
        var taken = 0
        for frame in frames + frames {
            guard hand(frame, slow) else { break }
            taken += 1
        }
        XCTAssertGreaterThan(taken, 0)
        XCTAssertLessThan(taken, frames.count * 2, "the queue filled: the caller was refused, not held up")
        XCTAssertLessThanOrEqual(worker.queuedBytes, worker.maxQueuedBytes)
        XCTAssertFalse(hand(frames[taken % frames.count], slow), "a recording that overflowed takes nothing more")
        stalled.signal()

        // The worker goes on: a recording started after it records whole, handed its frames a few
        // at a time, each batch once the worker has written what came before.
        func drained() {
            let done = DispatchSemaphore(value: 0)
            worker.perform { done.signal() }
            done.wait()
        }
        drained()
        worker.start(later, settings: settings(), startedAtMs: Self.startedAtMs)
        for (index, frame) in frames.enumerated() {
            XCTAssertTrue(hand(frame, later), "frame \(index)")
            if index % 5 == 4 { drained() }
        }
        worker.stop(later)
        worker.shutdown()

        let slowEvents = reports.of(slow)
        guard case .failed(let reason)? = slowEvents.last else { return XCTFail("the slow recording failed: \(slowEvents)") }
        XCTAssertTrue(reason.hasPrefix("the disk is too slow: "), reason)
        let slowFile = try XCTUnwrap(Self.files(slowEvents).first, "what the slow recording wrote is kept")
        XCTAssertEqual(slowFile.failure, reason)
        XCTAssertEqual(try FFmpegTools.decodeErrors(directory.appendingPathComponent(slowFile.path).path), "")

        let laterFiles = Self.files(reports.of(later))
        XCTAssertEqual(laterFiles.count, 1)
        XCTAssertNil(laterFiles.first?.failure)
        let probe = try FFmpegTools.probe(directory.appendingPathComponent(laterFiles[0].path).path)
        XCTAssertEqual(try XCTUnwrap(probe.duration), 3.0, accuracy: 0.2)
        XCTAssertFalse(hand(frames[0], later), "after shutdown nothing is taken")
    }
}
