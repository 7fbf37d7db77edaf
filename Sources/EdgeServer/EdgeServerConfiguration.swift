import Edge

/// What an edge's client endpoint runs with.
public struct EdgeServerConfiguration: Sendable {
    /// Where the client ROUTER listens; `tcp://127.0.0.1:*` picks a free port.
    public var clientBind: String
    /// Host clients use to reach the edge when `clientBind` listens on all interfaces; default:
    /// the host in `clientBind`.
    public var advertiseHost: String?
    /// The app whose tokens are accepted.
    public var appID: String
    /// The certificate those tokens are signed with.
    public var appCertificate: String
    /// The channel plane's limits and timers.
    public var settings: EdgeSettings
    /// Messages queued for one client before frames to it are skipped (ZeroMQ send high-water
    /// mark): about 2 s of 30 fps video plus audio at the default.
    public var clientHighWaterMark: Int32
    /// Kernel send buffer per client connection (SO_SNDBUF), bytes. Small enough that a client
    /// that stops reading backs up into the high-water mark within a second or two, so the edge
    /// starts skipping it (and recovers it at a keyframe) instead of queueing seconds of video in
    /// the kernel.
    public var clientSendBufferBytes: Int32
    /// Largest message a client may send; a client sending more is disconnected by ZeroMQ. Above
    /// the largest frame so an oversize frame is refused with a clear error instead.
    public var maxMessageBytes: Int
    /// How often the plane's timers run (heartbeat timeouts, token warnings, volume reports).
    public var tickInterval: Duration
    /// Control messages (replies and events) held for one client while it is at its high-water
    /// mark; beyond this it is dropped as unreachable.
    public var maxQueuedControlMessages: Int

    /// Creates a configuration; every parameter but the app's credentials has a default.
    public init(
        clientBind: String = "tcp://127.0.0.1:*", advertiseHost: String? = nil, appID: String, appCertificate: String,
        settings: EdgeSettings = EdgeSettings(), clientHighWaterMark: Int32 = 200,
        clientSendBufferBytes: Int32 = 128 << 10, maxMessageBytes: Int = 4 << 20,
        tickInterval: Duration = .milliseconds(20), maxQueuedControlMessages: Int = 4096
    ) {
        self.clientBind = clientBind
        self.advertiseHost = advertiseHost
        self.appID = appID
        self.appCertificate = appCertificate
        self.settings = settings
        self.clientHighWaterMark = clientHighWaterMark
        self.clientSendBufferBytes = clientSendBufferBytes
        self.maxMessageBytes = maxMessageBytes
        self.tickInterval = tickInterval
        self.maxQueuedControlMessages = maxQueuedControlMessages
    }
}
