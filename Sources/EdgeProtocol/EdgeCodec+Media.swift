import ShowroomWire

extension EdgeCodec {
    /// Smallest picture side a video header may announce (when it announces one).
    public static let minPictureSide: UInt32 = 16
    /// Largest picture side a video header may announce.
    public static let maxPictureSide: UInt32 = 8192

    /// What the plane needs from a media frame's header, after checking every header field an edge
    /// forwards to subscribers (`proto/showroom/wire/media.proto`), so that no subscriber is handed
    /// a header its publisher could not have sent honestly.
    ///
    /// Checked in this order: the channel name (``Names/validateChannel(_:field:)``), the track
    /// kind, the codec against the track (Opus for audio; VP8 or VP9 for video), `payload_size`
    /// against the attachment, the picture size (each side 0 or 16 – 8192) and the audio level
    /// (0 – 100). The publisher's uid is the plane's to check (it knows the connection).
    ///
    /// - Parameters:
    ///   - header: The `MediaHeader` from the envelope body.
    ///   - payloadSize: The actual size of the payload frame.
    /// - Returns: The frame info.
    /// - Throws: `INVALID_ARGUMENT` for a bad channel name, codec, picture size or audio level;
    ///   `UNKNOWN_TRACK` for a track kind neither audio nor video; `MALFORMED_MESSAGE` when
    ///   `payload_size` is not the attachment's size.
    /// The most channels a forwarded frame names besides its own (a forward has at most 4
    /// destinations).
    public static let maxAlsoChannels = 3

    public static func checkedFrameInfo(header: WireMediaHeader, payloadSize: Int) throws(ShowroomError) -> MediaFrameInfo {
        try Names.validateChannel(header.channel, field: "media header channel")
        let kind = try requiredTrackKind(header.track)
        switch (kind, header.codec) {
        case (.audio, .opus), (.video, .vp8), (.video, .vp9):
            break
        default:
            throw .invalidArgument(
                "media header codec \(describe(header.codec)) does not fit a \(kind) track; audio is Opus, video is VP8 or VP9")
        }
        guard UInt64(header.payloadSize) == UInt64(payloadSize) else {
            throw .malformed(
                "media header payload_size is \(header.payloadSize) but the payload frame is \(payloadSize) bytes; set payload_size to the attachment's size")
        }
        for (side, value) in [("width", header.width), ("height", header.height)]
        where value != 0 && !(minPictureSide...maxPictureSide).contains(value) {
            throw .invalidArgument(
                "media header \(side) is \(value); a picture side is 0 (not given) or \(minPictureSide) – \(maxPictureSide) pixels")
        }
        guard header.alsoChannels.count <= maxAlsoChannels else {
            throw .invalidArgument("media header also_channels lists \(header.alsoChannels.count) channels; a forwarded frame names at most \(maxAlsoChannels) more")
        }
        for other in header.alsoChannels {
            try Names.validateChannel(other, field: "media header also_channels")
            guard other != header.channel else {
                throw .invalidArgument("media header also_channels repeats the frame's own channel \(other)")
            }
        }
        guard header.audioLevel <= 100 else {
            throw .invalidArgument("media header audio_level is \(header.audioLevel); it is 0 (silence) – 100 (full scale)")
        }
        return MediaFrameInfo(
            channel: header.channel, publisherUID: header.publisherUid, kind: kind,
            isKeyframe: header.keyframe, audioLevel: UInt8(header.audioLevel), payloadSize: payloadSize)
    }

    private static func describe(_ codec: WireCodec) -> String {
        switch codec {
        case .unspecified: "unspecified (0)"
        case .opus: "Opus"
        case .vp8: "VP8"
        case .vp9: "VP9"
        default: "\(codec.rawValue) (unknown)"
        }
    }
}
