/// When a recording cuts its file into the next segment.
///
/// Fed every frame of one uid's recording in the order they are written, it answers what to do
/// with each: write it into the current segment, or begin the next segment with it. A segment
/// lasts ``segmentLengthMs`` (30 min by default) of the frames' own time; with video it ends at
/// the first video keyframe at or after that, so every segment starts on a keyframe — a
/// keyframe is asked for once when the length is reached, and a video track that sends none for
/// ``keyframeGraceMs`` more is cut at the next frame (the next segment then waits for its
/// keyframe). Audio-only recordings cut at the first frame at or after the length.
///
/// Frame times go through a ``RecordingTimeline``, so timestamps from a peer that go backwards or
/// jump neither trap nor stall the cuts. A pure value: no clock, no I/O.
public struct SegmentPolicy: Sendable, Hashable {
    /// The default segment length: 30 minutes.
    public static let defaultSegmentLengthMs: Int64 = 30 * 60 * 1000
    /// How long past the segment length a video track may go without a keyframe before the cut is
    /// made anyway, by default.
    public static let defaultKeyframeGraceMs: Int64 = 10_000

    /// What to do with a frame.
    public enum Action: Sendable, Hashable {
        /// Write the frame into the current segment.
        case write
        /// Write the frame into the current segment, and ask the publisher for a keyframe: the
        /// segment is due and the cut waits for one.
        case writeAndRequestKeyframe
        /// Finish the current segment (if one is open) and begin segment `index` (0, 1, 2 …) with
        /// this frame.
        case beginSegment(index: Int)
    }

    /// The length of a segment in ms of the frames' time.
    public let segmentLengthMs: Int64
    /// How long past ``segmentLengthMs`` a cut waits for a video keyframe.
    public let keyframeGraceMs: Int64
    /// Whether the recording has a video track (cuts wait for its keyframes).
    public let hasVideo: Bool
    /// The open segment's number; nil before the first frame.
    public private(set) var segmentIndex: Int?

    private var timeline = RecordingTimeline()
    private var segmentStartMs: Int64 = 0
    private var keyframeRequested = false

    /// Creates the policy of one recording.
    ///
    /// - Parameters:
    ///   - hasVideo: Whether the recording has a video track.
    ///   - segmentLengthMs: The segment length (at least 1 ms); 30 minutes by default.
    ///   - keyframeGraceMs: How long past the length a cut waits for a video keyframe (at least 0).
    public init(hasVideo: Bool, segmentLengthMs: Int64 = SegmentPolicy.defaultSegmentLengthMs,
                keyframeGraceMs: Int64 = SegmentPolicy.defaultKeyframeGraceMs) {
        self.hasVideo = hasVideo
        self.segmentLengthMs = min(max(segmentLengthMs, 1), RecordingTimeline.maxPositionMs)
        self.keyframeGraceMs = min(max(keyframeGraceMs, 0), RecordingTimeline.maxPositionMs)
    }

    /// Says what to do with the next frame.
    ///
    /// - Parameters:
    ///   - track: The frame's track.
    ///   - timestampMs: Its timestamp on its track's clock, in ms; any value.
    ///   - keyframe: Whether it is a video keyframe (ignored for audio).
    /// - Returns: The action; the first frame begins segment 0.
    public mutating func next(_ track: RecordedTrack, timestampMs: Int64, keyframe: Bool) -> Action {
        // Past the timeline's last position (decades of peer-made jumps): stay in the segment.
        guard let position = timeline.place(track, timestampMs: timestampMs) else { return .write }
        guard let index = segmentIndex else { return begin(0, at: position) }
        // Both positions lie within 0 ... maxPositionMs: the difference cannot overflow.
        let elapsed = position - segmentStartMs
        guard elapsed >= segmentLengthMs else { return .write }
        if !hasVideo || (track == .video && keyframe) || elapsed - segmentLengthMs >= keyframeGraceMs {
            return begin(index + 1, at: position)
        }
        if keyframeRequested { return .write }
        keyframeRequested = true
        return .writeAndRequestKeyframe
    }

    private mutating func begin(_ index: Int, at position: Int64) -> Action {
        segmentIndex = index
        segmentStartMs = position
        keyframeRequested = false
        return .beginSegment(index: index)
    }
}
