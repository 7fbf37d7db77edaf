/// One published track, as ``ChannelSnapshot`` reports it.
public struct TrackSnapshot: Sendable, Hashable {
    /// The track.
    public var track: TrackID
    /// The publishing session.
    public var publisher: SessionID
    /// Its subscribers, in subscription order (muted ones included).
    public var subscribers: [SessionID]
    /// The subscribers that muted it locally.
    public var muted: [SessionID]
    /// The subscribers waiting for a keyframe.
    public var awaitingKeyframe: [SessionID]
    /// Frames in its GOP cache (0 for audio).
    public var cachedFrames: Int
    /// Payload bytes in its GOP cache.
    public var cachedBytes: Int
}
