/// One compressed video frame as produced by `VideoEncoder`.
public struct EncodedVideoFrame: Equatable, Sendable {
    /// The codec bitstream for the frame (a complete VP8/VP9 frame, not split into partitions).
    public var data: [UInt8]
    /// True when the frame can be decoded without any earlier frame (a keyframe / start of a GOP).
    public var isKeyframe: Bool
    /// Presentation timestamp in the encoder's time base, `1 / framesPerSecond` seconds,
    /// i.e. the index of the source frame.
    public var pts: Int64

    /// Creates an encoded frame.
    public init(data: [UInt8], isKeyframe: Bool, pts: Int64) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.pts = pts
    }
}
