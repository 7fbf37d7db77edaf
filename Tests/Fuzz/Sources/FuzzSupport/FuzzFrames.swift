/// One fuzz input read as a sequence of frames, so a single input can carry a whole conversation
/// (several messages, the attachment of a media frame, clock steps between them).
///
/// Layout, repeated until the input ends: one control byte (what each target makes of it: which
/// session sends, how far the clock moves), a 16-bit little-endian length, then that many bytes.
/// A length running past the end takes what is left, so every input means something and a
/// mutation of one frame does not shift the others.
public struct FuzzFrames: Sequence, IteratorProtocol {
    /// One frame: its control byte and its bytes.
    public struct Frame {
        /// The control byte.
        public var control: UInt8
        /// The frame's bytes (valid while the input is).
        public var bytes: UnsafeRawBufferPointer
    }

    private let input: UnsafeRawBufferPointer
    private var offset = 0

    /// Reads `input` as frames.
    ///
    /// - Parameter input: The fuzz input.
    public init(_ input: UnsafeRawBufferPointer) {
        self.input = input
    }

    /// The next frame, or `nil` at the end of the input.
    public mutating func next() -> Frame? {
        guard offset < input.count else { return nil }
        let control = input[offset]
        offset += 1
        var length = 0
        if offset < input.count { length = Int(input[offset]); offset += 1 }
        if offset < input.count { length |= Int(input[offset]) << 8; offset += 1 }
        let end = Swift.min(input.count, offset + length)
        let bytes = UnsafeRawBufferPointer(rebasing: input[offset..<end])
        offset = end
        return Frame(control: control, bytes: bytes)
    }

    /// Encodes frames in this layout (the corpus generator's side).
    ///
    /// - Parameter frames: Control byte and bytes of each frame; each at most 65535 bytes.
    /// - Returns: The fuzz input.
    public static func encode(_ frames: [(control: UInt8, bytes: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        for (control, bytes) in frames {
            precondition(bytes.count <= Int(UInt16.max), "a frame holds at most 65535 bytes")
            out.append(control)
            out.append(UInt8(truncatingIfNeeded: bytes.count))
            out.append(UInt8(truncatingIfNeeded: bytes.count >> 8))
            out += bytes
        }
        return out
    }
}

/// A deterministic random source (SplitMix64) for the state machines that draw ids, so a crash
/// reproduces from its input alone.
public struct FuzzRandom: RandomNumberGenerator {
    private var state: UInt64

    /// Creates a source with a fixed seed.
    public init(seed: UInt64 = 0x5EED) {
        state = seed
    }

    /// The next value.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Stops the fuzzer with a report when a property of the code under test does not hold: a
/// violated property is a finding just like a trap.
///
/// - Parameters:
///   - condition: The property.
///   - message: What was expected, for the crash report.
public func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                   file: StaticString = #file, line: UInt = #line) {
    if !condition() {
        fatalError("property violated: \(message())", file: file, line: line)
    }
}
