/// A recorded track: a publisher's audio or video.
public enum RecordedTrack: Sendable, Hashable, CaseIterable {
    /// Opus audio.
    case audio
    /// VP8 video.
    case video
}

/// What a WebM file says about its VP8 track.
public struct VideoTrackInfo: Sendable, Hashable {
    /// Widest and tallest picture VP8 can describe (14 bits per side).
    public static let maxSide = 16_383

    /// Picture width in pixels, 1 – 16383.
    public var width: Int
    /// Picture height in pixels, 1 – 16383.
    public var height: Int

    /// Creates the description of a VP8 track.
    ///
    /// - Parameters:
    ///   - width: Picture width in pixels (players scale to it; VP8 frames carry their own size).
    ///   - height: Picture height in pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// What a WebM file says about its Opus track: 48 kHz, one or two channels, and the `OpusHead`
/// the Matroska Opus mapping wants as the track's codec private data.
public struct AudioTrackInfo: Sendable, Hashable {
    /// Opus' sample rate, whatever the publisher captured at.
    public static let sampleRate = 48_000
    /// The samples libopus' encoder delays its output by at 48 kHz (its lookahead, 6.5 ms), which a
    /// decoder skips at the start of the stream.
    public static let defaultPreSkip: UInt16 = 312

    /// 1 (mono) or 2 (stereo).
    public var channels: Int
    /// Samples at 48 kHz a decoder discards at the start (`OpusHead` pre-skip).
    public var preSkip: UInt16

    /// Creates the description of an Opus track.
    ///
    /// - Parameters:
    ///   - channels: 1 or 2 (channel mapping family 0).
    ///   - preSkip: Samples the decoder drops at the start; libopus' lookahead by default.
    public init(channels: Int, preSkip: UInt16 = AudioTrackInfo.defaultPreSkip) {
        self.channels = channels
        self.preSkip = preSkip
    }

    /// The 19-byte `OpusHead` identification header (RFC 7845 §5.1): version 1, the channel count,
    /// pre-skip, 48 kHz input, no output gain, channel mapping family 0. Matroska stores it as the
    /// track's CodecPrivate.
    public var opusHead: [UInt8] {
        var head = Array("OpusHead".utf8)
        head.append(1)  // version
        head.append(UInt8(clamping: channels))
        head.append(contentsOf: littleEndianBytes(UInt32(preSkip), count: 2))
        head.append(contentsOf: littleEndianBytes(UInt32(Self.sampleRate), count: 4))
        head.append(contentsOf: [0, 0])  // output gain, Q7.8 dB
        head.append(0)  // mapping family 0: mono or left/right stereo, no mapping table
        return head
    }

    private func littleEndianBytes(_ value: UInt32, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
    }
}
