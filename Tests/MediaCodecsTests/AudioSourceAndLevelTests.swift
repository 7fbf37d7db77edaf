import Foundation
import XCTest
@testable import MediaCodecs

final class AudioSourceAndLevelTests: XCTestCase {
    func testToneFramesHaveTheRightSizeAndLevel() {
        var mono = ToneSource(frequency: 440, amplitude: 0.5)
        let frame = mono.nextFrame()
        XCTAssertEqual(frame.count, 960)
        XCTAssertEqual(mono.framesProduced, 1)
        XCTAssertEqual(AudioLevel(pcm: frame).rms, mono.expectedRMS, accuracy: mono.expectedRMS * 0.01)
        XCTAssertLessThanOrEqual(frame.map { abs(Int($0)) }.max()!, 16_384)

        var stereo = ToneSource(frequency: 440, amplitude: 0.5, channels: 2)
        let pair = stereo.nextFrame()
        XCTAssertEqual(pair.count, 1920)
        for index in stride(from: 0, to: pair.count, by: 2) { XCTAssertEqual(pair[index], pair[index + 1]) }
    }

    func testTonePhaseIsContinuousAcrossFrames() {
        // 1 kHz at 48 kHz is exactly 48 samples per period, 20 periods per frame: frames repeat exactly
        // only if the phase carries over.
        var tone = ToneSource(frequency: 1000, amplitude: 0.8)
        let first = tone.nextFrame()
        let second = tone.nextFrame()
        for (a, b) in zip(first, second) { XCTAssertEqual(Int(a), Int(b), accuracy: 1) }

        // For a frequency that does not divide the frame, the step across a boundary matches the
        // largest step inside a frame (no discontinuity).
        var odd = ToneSource(frequency: 437, amplitude: 1)
        var samples: [Int16] = []
        for _ in 0..<5 { samples += odd.nextFrame() }
        let steps = zip(samples, samples.dropFirst()).map { abs(Int($0) - Int($1)) }
        let maxStep = Int((2 * Double.pi * 437 / 48_000 * 32_767).rounded(.up)) + 1
        XCTAssertLessThanOrEqual(steps.max()!, maxStep)
    }

    func testSilenceIsLevelZero() {
        let level = AudioLevel(pcm: [Int16](repeating: 0, count: 960))
        XCTAssertEqual(level.rms, 0)
        XCTAssertEqual(level.level, 0)
        XCTAssertEqual(level.decibels, AudioLevel.minimumDecibels)
        XCTAssertEqual(level.rfc6464Level, 127)
        XCTAssertEqual(AudioLevel(pcm: []).level, 0)
    }

    func testFullScaleToneIsNearOneHundred() {
        var tone = ToneSource(frequency: 440, amplitude: 1)
        let level = AudioLevel(pcm: tone.nextFrame())
        XCTAssertEqual(level.decibels, -3.01, accuracy: 0.1)
        XCTAssertGreaterThanOrEqual(level.level, 94)
        XCTAssertLessThanOrEqual(level.level, 100)
        XCTAssertEqual(level.rfc6464Level, 3)

        let square = AudioLevel(pcm: (0..<960).map { $0 % 2 == 0 ? Int16.max : -Int16.max })
        XCTAssertEqual(square.level, 100)
        XCTAssertEqual(square.rfc6464Level, 0)
    }

    func testLevelIsLinearInDecibels() {
        // -30 dBov sits halfway between the -60 dBov floor and 0 dBov.
        let rms = 32_767 * pow(10, -30.0 / 20)
        XCTAssertEqual(AudioLevel(rms: rms).level, 50)
        XCTAssertEqual(AudioLevel(rms: 32_767 * pow(10, -70.0 / 20)).level, 0)

        var quiet = ToneSource(frequency: 440, amplitude: 0.01)
        var loud = ToneSource(frequency: 440, amplitude: 0.5)
        XCTAssertLessThan(AudioLevel(pcm: quiet.nextFrame()).level, AudioLevel(pcm: loud.nextFrame()).level)
    }
}
