import XCTest
@testable import MediaCodecs

final class TestPatternSourceTests: XCTestCase {
    func testCounterReadsBackFromUncompressedFrames() {
        let source = TestPatternSource(width: 320, height: 240)
        for number: UInt32 in [0, 1, 2, 255, 256, 0x5A5A5A, 0xFF_FFFE, 0xFF_FFFF] {
            XCTAssertEqual(TestPatternSource.readFrameCounter(from: source.frame(number: number)), number)
        }
        // Only 24 bits are drawn.
        XCTAssertEqual(TestPatternSource.readFrameCounter(from: source.frame(number: 0x0100_0005)), 5)
    }

    func testNextFrameAdvancesAndWraps() {
        var source = TestPatternSource(firstFrameNumber: UInt32.max)
        XCTAssertEqual(TestPatternSource.readFrameCounter(from: source.nextFrame()), 0xFF_FFFF)
        XCTAssertEqual(source.nextFrameNumber, 0)
        XCTAssertEqual(TestPatternSource.readFrameCounter(from: source.nextFrame()), 0)
    }

    func testCellsAreLargeEnoughAndLayoutAdaptsToSmallFrames() {
        XCTAssertEqual(Barcode(width: 320, height: 240)?.cellSize, 10)
        XCTAssertEqual(Barcode(width: 640, height: 360)?.cellSize, 20)
        let narrow = Barcode(width: 160, height: 120)
        XCTAssertEqual(narrow?.cellSize, 10)
        XCTAssertEqual(narrow?.rows, 2)
        XCTAssertEqual(Barcode(width: 64, height: 48)?.cellSize, 6, "band limited to half the height")
        XCTAssertNotNil(Barcode(width: 32, height: 32))
        XCTAssertNil(Barcode(width: 31, height: 32))
        XCTAssertNil(Barcode(width: 16, height: 16))
        for (width, height) in [(160, 120), (175, 97), (64, 48), (32, 32), (1280, 720)] {
            let source = TestPatternSource(width: width, height: height)
            XCTAssertEqual(TestPatternSource.readFrameCounter(from: source.frame(number: 12_345)), 12_345,
                           "\(width)×\(height)")
        }
    }

    func testFramesWithoutTheMarkerReadAsNil() {
        XCTAssertNil(TestPatternSource.readFrameCounter(from: I420Frame(width: 320, height: 240)))
        XCTAssertNil(TestPatternSource.readFrameCounter(from: I420Frame(width: 320, height: 240, luma: 235)))
        XCTAssertNil(TestPatternSource.readFrameCounter(from: I420Frame(width: 8, height: 8)))

        // A flipped data bit breaks the check nibble.
        var frame = TestPatternSource().frame(number: 77)
        let x = 10 * 10 + 5, y = 5  // centre of cell 10 (a data cell)
        let value: UInt8 = frame.y[y * 320 + x] > 128 ? 16 : 235
        for row in 0..<10 { for column in 100..<110 { frame.y[row * 320 + column] = value } }
        XCTAssertNil(TestPatternSource.readFrameCounter(from: frame))
    }

    func testPatternMovesAndHasColour() {
        let source = TestPatternSource()
        let a = source.frame(number: 10), b = source.frame(number: 11)
        XCTAssertNotEqual(a.y, b.y)
        XCTAssertNotEqual(a.u, b.u)
        XCTAssertTrue(a.u.contains { $0 != 128 } && a.v.contains { $0 != 128 })
        XCTAssertEqual(a, source.frame(number: 10), "rendering is deterministic")

        var reused = I420Frame(width: 320, height: 240)
        source.render(number: 10, into: &reused)
        XCTAssertEqual(reused, a)
    }
}
