/// A synthetic video source: a moving test pattern with the frame number drawn in.
///
/// Each frame shows a diagonal luma gradient and colour bands drifting over time, a
/// red box bouncing around, and along the top a row of black/white cells that encode
/// the frame counter. Because the cells are large and high-contrast they survive lossy
/// compression, so `readFrameCounter(from:)` can recover the number from a *decoded*
/// frame, which lets end-to-end tests check ordering, loss and latency per frame.
///
/// Barcode layout (32 cells, left to right, wrapping onto 2 or 4 rows on narrow frames):
/// 4 marker cells `1 0 1 1`, 24 counter bits (most significant first), then a 4-bit check
/// (the XOR of the counter's six nibbles, XOR `0101`). White (Y 235) is 1, black (Y 16) is 0.
/// Cells are square, an even number of pixels wide, ≥ 8 px whenever the frame allows
/// (10 px at 320×240, 20 px at 640×360); the band below them holds the moving picture.
public struct TestPatternSource: Sendable {
    /// Number of counter bits in the barcode; the counter shown is `frameNumber mod 2^24`.
    public static let counterBits = 24

    /// Frame width in pixels.
    public let width: Int
    /// Frame height in pixels.
    public let height: Int
    /// The number the next call to `nextFrame()` draws.
    public private(set) var nextFrameNumber: UInt32

    /// Creates a source.
    /// - Precondition: the frame is at least 32×32 pixels, so the barcode fits.
    public init(width: Int = 320, height: Int = 240, firstFrameNumber: UInt32 = 0) {
        precondition(Barcode(width: width, height: height) != nil, "TestPatternSource needs at least 32×32 pixels")
        self.width = width
        self.height = height
        nextFrameNumber = firstFrameNumber
    }

    /// Produces the next frame and advances the counter (wrapping at `UInt32.max`).
    public mutating func nextFrame() -> I420Frame {
        let frame = frame(number: nextFrameNumber)
        nextFrameNumber &+= 1
        return frame
    }

    /// Renders the frame for `number` without changing the source's counter.
    public func frame(number: UInt32) -> I420Frame {
        var frame = I420Frame(width: width, height: height)
        render(number: number, into: &frame)
        return frame
    }

    /// Draws the frame for `number` into an existing frame of the source's size,
    /// reusing its buffers (for producers that want no per-frame allocation).
    /// - Precondition: `frame` is `width × height` and valid.
    public func render(number: UInt32, into frame: inout I420Frame) {
        precondition(frame.width == width && frame.height == height && frame.isValid,
                     "render(number:into:) needs a valid \(width)×\(height) frame")
        let barcode = Barcode(width: width, height: height)!
        let band = barcode.bandHeight
        let t = Int(number % 100_000)  // keeps arithmetic small; the motion period is far shorter anyway
        let chromaWidth = frame.chromaWidth
        let chromaHeight = frame.chromaHeight

        // Box: a fifth of the smaller side, bouncing diagonally within the picture area.
        let boxSize = max(2, min(width, height - band) / 5) & ~1
        let boxX = Self.bounce(t * 4, range: width - boxSize)
        let boxY = band + Self.bounce(t * 3, range: height - band - boxSize)

        frame.y.withUnsafeMutableBufferPointer { y in
            for row in 0..<height {
                let line = row * width
                if row < band {
                    for column in 0..<width { y[line + column] = 128 }
                    continue
                }
                let inBoxRow = row >= boxY && row < boxY + boxSize
                for column in 0..<width {
                    if inBoxRow && column >= boxX && column < boxX + boxSize {
                        y[line + column] = 82
                    } else {
                        // Triangle wave (no hard wrap edge) from 16 to 235, drifting 3 px per frame.
                        y[line + column] = UInt8(16 + Self.triangle(column + row + 3 * t, halfPeriod: 219))
                    }
                }
            }
            for (index, bit) in barcode.bits(for: number).enumerated() {
                let (x, top) = barcode.origin(ofCell: index)
                let value: UInt8 = bit ? 235 : 16
                for row in top..<(top + barcode.cellSize) {
                    for column in x..<(x + barcode.cellSize) { y[row * width + column] = value }
                }
            }
        }

        let chromaBand = (band + 1) / 2
        let chromaBox = (x: boxX / 2, y: boxY / 2, size: boxSize / 2)
        frame.u.withUnsafeMutableBufferPointer { u in
            frame.v.withUnsafeMutableBufferPointer { v in
                for row in 0..<chromaHeight {
                    let line = row * chromaWidth
                    let inBoxRow = row >= chromaBox.y && row < chromaBox.y + chromaBox.size
                    for column in 0..<chromaWidth {
                        if row < chromaBand {
                            u[line + column] = 128
                            v[line + column] = 128
                        } else if inBoxRow && column >= chromaBox.x && column < chromaBox.x + chromaBox.size {
                            u[line + column] = 90  // BT.601 red
                            v[line + column] = 240
                        } else {
                            // Horizontal and vertical colour bands moving at different speeds.
                            u[line + column] = UInt8(64 + Self.triangle(2 * column + 2 * t, halfPeriod: 127))
                            v[line + column] = UInt8(64 + Self.triangle(2 * row + t, halfPeriod: 127))
                        }
                    }
                }
            }
        }
    }

