/// The frames of a video track since its last keyframe, so a new subscriber can start decoding at
/// once instead of waiting for the publisher's next keyframe (what makes instant open possible).
///
/// Invariant: when not empty, the first frame is a keyframe and the rest are the deltas that
/// followed it, in order, so the cache is always decodable from its start. A keyframe replaces
/// the whole content. A delta that would push the cache past ``maxFrames`` or ``maxBytes`` empties
/// it instead (keeping the oldest deltas without their successors would not help, and a GOP cut
/// at its start cannot be decoded); it stays empty until the next keyframe.
///
/// Generic over the frame type: the shell stores ZeroMQ `Multipart` references (forwarded later
/// by reference, never copied), tests store plain values. Storage is reused from GOP to GOP.
public struct GOPCache<Frame> {
    /// Most frames kept.
    public let maxFrames: Int
    /// Most payload bytes kept.
    public let maxBytes: Int
    /// The cached frames, keyframe first.
    public private(set) var frames: ContiguousArray<Frame> = []
    /// Payload bytes of ``frames``.
    public private(set) var byteCount = 0

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - maxFrames: Most frames kept (``EdgeSettings/gopMaxFrames``).
    ///   - maxBytes: Most payload bytes kept (``EdgeSettings/gopMaxBytes``).
    public init(maxFrames: Int, maxBytes: Int) {
        self.maxFrames = maxFrames
        self.maxBytes = maxBytes
    }

    /// True when there is nothing to start a subscriber with.
    public var isEmpty: Bool { frames.isEmpty }

    /// Number of cached frames.
    public var count: Int { frames.count }

    /// Records a frame of the track.
    ///
    /// - Parameters:
    ///   - frame: The frame, kept by value (a reference, for a class type).
    ///   - isKeyframe: The frame decodes on its own.
    ///   - bytes: Its payload size.
    /// - Returns: True if the frame is now cached.
    @discardableResult
    public mutating func add(_ frame: Frame, isKeyframe: Bool, bytes: Int) -> Bool {
        if isKeyframe {
            frames.removeAll(keepingCapacity: true)
            byteCount = 0
            guard maxFrames > 0, bytes <= maxBytes else { return false }
        } else {
            // No keyframe to decode from (none yet, or dropped at a bound): nothing to add to.
            guard !frames.isEmpty else { return false }
            guard frames.count < maxFrames, byteCount + bytes <= maxBytes else {
                removeAll()
                return false
            }
        }
        frames.append(frame)
        byteCount += bytes
        return true
    }

    /// Empties the cache (the storage is kept).
    public mutating func removeAll() {
        frames.removeAll(keepingCapacity: true)
        byteCount = 0
    }
}

extension GOPCache: Sendable where Frame: Sendable {}
