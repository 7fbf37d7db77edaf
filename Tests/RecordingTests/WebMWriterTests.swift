import Foundation
import Recording
import ShowroomWire
import XCTest

/// WebM files written from the project's own VP8 and Opus encoders, read back with ffprobe and
/// decoded with ffmpeg.
final class WebMWriterTests: RecordingDirectoryTestCase {
    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func writer(_ name: String, video: Bool = true, audio: Bool = true) throws -> WebMWriter {
        try WebMWriter(
            path: path(name), video: video ? VideoTrackInfo(width: 320, height: 240) : nil,
            audio: audio ? AudioTrackInfo(channels: 1) : nil)
    }

    func testThreeSecondsReadBackWithTheirCodecsDurationAndSync() throws {
        let file = try writer("three.webm")
        let frames = try TestMedia.threeSeconds()
        for frame in frames { try file.write(frame) }
        try file.finish()
        XCTAssertEqual(file.videoFramesWritten, 45)
        XCTAssertEqual(file.audioFramesWritten, 150)
        XCTAssertEqual(file.droppedBeforeKeyframe, 0)
        XCTAssertEqual(file.timestampCorrections, 0)

        let probe = try FFmpegTools.probe(file.path)
        XCTAssertEqual(probe.codec("video"), "vp8")
        XCTAssertEqual(probe.codec("audio"), "opus")
        let duration = try XCTUnwrap(probe.duration, "a finished file says its duration")
        XCTAssertEqual(duration, 3, accuracy: 0.5)
        let video = probe.packetTimes("video")
        let audio = probe.packetTimes("audio")
        XCTAssertEqual(video.count, 45)
        XCTAssertEqual(audio.count, 150)
        let (firstVideo, firstAudio) = (try XCTUnwrap(video.first), try XCTUnwrap(audio.first))
        XCTAssertEqual(firstVideo, 0, accuracy: 0.001, "the file starts at 0 whatever the publisher's clock said")
        XCTAssertEqual(firstAudio, firstVideo, accuracy: 0.040, "audio and video start together")
        // The tracks' own spacing survives: frame 30 of the video is 2 s in, packet 100 of the audio too.
        XCTAssertEqual(video[30], 2, accuracy: 0.002)
        XCTAssertEqual(audio[100], 2, accuracy: 0.010)
        XCTAssertEqual(probe.packetFlags("video").first?.hasPrefix("K"), true, "the first video packet is a keyframe")
        XCTAssertEqual(try FFmpegTools.decodeErrors(file.path), "", "every frame decodes")
        print("three seconds: duration \(duration) s, first video \(firstVideo) s, first audio \(firstAudio) s")
    }

    func testAFileCutOffBeforeItsEndIsReadableUpToItsLastCluster() throws {
        let frames = try TestMedia.threeSeconds()
        let cutAt = TestMedia.clockStartMs + 2_500
        let copy = path("cut-copy.webm")
        // The writer is dropped at the end of this closure without finish(), as when its owner goes away.
        let written: String = try {
            let file = try writer("cut.webm")
            for frame in frames where frame.timestampMs < cutAt { try file.write(frame) }
            // The process "dies" here: what is on disk now is all a reader will ever get.
            try FileManager.default.copyItem(atPath: file.path, toPath: copy)
            for frame in frames where frame.timestampMs >= cutAt { try file.write(frame) }
            return file.path
        }()

        let probe = try FFmpegTools.probe(copy)
        XCTAssertEqual(probe.codec("video"), "vp8")
        XCTAssertEqual(probe.codec("audio"), "opus")
        let lastVideo = try XCTUnwrap(probe.packetTimes("video").last, "video clusters were on disk")
        let lastAudio = try XCTUnwrap(probe.packetTimes("audio").last, "audio clusters were on disk")
        XCTAssertGreaterThanOrEqual(min(lastVideo, lastAudio), 1, "at least a second is readable")
        XCTAssertLessThan(max(lastVideo, lastAudio), 2.5)
        XCTAssertEqual(try FFmpegTools.decodeErrors(copy), "", "what was flushed decodes")
        print("cut off after 2.5 s: readable to \(lastVideo) s (video), \(lastAudio) s (audio); duration field \(probe.format?.duration ?? "absent")")

        // A writer dropped unfinished finishes its file.
        let dropped = try FFmpegTools.probe(written)
        XCTAssertEqual(try XCTUnwrap(dropped.duration), 3, accuracy: 0.5)
        XCTAssertEqual(try FFmpegTools.decodeErrors(written), "")
    }

