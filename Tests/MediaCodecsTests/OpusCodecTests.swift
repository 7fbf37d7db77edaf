import XCTest
@testable import MediaCodecs

final class OpusCodecTests: XCTestCase {
    /// Encodes `frames` frames of a tone and decodes them again, returning the decoded frames.
    private func roundTrip(channels: Int, application: OpusEncoder.Application = .audio,
                           frequency: Double = 440, amplitude: Double = 0.5, frames: Int = 25) throws -> [[Int16]] {
        let encoder = try OpusEncoder(channels: channels, application: application, bitrate: 64_000)
        let decoder = try OpusDecoder(channels: channels)
        var tone = ToneSource(frequency: frequency, amplitude: amplitude, channels: channels)
        var decoded: [[Int16]] = []
        for _ in 0..<frames {
            let packet = try encoder.encode(tone.nextFrame())
            XCTAssertFalse(packet.isEmpty)
            XCTAssertLessThanOrEqual(packet.count, 1275 + 1)
            decoded.append(try decoder.decode(packet))
        }
        return decoded
    }

    func testMonoRoundTripPreservesLevelAndFrequency() throws {
        let tone = ToneSource(frequency: 440, amplitude: 0.5)
        let decoded = try roundTrip(channels: 1)
        for frame in decoded { XCTAssertEqual(frame.count, 960) }

        // Skip warm-up frames (encoder look-ahead and decoder start-up), then measure.
        let steady = Array(decoded.dropFirst(5).joined())
        let rms = AudioLevel(pcm: steady).rms
        XCTAssertEqual(rms, tone.expectedRMS, accuracy: tone.expectedRMS * 0.15)

        // 440 Hz crosses zero upwards 440 times a second.
        let seconds = Double(steady.count) / 48_000
        let estimated = Double(Self.upwardZeroCrossings(steady)) / seconds
        XCTAssertEqual(estimated, 440, accuracy: 440 * 0.03)
    }

    func testStereoRoundTripKeepsBothChannels() throws {
        let tone = ToneSource(frequency: 1000, amplitude: 0.3, channels: 2)
        let decoded = try roundTrip(channels: 2, frequency: 1000, amplitude: 0.3)
        for frame in decoded { XCTAssertEqual(frame.count, 960 * 2) }

        let steady = Array(decoded.dropFirst(5).joined())
        let left = stride(from: 0, to: steady.count, by: 2).map { steady[$0] }
        let right = stride(from: 1, to: steady.count, by: 2).map { steady[$0] }
        XCTAssertEqual(AudioLevel(pcm: left).rms, tone.expectedRMS, accuracy: tone.expectedRMS * 0.15)
        XCTAssertEqual(AudioLevel(pcm: right).rms, tone.expectedRMS, accuracy: tone.expectedRMS * 0.15)
        let estimated = Double(Self.upwardZeroCrossings(left)) / (Double(left.count) / 48_000)
        XCTAssertEqual(estimated, 1000, accuracy: 1000 * 0.03)
    }

    func testVoipApplicationRoundTrip() throws {
        let tone = ToneSource(frequency: 300, amplitude: 0.4)
        let decoded = try roundTrip(channels: 1, application: .voip, frequency: 300, amplitude: 0.4)
        let rms = AudioLevel(pcm: Array(decoded.dropFirst(5).joined())).rms
        XCTAssertEqual(rms, tone.expectedRMS, accuracy: tone.expectedRMS * 0.2)
    }

    func testPacketLossConcealmentProducesAFullFrame() throws {
        let encoder = try OpusEncoder(channels: 1, application: .audio)
        let decoder = try OpusDecoder(channels: 1)
        var tone = ToneSource(frequency: 440, amplitude: 0.5)
        for _ in 0..<10 { _ = try decoder.decode(try encoder.encode(tone.nextFrame())) }

        let concealed = try decoder.decode(nil)
        XCTAssertEqual(concealed.count, 960)
        // Right after good audio, concealment continues the tone rather than going silent.
        XCTAssertGreaterThan(AudioLevel(pcm: concealed).rms, tone.expectedRMS * 0.2)
        // And decoding resumes normally afterwards.
        XCTAssertEqual(try decoder.decode(try encoder.encode(tone.nextFrame())).count, 960)
    }

    func testBitrateAndApplicationCanBeChanged() throws {
        let encoder = try OpusEncoder(channels: 1, application: .voip, bitrate: 24_000)
        XCTAssertEqual(encoder.bitrate, 24_000)
        try encoder.setBitrate(48_000)
        XCTAssertEqual(encoder.bitrate, 48_000)

        var tone = ToneSource()
        _ = try encoder.encode(tone.nextFrame())
        try encoder.setApplication(.audio)  // after encoding: needs the internal reset
        XCTAssertEqual(encoder.application, .audio)
        XCTAssertEqual(encoder.bitrate, 48_000)
        XCTAssertFalse(try encoder.encode(tone.nextFrame()).isEmpty)

        try encoder.setComplexity(5)
        try encoder.setInbandFEC(true)
        try encoder.setExpectedPacketLoss(percent: 10)
        XCTAssertFalse(try encoder.encode(tone.nextFrame()).isEmpty)
    }

    func testHigherBitrateGivesLargerPackets() throws {
        func averagePacketSize(bitrate: Int) throws -> Double {
            let encoder = try OpusEncoder(channels: 1, application: .audio, bitrate: bitrate)
            var tone = ToneSource(frequency: 440, amplitude: 0.5)
            let sizes = try (0..<20).map { _ in try encoder.encode(tone.nextFrame()).count }
            return Double(sizes.reduce(0, +)) / Double(sizes.count)
        }
        XCTAssertGreaterThan(try averagePacketSize(bitrate: 96_000), try averagePacketSize(bitrate: 16_000))
    }

    func testInvalidInputIsRejected() throws {
        XCTAssertThrowsError(try OpusEncoder(channels: 3)) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try OpusDecoder(channels: 0)) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try OpusEncoder(bitrate: 10)) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
        let encoder = try OpusEncoder(channels: 2)
        XCTAssertThrowsError(try encoder.encode([Int16](repeating: 0, count: 960))) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
        let decoder = try OpusDecoder()
        XCTAssertThrowsError(try decoder.decode([])) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
    }

    func testGarbagePacketThrowsCodecError() throws {
        let decoder = try OpusDecoder()
        // TOC byte 0xFF = code 3 (arbitrary frame count) with a frame-count byte announcing
        // 0 frames: structurally invalid.
        XCTAssertThrowsError(try decoder.decode([0xFF, 0x00, 0x12, 0x34])) { error in
            let codecError = error as? CodecError
            XCTAssertEqual(codecError?.code, .decode)
            XCTAssertNotNil(codecError?.libraryMessage)
        }
        // The decoder is still usable afterwards.
        XCTAssertEqual(try decoder.decode(nil).count, 960)
    }

    static func upwardZeroCrossings(_ samples: [Int16]) -> Int {
        zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
    }
}
