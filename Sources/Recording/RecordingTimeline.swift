/// Places frames on a recording's timeline: the tracks' own timestamps (ms on the publisher's
/// clock, shared by its audio and video) rebased so the first frame is at 0, audio and video on one
/// timeline, each track strictly increasing.
///
/// Timestamps come from a peer, so nothing here traps on one. A frame whose timestamp is out of
/// line — not after its track's last frame, more than ``maxGapMs`` past the timeline's latest
/// frame, or beyond what an `Int64` holds — is placed one step (the track's latest interval
/// between frames) after its track's last frame, where it most likely belongs (a *correction*);
/// one such frame among good ones leaves the track where it was. After ``reanchorAfter``
/// corrections in a row the track follows the new clock from where it stands (a publisher whose
/// clock restarted), so pacing comes back.
///
/// A pure value: no clock, no I/O.
public struct RecordingTimeline: Sendable, Hashable {
    /// The longest step forward a frame may make past the timeline's latest frame (10 min): a track
    /// that resumes after a mute lands where its timestamp says, as long as the other track went
    /// on or the pause was shorter than this.
    public static let maxGapMs: Int64 = 10 * 60 * 1000
    /// Corrections in a row after which a track follows its new clock.
    public static let reanchorAfter = 10
    /// The step a correction makes before a track has shown its own (one 20 ms audio frame).
    public static let defaultStepMs: Int64 = 20
    /// The longest step a correction makes.
    public static let maxStepMs: Int64 = 1_000
    /// The latest position the timeline holds (2^40 ms, about 34 years); frames past it are refused,
    /// so a file's times stay far from what a muxer's arithmetic could overflow on.
    public static let maxPositionMs: Int64 = 1 << 40

    private struct TrackState: Sendable, Hashable {
        /// What is subtracted from this track's timestamps; the timeline's origin until the track
        /// is re-anchored.
        var base: Int64?
        var last: Int64?
        /// The track's latest interval between frames, 1 ms – ``maxStepMs``.
        var step = RecordingTimeline.defaultStepMs
        var correctionsInARow = 0
    }

    private var origin: Int64?
    private var audio = TrackState()
    private var video = TrackState()
    /// The latest position given to any track.
    public private(set) var latestMs: Int64 = 0
    /// Frames placed elsewhere than their timestamp said (out of line, see the type's description).
    public private(set) var corrections = 0

    /// Creates an empty timeline; its first frame sets zero.
    public init() {}

    /// Whether any frame has been placed yet.
    public var isEmpty: Bool { origin == nil }

    /// Places a frame.
    ///
    /// - Parameters:
    ///   - track: The frame's track.
    ///   - timestampMs: The frame's timestamp on its track's clock, in ms; any value.
    /// - Returns: Its position in ms from the timeline's start, after its track's previous frame;
    ///   nil when that position would lie beyond ``maxPositionMs`` (the frame is to be dropped).
    public mutating func place(_ track: RecordedTrack, timestampMs: Int64) -> Int64? {
        let origin = self.origin ?? timestampMs
        var state = track == .audio ? audio : video
        let base = state.base ?? origin
        let floor = state.last.map { $0 + 1 } ?? 0
        let ceiling = latestMs + Self.maxGapMs
        let (candidate, overflow) = timestampMs.subtractingReportingOverflow(base)

        let position: Int64
        if !overflow, candidate >= floor, candidate <= ceiling {
            position = candidate
            if let last = state.last { state.step = min(max(candidate - last, 1), Self.maxStepMs) }
            state.base = base
            state.correctionsInARow = 0
        } else {
            corrections += 1
            state.correctionsInARow += 1
            // A track's first frame has no history to keep: it starts where the timeline stands.
            position = state.last.map { $0 + state.step } ?? latestMs
            if state.last == nil || state.correctionsInARow >= Self.reanchorAfter {
                let (rebased, rebaseOverflow) = timestampMs.subtractingReportingOverflow(position)
                if !rebaseOverflow {
                    state.base = rebased
                    state.correctionsInARow = 0
                }
            }
        }
        guard position <= Self.maxPositionMs else { return nil }
        state.last = position
        if track == .audio { audio = state } else { video = state }
        self.origin = origin
        latestMs = max(latestMs, position)
        return position
    }
}