    func testFramesBeforeTheFirstKeyframeAreDroppedAndCounted() throws {
        let file = try writer("late-keyframe.webm")
        // Joined mid-GOP: the keyframe at 0 s is missed, the next one comes at 2 s.
        let frames = try TestMedia.threeSeconds().filter { !($0.track == .video && $0.keyframe && $0.timestampMs == TestMedia.clockStartMs) }
        let keyframeAt = TestMedia.clockStartMs + 2_000
        XCTAssertTrue(frames.contains { $0.track == .video && $0.keyframe && $0.timestampMs == keyframeAt })
        for frame in frames { try file.write(frame) }
        try file.finish()
        let before = frames.filter { $0.timestampMs < keyframeAt }.count
        XCTAssertEqual(file.droppedBeforeKeyframe, before, "29 video frames and the audio of those 2 s")
        XCTAssertEqual(file.videoFramesWritten, 15)

        let probe = try FFmpegTools.probe(file.path)
        XCTAssertEqual(probe.packetFlags("video").first?.hasPrefix("K"), true, "the file starts on the keyframe")
        XCTAssertEqual(probe.packetTimes("video").first ?? -1, 0, accuracy: 0.001)
        XCTAssertEqual(probe.packetTimes("audio").first ?? -1, 0, accuracy: 0.040)
        XCTAssertEqual(try XCTUnwrap(probe.duration), 1, accuracy: 0.5)
        XCTAssertEqual(try FFmpegTools.decodeErrors(file.path), "")
    }

    func testHostileTimestampsNeitherCrashNorCorruptTheFile() throws {
        let file = try writer("hostile.webm")
        let frames = try TestMedia.threeSeconds()
        var hostile = 0
        for (offset, frame) in frames.enumerated() {
            var frame = frame
            switch offset {
            case 40: frame.timestampMs -= 5_000  // backwards
            case 60: frame.timestampMs += 1_000_000_000_000_000  // a jump of 10^15 ms
            case 80: frame.timestampMs = .max
            case 100: frame.timestampMs = .min
            case 120, 121: frame.timestampMs = frames[119].timestampMs  // repeated
            default: break
            }
            if frame.timestampMs != frames[offset].timestampMs { hostile += 1 }
            try file.write(frame)
        }
        try file.finish()
        XCTAssertEqual(file.videoFramesWritten + file.audioFramesWritten, frames.count, "no frame lost")
        XCTAssertGreaterThanOrEqual(file.timestampCorrections, 4)
        XCTAssertLessThanOrEqual(file.timestampCorrections, hostile + 1)

        let probe = try FFmpegTools.probe(file.path)
        XCTAssertEqual(try XCTUnwrap(probe.duration), 3, accuracy: 0.5, "the jumps did not stretch the file")
        for track in ["video", "audio"] {
            let times = probe.packetTimes(track)
            XCTAssertEqual(times, times.sorted(), "\(track) stays in order")
            XCTAssertLessThan(times.last ?? .infinity, 3.5)
        }
        XCTAssertEqual(try FFmpegTools.decodeErrors(file.path), "")
    }

    func testAnAudioOnlyFileStartsAtOnceAndCarriesOpus() throws {
        let file = try writer("audio.webm", video: false)
        for frame in try TestMedia.threeSeconds() where frame.track == .audio { try file.write(frame) }
        try file.finish()
        XCTAssertEqual(file.audioFramesWritten, 150)
        XCTAssertEqual(file.droppedBeforeKeyframe, 0)
        let probe = try FFmpegTools.probe(file.path)
        XCTAssertEqual(probe.codec("audio"), "opus")
        XCTAssertNil(probe.codec("video"))
        XCTAssertEqual(try XCTUnwrap(probe.duration), 3, accuracy: 0.5)
        XCTAssertEqual(try FFmpegTools.decodeErrors(file.path), "")
    }

