#if canImport(Darwin)
internal import Darwin
#elseif canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// A synthetic audio source: a sine tone cut into consecutive 20 ms, 48 kHz Int16 frames.
///
/// The phase carries over between frames (and across frequency changes), so the
/// concatenated output is one continuous tone without clicks at frame boundaries.
public struct ToneSource: Sendable {
    /// Tone frequency in Hz; may be changed between frames.
    public var frequency: Double
    /// Peak amplitude as a fraction of full scale, 0...1 (clamped); may be changed between frames.
    public var amplitude: Double
    /// 1 (mono) or 2 (stereo); stereo frames carry the same tone on both channels, interleaved.
    public let channels: Int
    /// Number of frames produced so far.
    public private(set) var framesProduced = 0

    private var phase = 0.0  // radians, kept in 0..<2π so precision does not drift

    /// Creates a tone source.
    /// - Precondition: `channels` is 1 or 2.
    public init(frequency: Double = 440, amplitude: Double = 0.5, channels: Int = 1) {
        precondition(channels == 1 || channels == 2, "ToneSource supports 1 or 2 channels")
        self.frequency = frequency
        self.amplitude = amplitude
        self.channels = channels
    }

    /// The RMS, in sample units, of the tone at the current amplitude: `A · 32767 / √2`.
    public var expectedRMS: Double {
        clampedAmplitude * Double(Int16.max) / 2.0.squareRoot()
    }

    private var clampedAmplitude: Double { min(max(amplitude, 0), 1) }

    /// Produces the next 20 ms frame: `960 × channels` interleaved samples.
    public mutating func nextFrame() -> [Int16] {
        let peak = clampedAmplitude * Double(Int16.max)
        let step = 2 * Double.pi * frequency / Double(AudioFormat.sampleRate)
        let count = AudioFormat.samplesPerChannel
        let channels = self.channels
        var phase = self.phase
        let frame = [Int16](unsafeUninitializedCapacity: count * channels) { buffer, initialized in
            for index in 0..<count {
                let sample = Int16((peak * sin(phase)).rounded())
                for channel in 0..<channels {
                    buffer[index * channels + channel] = sample
                }
                phase += step
                if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
            }
            initialized = count * channels
        }
        self.phase = phase
        framesProduced += 1
        return frame
    }
}
