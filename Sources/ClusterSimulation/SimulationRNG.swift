import Foundation

/// The simulation's one source of randomness: xoshiro256++ with its state filled by SplitMix64,
/// so that a run is a function of its seed. Each part of a run (network, nodes, workload, faults)
/// draws from a child generator of its own, derived from the seed and the part's name rather than
/// from draws, so that a change in how often one part draws does not shift what the others draw.
public struct SimulationRNG: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)
    /// The seed this generator started from.
    public let seed: UInt64

    /// A generator whose state SplitMix64 fills from `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        var mix = seed
        state = (Self.splitMix(&mix), Self.splitMix(&mix), Self.splitMix(&mix), Self.splitMix(&mix))
    }

    /// The generator of part `name` of a run seeded with ``seed``: independent of every other
    /// part's draws.
    public func child(_ name: String) -> SimulationRNG {
        // FNV-1a of the name, mixed with the seed: a stable function of both (no Hasher, whose
        // seed changes per process).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var mix = seed ^ hash
        return SimulationRNG(seed: Self.splitMix(&mix))
    }

    public mutating func next() -> UInt64 {
        let result = Self.rotate(state.0 &+ state.3, 23) &+ state.0
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = Self.rotate(state.3, 45)
        return result
    }

    /// A number in `range`, uniformly (by rejection, so no value is favoured).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard span != 0 else { return Int(bitPattern: UInt(next())) }
        let limit = UInt64.max - UInt64.max % span
        while true {
            let draw = next()
            if draw < limit { return range.lowerBound + Int(draw % span) }
        }
    }

    /// True `perMille` times in a thousand.
    public mutating func chance(perMille: Int) -> Bool {
        perMille > 0 && int(in: 0...999) < perMille
    }

    /// One of `elements` (which must not be empty), uniformly.
    public mutating func pick<T>(_ elements: [T]) -> T {
        elements[int(in: 0...(elements.count - 1))]
    }

    /// An exponentially distributed wait with mean `meanMs`, in whole milliseconds, at most 20
    /// means (the tail is cut so that one draw cannot stall a run).
    public mutating func exponential(meanMs: Int) -> Int64 {
        guard meanMs > 0 else { return 0 }
        // 53 random bits as a fraction in (0, 1].
        let unit = (Double(next() >> 11) + 1) / 9_007_199_254_740_992
        return Int64(min(-Double(meanMs) * log(unit), Double(meanMs) * 20))
    }

    private static func splitMix(_ x: inout UInt64) -> UInt64 {
        x &+= 0x9e37_79b9_7f4a_7c15
        var z = x
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    private static func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}
