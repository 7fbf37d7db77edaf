import Synchronization

/// Counters of a stream of received frames, as the cheap sinks keep them.
public struct ReceivedFrameStatistics: Sendable, Hashable {
    /// Frames taken.
    public var frames = 0
    /// Keyframes among them.
    public var keyframes = 0
    /// Payload bytes.
    public var bytes = 0
    /// Frames missing between consecutive sequence numbers (skipped by the edge or lost).
    public var sequenceGaps = 0
    /// The last sequence number seen.
    public var lastSequence: UInt32?
    /// Sum of the publish-to-receive latencies, microseconds (same-process publishers only).
    public var latencySumMicroseconds: Int64 = 0
    /// Largest latency seen, microseconds.
    public var latencyMaxMicroseconds: Int64 = 0
    /// Frames that carried a send time.
    public var transitFrames = 0
    /// Sum of the send-to-receive times (``RemoteMediaFrame/transitMicroseconds``), microseconds.
    public var transitSumMicroseconds: Int64 = 0
    /// Largest send-to-receive time seen, microseconds.
    public var transitMaxMicroseconds: Int64 = 0

    /// Mean latency, or `nil` before the first frame.
    public var meanLatency: Duration? {
        frames == 0 ? nil : .microseconds(latencySumMicroseconds / Int64(frames))
    }

    /// Mean send-to-receive time, or `nil` before the first frame with a send time.
    public var meanTransit: Duration? {
        transitFrames == 0 ? nil : .microseconds(transitSumMicroseconds / Int64(transitFrames))
    }

    /// Counts one frame.
    mutating func record(_ frame: RemoteMediaFrame) {
        frames += 1
        if frame.isKeyframe { keyframes += 1 }
        bytes += frame.payload.count
        if let last = lastSequence, frame.sequence &- last > 1, frame.sequence &- last < 1 << 31 {
            sequenceGaps += Int(frame.sequence &- last &- 1)
        }
        lastSequence = frame.sequence
        let latency = frame.latencyMicroseconds
        latencySumMicroseconds += latency
        latencyMaxMicroseconds = max(latencyMaxMicroseconds, latency)
        if let transit = frame.transitMicroseconds {
            transitFrames += 1
            transitSumMicroseconds += transit
            transitMaxMicroseconds = max(transitMaxMicroseconds, transit)
        }
    }
}

/// A video sink that decodes nothing: counts frames, sequence gaps and latency. For benchmarks
/// with hundreds of subscribers, where decoding would measure the codec, not the network.
package final class CountingVideoSink: RemoteVideoSink {
    private let counters = Mutex(ReceivedFrameStatistics())

    /// Creates a sink.
    package init() {}

    /// What it has counted so far.
    package var statistics: ReceivedFrameStatistics { counters.withLock { $0 } }

    /// Counts the frame.
    package func consume(_ frame: RemoteMediaFrame) -> VideoSinkOutcome {
        counters.withLock { $0.record(frame) }
        return .received
    }
}

/// An audio sink that decodes nothing: counts frames, gaps and latency.
package final class CountingAudioSink: RemoteAudioSink {
    private let counters = Mutex(ReceivedFrameStatistics())

    /// Creates a sink.
    package init() {}

    /// What it has counted so far.
    package var statistics: ReceivedFrameStatistics { counters.withLock { $0 } }

    /// Counts the frame.
    package func consume(_ frame: RemoteMediaFrame) {
        counters.withLock { $0.record(frame) }
    }
}

/// A video sink that hands each frame to a closure (on the loop thread), which says what it did.
package final class ClosureVideoSink: RemoteVideoSink {
    private let body: @Sendable (RemoteMediaFrame) -> VideoSinkOutcome

    /// Creates a sink.
    ///
    /// - Parameter body: Called with every frame on the engine's loop thread.
    package init(_ body: @escaping @Sendable (RemoteMediaFrame) -> VideoSinkOutcome) {
        self.body = body
    }

    /// Calls the closure.
    package func consume(_ frame: RemoteMediaFrame) -> VideoSinkOutcome { body(frame) }
}
