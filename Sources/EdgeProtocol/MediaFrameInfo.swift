/// What the edge reads from a media frame's header to decide where the frame goes; the payload is
/// never looked at. The shell fills it from the `MediaHeader` in the envelope body
/// (``EdgeCodec/checkedFrameInfo(header:payloadSize:)``) and the payload frame's actual size.
public struct MediaFrameInfo: Sendable, Hashable {
    /// The channel connection the frame is published on.
    public var channel: String
    /// The uid the publisher claims; must be its connection's uid.
    public var publisherUID: UInt32
    /// Audio or video; `nil` for a kind this edge does not know (refused, `ERROR_CODE_UNKNOWN_TRACK`).
    public var kind: TrackKind?
    /// Video: the frame decodes without earlier frames.
    public var isKeyframe: Bool
    /// Audio: level before encoding, 0 (silence) – 100 (full scale), for volume indication.
    public var audioLevel: UInt8
    /// Size of the payload in bytes (checked against ``EdgeLimits/maxFrameBytes`` and counted in
    /// the GOP cache's byte bound).
    public var payloadSize: Int

    /// Creates frame info.
    ///
    /// - Parameters:
    ///   - channel: The channel connection the frame is published on.
    ///   - publisherUID: The uid the publisher claims.
    ///   - kind: Audio or video, `nil` if unknown.
    ///   - isKeyframe: The frame decodes on its own (video).
    ///   - audioLevel: 0–100 (audio); values above 100 count as 100.
    ///   - payloadSize: Payload bytes.
    public init(channel: String, publisherUID: UInt32, kind: TrackKind?, isKeyframe: Bool = false, audioLevel: UInt8 = 0, payloadSize: Int) {
        self.channel = channel
        self.publisherUID = publisherUID
        self.kind = kind
        self.isKeyframe = isKeyframe
        self.audioLevel = min(audioLevel, 100)
        self.payloadSize = payloadSize
    }
}