    /// Reads the frame counter back from a (possibly decoded, lossy) frame.
    ///
    /// Averages the luma in the middle of each cell and thresholds it halfway between
    /// black and white. Returns `nil` if the frame is too small, the marker cells do not
    /// read `1 0 1 1`, or the check nibble does not match, i.e. for anything that is
    /// not a readable test-pattern frame.
    public static func readFrameCounter(from frame: I420Frame) -> UInt32? {
        guard frame.isValid, let barcode = Barcode(width: frame.width, height: frame.height) else { return nil }
        let inset = barcode.cellSize / 4  // skip the edges, where compression rings most
        let side = barcode.cellSize - 2 * inset
        let bits: [Bool] = frame.y.withUnsafeBufferPointer { y in
            (0..<Barcode.cellCount).map { index in
                let (x, top) = barcode.origin(ofCell: index)
                var sum = 0
                for row in (top + inset)..<(top + inset + side) {
                    for column in (x + inset)..<(x + inset + side) { sum += Int(y[row * frame.width + column]) }
                }
                return sum / (side * side) >= 126
            }
        }
        return Barcode.decode(bits)
    }

    /// 0 → range → 0 back and forth, one pixel per unit.
    private static func bounce(_ position: Int, range: Int) -> Int {
        guard range > 0 else { return 0 }
        return triangle(position, halfPeriod: range)
    }

    /// A triangle wave: rises 0...halfPeriod, falls back, period 2·halfPeriod.
    private static func triangle(_ position: Int, halfPeriod: Int) -> Int {
        let phase = position % (2 * halfPeriod)
        return phase <= halfPeriod ? phase : 2 * halfPeriod - phase
    }
}

/// Where the counter cells go for a given frame size, and how bits map to the counter.
struct Barcode {
    static let cellCount = 32
    static let marker: [Bool] = [true, false, true, true]

    let cellSize: Int
    let cellsPerRow: Int
    var rows: Int { Self.cellCount / cellsPerRow }
    var bandHeight: Int { rows * cellSize }

    /// Picks the widest layout (32, 16 or 8 cells a row) whose cells are at least 8 px, else
    /// the one with the largest cells; the band never takes more than half the height.
    /// nil if not even 4 px cells fit (frames smaller than 32×32).
    init?(width: Int, height: Int) {
        var best: (perRow: Int, size: Int)?
        for perRow in [32, 16, 8] {
            let rows = Self.cellCount / perRow
            let size = min(width / perRow, height / 2 / rows) & ~1  // even, so chroma lines up
            if best == nil || size > best!.size { best = (perRow, size) }
            if size >= 8 { best = (perRow, size); break }
        }
        guard let best, best.size >= 4 else { return nil }
        cellSize = best.size
        cellsPerRow = best.perRow
    }

    func origin(ofCell index: Int) -> (x: Int, y: Int) {
        ((index % cellsPerRow) * cellSize, (index / cellsPerRow) * cellSize)
    }

    func bits(for number: UInt32) -> [Bool] {
        let counter = number & 0xFF_FFFF
        var bits = Self.marker
        for bit in stride(from: 23, through: 0, by: -1) { bits.append(counter >> UInt32(bit) & 1 == 1) }
        let check = Self.check(counter)
        for bit in stride(from: 3, through: 0, by: -1) { bits.append(check >> UInt32(bit) & 1 == 1) }
        return bits
    }

    static func decode(_ bits: [Bool]) -> UInt32? {
        guard bits.count == cellCount, Array(bits[0..<4]) == marker else { return nil }
        let value = { (range: Range<Int>) in bits[range].reduce(UInt32(0)) { $0 << 1 | ($1 ? 1 : 0) } }
        let counter = value(4..<28)
        return value(28..<32) == check(counter) ? counter : nil
    }

    /// XOR of the six nibbles, XOR 0101 so an all-black data area does not check out.
    private static func check(_ counter: UInt32) -> UInt32 {
        var nibbles: UInt32 = 0
        for shift in stride(from: 0, to: 24, by: 4) { nibbles ^= counter >> UInt32(shift) & 0xF }
        return nibbles ^ 0b0101
    }
}
