/// The knobs of ``ChannelPlane``: limits, timers and cache bounds. The defaults (``init()``) are
/// for production; tests shorten the timers.
public struct EdgeSettings: Sendable, Hashable {
    /// The hard limits.
    public var limits: EdgeLimits
    /// How often clients are told to send a heartbeat (any message counts).
    public var heartbeatInterval: Duration
    /// A session not heard from for this long is dropped: its visible users go offline (dropped)
    /// in every channel. 5 s tolerates four lost heartbeats at the 1 s interval.
    public var heartbeatTimeout: Duration
    /// "Token will expire" goes out this long before the first privilege in use expires (30 s, as
    /// the seeds' SDKs do).
    public var tokenWarningLead: Duration
    /// At most one keyframe request per track per this interval. A keyframe costs the publisher
    /// bandwidth, and a burst of joins or congested subscribers must not turn into a keyframe
    /// storm; 500 ms still lets a subscriber that found no usable GOP start quickly.
    public var keyframeRequestInterval: Duration
    /// Most frames kept in a video track's GOP cache (300 = 10 s at 30 fps). A GOP that grows past
    /// a bound is dropped whole (a partial GOP cannot be decoded) until the next keyframe.
    public var gopMaxFrames: Int
    /// Most payload bytes kept in a video track's GOP cache (8 MiB ≈ 50 s at 1.2 Mbps).
    public var gopMaxBytes: Int
    /// Refusals of one-way messages (frames, stream messages) with the same code on the same
    /// channel are reported to the client at most once per this interval, so a client sending 30
    /// refused frames a second gets one error a second, not 30.
    public var refusalReportInterval: Duration
    /// Shortest volume indication interval accepted (100 ms).
    public var minVolumeInterval: Duration
    /// Speakers per volume indication (the loudest three, as the seeds' SDKs report).
    public var volumeSpeakers: Int
    /// Audio level (0–100, linear in dBov above −60 dBov) from which a speaker counts as talking
    /// for voice activity: 25 is −45 dBov, well above room noise, below quiet speech.
    public var speechLevel: Int

    /// Creates settings; every parameter defaults to the documented value.
    public init(
        limits: EdgeLimits = EdgeLimits(),
        heartbeatInterval: Duration = .seconds(1),
        heartbeatTimeout: Duration = .seconds(5),
        tokenWarningLead: Duration = .seconds(30),
        keyframeRequestInterval: Duration = .milliseconds(500),
        gopMaxFrames: Int = 300,
        gopMaxBytes: Int = 8 << 20,
        refusalReportInterval: Duration = .seconds(1),
        minVolumeInterval: Duration = .milliseconds(100),
        volumeSpeakers: Int = 3,
        speechLevel: Int = 25
    ) {
        self.limits = limits
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.tokenWarningLead = tokenWarningLead
        self.keyframeRequestInterval = keyframeRequestInterval
        self.gopMaxFrames = gopMaxFrames
        self.gopMaxBytes = gopMaxBytes
        self.refusalReportInterval = refusalReportInterval
        self.minVolumeInterval = minVolumeInterval
        self.volumeSpeakers = volumeSpeakers
        self.speechLevel = speechLevel
    }
}
