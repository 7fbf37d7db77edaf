/// The one PCM layout the audio path uses: 48 kHz, 20 ms frames, interleaved Int16.
///
/// Fixing the frame duration keeps packetisation, jitter buffering and level
/// metering trivially aligned across the cluster.
public enum AudioFormat {
    /// Samples per second per channel.
    public static let sampleRate = 48_000
    /// Duration of one frame in milliseconds.
    public static let frameDurationMilliseconds = 20
    /// Samples per channel in one frame (960).
    public static let samplesPerChannel = sampleRate * frameDurationMilliseconds / 1000

    /// Interleaved samples in one frame for `channels` channels.
    public static func samplesPerFrame(channels: Int) -> Int {
        samplesPerChannel * channels
    }

    static func validate(channels: Int) throws {
        guard channels == 1 || channels == 2 else {
            throw CodecError.invalidInput("channels must be 1 (mono) or 2 (stereo), got \(channels)")
        }
    }
}
