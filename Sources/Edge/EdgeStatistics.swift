/// Counters kept by ``ChannelPlane`` since it was created, for metrics and benchmarks.
public struct EdgeStatistics: Sendable, Hashable {
    /// Sessions opened.
    public var sessionsOpened: UInt64 = 0
    /// Sessions dropped for silence (heartbeat timeout) or unreachability.
    public var sessionsDropped: UInt64 = 0
    /// Channel connections made.
    public var joins: UInt64 = 0
    /// Media frames received from clients.
    public var framesReceived: UInt64 = 0
    /// Media frames refused (not joined, audience, too large, …); none of them was forwarded.
    public var framesRefused: UInt64 = 0
    /// Frame copies queued to subscribers (live and from GOP caches).
    public var framesDelivered: UInt64 = 0
    /// Payload bytes of the frame copies queued live (what the edge sends, headers aside).
    public var payloadBytesDelivered: UInt64 = 0
    /// Frame copies from GOP caches (included in ``framesDelivered``).
    public var cachedFramesDelivered: UInt64 = 0
    /// Frame copies not sent because the subscriber waits for a keyframe.
    public var framesSkipped: UInt64 = 0
    /// Frame copies refused by a full subscriber queue (`wouldBlock`).
    public var framesDropped: UInt64 = 0
    /// Keyframe requests sent to publishers.
    public var keyframeRequests: UInt64 = 0
    /// Stream messages accepted.
    public var streamMessages: UInt64 = 0
    /// Joins that took a grant checked ahead by `PRELOAD_CHANNEL` (no token check at the join).
    public var preloadedJoins: UInt64 = 0

    /// Creates zeroed counters.
    public init() {}
}
