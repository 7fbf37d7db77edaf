import Edge
import Metrics

/// The edge's Prometheus series, refreshed from the plane's counters on each tick (the frame path
/// itself touches no metrics).
final class EdgeMetrics {
    private let sessions = Gauge(label: "edge.sessions")
    private let channels = Gauge(label: "edge.channels")
    private let connections = Gauge(label: "edge.connections")
    private let bans = Gauge(label: "edge.bans")
    private let stages = Gauge(label: "edge.stages")
    private let frames: [(KeyPath<EdgeStatistics, UInt64>, Counter)] = [
        (\.framesReceived, Counter(label: "edge.frames", dimensions: [("outcome", "received")])),
        (\.framesDelivered, Counter(label: "edge.frames", dimensions: [("outcome", "delivered")])),
        (\.cachedFramesDelivered, Counter(label: "edge.frames", dimensions: [("outcome", "delivered_from_gop_cache")])),
        (\.framesSkipped, Counter(label: "edge.frames", dimensions: [("outcome", "skipped")])),
        (\.framesDropped, Counter(label: "edge.frames", dimensions: [("outcome", "dropped")])),
        (\.framesRefused, Counter(label: "edge.frames", dimensions: [("outcome", "refused")])),
        (\.keyframeRequests, Counter(label: "edge.keyframe_requests")),
        (\.joins, Counter(label: "edge.joins")),
        (\.sessionsDropped, Counter(label: "edge.sessions_dropped")),
        (\.streamMessages, Counter(label: "edge.stream_messages")),
        (\.preloadedJoins, Counter(label: "edge.preloaded_joins")),
        (\.payloadBytesDelivered, Counter(label: "edge.payload_bytes_delivered")),
    ]
    private var last = EdgeStatistics()
    /// Channel activities dropped because no room-coordinator took them in time.
    let activitiesDropped = Counter(label: "edge.coordinator_activities_dropped")

    func update(_ current: EdgeStatistics, sessions: Int, channels: Int, connections: Int, bans: Int, stages: Int) {
        self.sessions.record(sessions)
        self.bans.record(bans)
        self.stages.record(stages)
        self.channels.record(channels)
        self.connections.record(connections)
        for (field, counter) in frames where current[keyPath: field] > last[keyPath: field] {
            counter.increment(by: Int64(current[keyPath: field] - last[keyPath: field]))
        }
        last = current
    }
}
