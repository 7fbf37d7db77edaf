/// What became of one frame (or one GOP-cache flush) across a track's subscribers.
public struct ForwardCounts: Sendable, Hashable {
    /// Copies queued to subscribers.
    public var delivered = 0
    /// Copies not sent because the subscriber waits for a keyframe (or is muted: not counted).
    public var skipped = 0
    /// Copies refused by a full subscriber queue.
    public var dropped = 0

    /// Creates counts.
    ///
    /// - Parameters:
    ///   - delivered: Copies queued.
    ///   - skipped: Copies skipped while waiting for a keyframe.
    ///   - dropped: Copies refused by full queues.
    public init(delivered: Int = 0, skipped: Int = 0, dropped: Int = 0) {
        self.delivered = delivered
        self.skipped = skipped
        self.dropped = dropped
    }
}