    func testAFullDiskFailsTheRecordingWithItsReason() throws {
        XCTAssertThrowsError(try WebMWriter(path: "/dev/full", video: VideoTrackInfo(width: 320, height: 240), audio: AudioTrackInfo(channels: 1))) { error in
            let error = error as? ShowroomError
            XCTAssertEqual(error?.code, .unavailable)
            XCTAssertEqual(error?.message.hasPrefix("recording /dev/full: No space left on device"), true, "\(String(describing: error))")
        }
        let missing = path("no-such-directory/file.webm")
        XCTAssertThrowsError(try WebMWriter(path: missing, video: nil, audio: AudioTrackInfo(channels: 2))) { error in
            let error = error as? ShowroomError
            XCTAssertEqual(error?.code, .unavailable)
            XCTAssertEqual(error?.message.hasPrefix("recording \(missing): No such file or directory"), true, "\(String(describing: error))")
        }
    }

    func testAWriteFailingMidwayFailsTheRecordingAndKeepsWhatWasWhole() throws {
        let file = try writer("stopped.webm")
        let frames = try TestMedia.threeSeconds()
        // The file may not grow past 60 kB, as a full disk would stop it.
        var failure: ShowroomError?
        var written = 0
        withFileSizeLimit(60_000) {
            do {
                for frame in frames {
                    try file.write(frame)
                    written += 1
                }
            } catch {
                failure = error as? ShowroomError
            }
        }

        let error = try XCTUnwrap(failure, "the write past the limit failed")
        XCTAssertEqual(error.code, .unavailable)
        XCTAssertTrue(error.message.hasPrefix("recording \(file.path): File too large (writing a "), error.message)
        XCTAssertLessThan(written, frames.count)
        // The recording stays failed with the same reason.
        XCTAssertThrowsError(try file.write(frames[written])) { XCTAssertEqual($0 as? ShowroomError, error) }
        XCTAssertThrowsError(try file.finish()) { XCTAssertEqual($0 as? ShowroomError, error) }

        // What was whole is readable to its end: the part of a cluster the failed write left is cut off.
        let probe = try FFmpegTools.probe(file.path)
        XCTAssertEqual(probe.codec("video"), "vp8")
        XCTAssertGreaterThan(probe.packetTimes("video").count, 0)
        XCTAssertLessThanOrEqual(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? .max, 60_000)
        XCTAssertEqual(try FFmpegTools.decodeErrors(file.path), "")
        print("failed after \(written) frames: \(error); readable to \(probe.packetTimes("video").last ?? 0) s")
    }

    func testMisuseIsRefusedWithoutTouchingTheFile() throws {
        XCTAssertThrowsError(try WebMWriter(path: path("none.webm"), video: nil, audio: nil)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try WebMWriter(path: path("huge.webm"), video: VideoTrackInfo(width: 20_000, height: 240), audio: nil))
        XCTAssertThrowsError(try WebMWriter(path: path("surround.webm"), video: nil, audio: AudioTrackInfo(channels: 6)))

        let file = try writer("audio-only.webm", video: false)
        XCTAssertThrowsError(try [UInt8](repeating: 1, count: 10).withUnsafeBytes {
            try file.write(video: $0, timestampMs: 0, keyframe: true)
        }) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
        }
        try [UInt8]().withUnsafeBytes { try file.write(audio: $0, timestampMs: 0) }
        XCTAssertEqual(file.droppedInvalid, 1, "an empty payload is dropped")
        try file.finish()
        try file.finish()  // again: nothing
        XCTAssertThrowsError(try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try file.write(audio: $0, timestampMs: 20) })
    }

    func testTheOpusHeadIsWhatTheMatroskaMappingWants() {
        let head = AudioTrackInfo(channels: 2).opusHead
        XCTAssertEqual(head.count, 19)
        XCTAssertEqual(Array(head[0..<8]), Array("OpusHead".utf8))
        XCTAssertEqual(head[8], 1, "version")
        XCTAssertEqual(head[9], 2, "channels")
        XCTAssertEqual(Array(head[10..<12]), [0x38, 0x01], "pre-skip 312, little-endian")
        XCTAssertEqual(Array(head[12..<16]), [0x80, 0xBB, 0x00, 0x00], "48000 Hz, little-endian")
        XCTAssertEqual(Array(head[16..<19]), [0, 0, 0], "no gain, mapping family 0")
    }
}
