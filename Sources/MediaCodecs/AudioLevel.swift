#if canImport(Darwin)
internal import Darwin
#elseif canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// The loudness of a block of Int16 PCM, for volume indicators.
///
/// Levels are in dBov as in RFC 6464 (the RTP audio-level header extension): decibels
/// relative to the overload point, where an RMS of 32767 (a full-scale square wave)
/// is 0 dBov. A full-scale sine is therefore about -3 dBov. The 0...100 `level`
/// maps -60 dBov...0 dBov linearly; anything at or below -60 dBov (including
/// silence) is 0, and a full-scale sine reads 95.
public struct AudioLevel: Equatable, Sendable {
    /// The quietest level reported, in dBov (digital silence and anything below it).
    public static let minimumDecibels = -127.0
    /// The dBov value that `level` maps to 0; `level` rises linearly from here to 0 dBov (100).
    public static let levelFloorDecibels = -60.0

    /// Root mean square of the samples, in sample units (0...32768).
    public let rms: Double
    /// `20 · log10(rms / 32767)`, clamped to -127...0 dBov.
    public let decibels: Double
    /// Volume indication 0 (silence) ... 100 (full scale), linear in dBov above -60 dBov.
    public let level: Int

    /// Measures interleaved PCM (channels are pooled, which is what a meter wants).
    public init(pcm: [Int16]) {
        self = pcm.withUnsafeBufferPointer { AudioLevel(pcm: $0) }
    }

    /// Measures interleaved PCM from a buffer.
    public init(pcm: UnsafeBufferPointer<Int16>) {
        var sumOfSquares = 0.0
        for sample in pcm {
            let value = Double(sample)
            sumOfSquares += value * value
        }
        let rms = pcm.isEmpty ? 0 : (sumOfSquares / Double(pcm.count)).squareRoot()
        self.init(rms: rms)
    }

    /// Builds a level from an RMS value in sample units.
    public init(rms: Double) {
        self.rms = max(rms, 0)
        let decibels = self.rms > 0 ? 20 * log10(self.rms / Double(Int16.max)) : Self.minimumDecibels
        self.decibels = min(max(decibels, Self.minimumDecibels), 0)
        let floor = Self.levelFloorDecibels
        let scaled = (self.decibels - floor) / -floor * 100
        level = Int(min(max(scaled, 0), 100).rounded())
    }

    /// The RFC 6464 audio-level value: `-dBov` rounded, 0 (loudest) ... 127 (silence).
    public var rfc6464Level: UInt8 {
        UInt8((-decibels).rounded())
    }
}
