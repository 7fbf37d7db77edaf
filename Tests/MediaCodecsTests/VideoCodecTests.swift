import XCTest
@testable import MediaCodecs

final class VideoCodecTests: XCTestCase {
    private struct RoundTrip {
        var encoded: [EncodedVideoFrame] = []
        var decoded: [I420Frame] = []
    }

    /// Encodes `count` test-pattern frames (forcing keyframes at `forced`) and decodes every output.
    private func roundTrip(codec: VideoCodec = .vp8, width: Int = 320, height: Int = 240, bitrateKbps: Int = 300,
                           count: Int = 40, forced: Set<Int> = [], firstNumber: UInt32 = 0) throws -> RoundTrip {
        let encoder = try VideoEncoder(configuration: .init(
            codec: codec, width: width, height: height, framesPerSecond: 30,
            targetBitrateKbps: bitrateKbps, keyframeInterval: 300))
        let decoder = try VideoDecoder(codec: codec)
        var source = TestPatternSource(width: width, height: height, firstFrameNumber: firstNumber)
        var result = RoundTrip()
        for index in 0..<count {
            let output = try encoder.encode(source.nextFrame(), forceKeyframe: forced.contains(index))
            XCTAssertEqual(output.count, 1, "frame \(index) should give exactly one packet")
            for frame in output {
                result.encoded.append(frame)
                if let picture = try decoder.decode(frame.data) { result.decoded.append(picture) }
            }
        }
        XCTAssertEqual(encoder.framesEncoded, Int64(count))
        return result
    }

    func testVP8RoundTripKeyframesSizesAndCounters() throws {
        let result = try roundTrip(count: 40, forced: [20])

        XCTAssertEqual(result.encoded.count, 40)
        XCTAssertEqual(result.encoded.map(\.pts), (0..<40).map { Int64($0) })
        XCTAssertTrue(result.encoded[0].isKeyframe, "the first frame must be a keyframe")
        XCTAssertTrue(result.encoded[20].isKeyframe, "a forced keyframe must be flagged")
        let keyframes = result.encoded.indices.filter { result.encoded[$0].isKeyframe }
        XCTAssertEqual(keyframes, [0, 20], "only the first and the forced frame should be keyframes")

        XCTAssertEqual(result.decoded.count, 40)
        for (index, picture) in result.decoded.enumerated() {
            XCTAssertEqual(picture.width, 320)
            XCTAssertEqual(picture.height, 240)
            XCTAssertTrue(picture.isValid)
            XCTAssertEqual(TestPatternSource.readFrameCounter(from: picture), UInt32(index),
                           "counter of decoded frame \(index)")
        }
    }

    func testVP8CountersSurviveALowBitrate() throws {
        let result = try roundTrip(bitrateKbps: 100, count: 35, firstNumber: 0xAB_CD00)
        XCTAssertEqual(result.decoded.map { TestPatternSource.readFrameCounter(from: $0) },
                       (0..<35).map { UInt32(0xAB_CD00 + $0) })
    }

    func testVP8WithOddDimensions() throws {
        let result = try roundTrip(width: 175, height: 97, count: 8)
        XCTAssertEqual(result.decoded.count, 8)
        for (index, picture) in result.decoded.enumerated() {
            XCTAssertEqual(picture.width, 175)
            XCTAssertEqual(picture.height, 97)
            XCTAssertEqual(picture.u.count, 88 * 49)
            XCTAssertEqual(TestPatternSource.readFrameCounter(from: picture), UInt32(index))
        }
    }

    func testVP9RoundTrip() throws {
        let result = try roundTrip(codec: .vp9, count: 12, forced: [6])
        XCTAssertTrue(result.encoded[0].isKeyframe)
        XCTAssertTrue(result.encoded[6].isKeyframe)
        XCTAssertFalse(result.encoded[3].isKeyframe)
        XCTAssertEqual(result.decoded.map { TestPatternSource.readFrameCounter(from: $0) },
                       (0..<12).map { UInt32($0) })
    }

    func testDecodedPictureResemblesTheSource() throws {
        let result = try roundTrip(count: 5)
        let source = TestPatternSource().frame(number: 4)
        let decoded = result.decoded[4]
        let meanError = zip(source.y, decoded.y).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } / source.y.count
        XCTAssertLessThan(meanError, 12, "mean absolute luma error")
    }

    func testBitrateCanBeChangedWhileRunning() throws {
        let encoder = try VideoEncoder(configuration: .init(width: 320, height: 240, targetBitrateKbps: 200))
        var source = TestPatternSource()
        _ = try encoder.encode(source.nextFrame())
        try encoder.setTargetBitrate(kbps: 800)
        XCTAssertEqual(encoder.configuration.targetBitrateKbps, 800)
        XCTAssertEqual(try encoder.encode(source.nextFrame()).count, 1)
        XCTAssertThrowsError(try encoder.setTargetBitrate(kbps: 0))
    }

    func testDecoderRejectsGarbageWithCodecError() throws {
        let decoder = try VideoDecoder(codec: .vp8)
        // Deterministic pseudo-random bytes (an LCG), so a failure is reproducible.
        var state: UInt32 = 0x1234_5678
        func nextByte() -> UInt8 {
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        for length in [1, 3, 10, 100, 1000] {
            let garbage = (0..<length).map { _ in nextByte() }
            XCTAssertThrowsError(try decoder.decode(garbage), "\(length) random bytes") { error in
                XCTAssertEqual((error as? CodecError)?.code, .decode)
            }
        }
        XCTAssertThrowsError(try decoder.decode([])) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
    }

    func testDecoderSurvivesCorruptionAndRecoversOnKeyframe() throws {
        let encoder = try VideoEncoder(configuration: .init(width: 320, height: 240, targetBitrateKbps: 300))
        let decoder = try VideoDecoder()
        var source = TestPatternSource()
        _ = try decoder.decode(try encoder.encode(source.nextFrame())[0].data)

        // A keyframe header followed by garbage, and a truncated inter frame: either may be
        // rejected or concealed, but neither may crash.
        var corrupt = try encoder.encode(source.nextFrame(), forceKeyframe: true)[0].data
        for index in 10..<corrupt.count { corrupt[index] = UInt8(truncatingIfNeeded: index &* 37) }
        _ = try? decoder.decode(corrupt)
        let inter = try encoder.encode(source.nextFrame())[0].data
        _ = try? decoder.decode(Array(inter.prefix(inter.count / 3)))

        let key = try encoder.encode(source.nextFrame(), forceKeyframe: true)[0]
        XCTAssertTrue(key.isKeyframe)
        let picture = try XCTUnwrap(try decoder.decode(key.data))
        XCTAssertEqual(TestPatternSource.readFrameCounter(from: picture), 3)
    }

    func testEncoderRejectsWrongFrameSizeAndBadConfiguration() throws {
        let encoder = try VideoEncoder(configuration: .init(width: 320, height: 240))
        XCTAssertThrowsError(try encoder.encode(I420Frame(width: 640, height: 480))) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
        var broken = I420Frame(width: 320, height: 240)
        broken.u.removeLast()
        XCTAssertThrowsError(try encoder.encode(broken)) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try VideoEncoder(configuration: .init(width: 0, height: 240))) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
        XCTAssertThrowsError(try VideoEncoder(configuration: .init(width: 320, height: 240, framesPerSecond: 0)))
        XCTAssertThrowsError(try I420Frame(width: 4, height: 4, y: [], u: [], v: [])) { error in
            XCTAssertEqual((error as? CodecError)?.code, .invalidInput)
        }
    }
}
