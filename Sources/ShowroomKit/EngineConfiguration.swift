#if canImport(FoundationEssentials)
public import FoundationEssentials  // UUID in a default argument
#else
public import Foundation  // UUID in a default argument
#endif

/// Where an engine finds its edges.
public enum ClusterEntry: Sendable, Hashable {
    /// Cluster endpoints of any members: the engine asks the cluster's room coordinators where
    /// each channel goes, or, in a cluster without coordinators, places it over the alive edges by
    /// rendezvous hashing.
    case seeds([String])
    /// One edge's client endpoint: every channel goes there.
    case edge(String)
}

/// How an engine connects and behaves.
public struct EngineConfiguration: Sendable {
    /// Where the edges are.
    public var entry: ClusterEntry
    /// Identifies this client installation to the edges; a new session with the same id replaces
    /// the old one (a reconnect), so two engines must not share one.
    public var clientID: String
    /// How long a request waits for the edge's answer before failing with `DEADLINE_EXCEEDED`.
    public var requestTimeout: Duration
    /// Heartbeat period until the edge says otherwise in its session answer.
    public var heartbeatInterval: Duration
    /// Silence after which the edge is taken as gone, until the edge says otherwise.
    public var heartbeatTimeout: Duration
    /// Silence, in heartbeat intervals, after which connections report ``ConnectionState/reconnecting``.
    public var interruptedAfterIntervals: Int
    /// How local media is encoded.
    public var media: LocalMediaConfiguration
    /// Sent to the edge with the session, for its logs.
    public var sdkVersion: String
    /// How long the engine keeps trying to rejoin a connection whose edge failed before it
    /// reports it failed; zero turns automatic rejoin off (the connections fail at once).
    public var rejoinWindow: Duration
    /// How long an edge session stays open after its last channel left (warm): the next room on
    /// the same edge then costs no handshake. Zero closes it at once.
    public var sessionIdleTime: Duration = .seconds(10)

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - entry: Where the edges are.
    ///   - clientID: A stable id of this client; random by default.
    ///   - requestTimeout: Request deadline, 3 s by default.
    ///   - heartbeatInterval: Heartbeat period before the edge's own (1 s).
    ///   - heartbeatTimeout: Edge-gone silence before the edge's own (5 s).
    ///   - interruptedAfterIntervals: Silent intervals before "reconnecting" (3).
    ///   - media: Local media encoding.
    ///   - rejoinWindow: How long to keep rejoining after an edge failed (30 s; zero: never).
    public init(
        entry: ClusterEntry,
        clientID: String = "client-" + UUID().uuidString.lowercased(),
        requestTimeout: Duration = .seconds(3),
        heartbeatInterval: Duration = .seconds(1),
        heartbeatTimeout: Duration = .seconds(5),
        interruptedAfterIntervals: Int = 3,
        media: LocalMediaConfiguration = LocalMediaConfiguration(),
        rejoinWindow: Duration = .seconds(30)
    ) {
        self.entry = entry
        self.clientID = clientID
        self.requestTimeout = requestTimeout
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.interruptedAfterIntervals = interruptedAfterIntervals
        self.media = media
        self.sdkVersion = ShowroomEngine.sdkVersion
        self.rejoinWindow = rejoinWindow
    }
}

/// How an engine encodes what its sources capture. The sources decide size and frame rate (a
/// camera captures in a format); this decides bits.
public struct LocalMediaConfiguration: Sendable, Hashable {
    /// VP8 target bitrate in kbit/s.
    public var videoBitrateKbps: Int
    /// Longest time between keyframes (the GOP length): the longest a new viewer could wait if
    /// the edge's GOP cache were empty, and the size of that cache.
    public var keyframeInterval: Duration
    /// Opus bitrate in bit/s.
    public var audioBitrate: Int

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - videoBitrateKbps: VP8 target bitrate (400 kbit/s).
    ///   - keyframeInterval: GOP length (2 s).
    ///   - audioBitrate: Opus bitrate (32 kbit/s).
    public init(videoBitrateKbps: Int = 400, keyframeInterval: Duration = .seconds(2), audioBitrate: Int = 32_000) {
        self.videoBitrateKbps = videoBitrateKbps
        self.keyframeInterval = keyframeInterval
        self.audioBitrate = audioBitrate
    }
}
