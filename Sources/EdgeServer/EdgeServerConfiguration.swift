import Edge
import ZeroMQ

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
    /// Messages read ahead from one client connection before ZeroMQ stops reading it (ZeroMQ
    /// receive high-water mark; the client's own queue and TCP hold the rest, nothing is lost).
    /// It bounds what one peer can make the edge hold: at most this many messages of at most
    /// ``EdgeLimits/connectionCloseBytes`` (6 MiB by default), about 50 MiB, and that only while
    /// the loop is not reading. 8 is over 100 ms of a publisher's audio and video, and the loop
    /// reads every few milliseconds.
    public var clientReceiveHighWaterMark: Int32
    /// How long a client connection may stay open without opening a session (and a TCP
    /// connection without completing the ZeroMQ handshake) before the edge closes it. Clients
    /// open their session right after connecting.
    public var unopenedConnectionTimeout: Duration
    /// Most client connections without a session at once; beyond it the oldest is closed, so a
    /// flood of idle connections cannot hold the edge's descriptors while a real client that
    /// opens its session at once still gets in.
    public var maxUnopenedConnections: Int
    /// How often the plane's timers run (heartbeat timeouts, token warnings, volume reports).
    public var tickInterval: Duration
    /// Control messages (replies and events) held for one client while it is at its high-water
    /// mark; beyond this it is dropped as unreachable.
    public var maxQueuedControlMessages: Int
    /// The client endpoint's CURVE key pair when client links are encrypted; nil for plain links.
    /// Its public key reaches clients through the membership and the placement answers.
    public var clientCurveKey: CurveKeyPair?
    /// The longest a draining edge (SIGTERM) gives its clients to move elsewhere before it closes
    /// what is left; it closes sooner once every client has left or moved out.
    public var drainTime: Duration = .seconds(5)
    /// The timers of channels hosted as relays of their origin edges (release, re-claims,
    /// keyframe requests upstream).
    public var relay = RelayBook.Settings()
    /// Where recordings are written; nil: this edge records nothing (and refuses orders).
    public var recording: EdgeRecordingSettings?

    /// Creates a configuration; every parameter but the app's credentials has a default.
    public init(
        clientBind: String = "tcp://127.0.0.1:*", advertiseHost: String? = nil, appID: String, appCertificate: String,
        settings: EdgeSettings = EdgeSettings(), clientHighWaterMark: Int32 = 200,
        clientSendBufferBytes: Int32 = 128 << 10, clientReceiveHighWaterMark: Int32 = 8,
        unopenedConnectionTimeout: Duration = .seconds(5), maxUnopenedConnections: Int = 512,
        tickInterval: Duration = .milliseconds(20), maxQueuedControlMessages: Int = 4096
    ) {
        self.clientBind = clientBind
        self.advertiseHost = advertiseHost
        self.appID = appID
        self.appCertificate = appCertificate
        self.settings = settings
        self.clientHighWaterMark = clientHighWaterMark
        self.clientSendBufferBytes = clientSendBufferBytes
        self.clientReceiveHighWaterMark = clientReceiveHighWaterMark
        self.unopenedConnectionTimeout = unopenedConnectionTimeout
        self.maxUnopenedConnections = maxUnopenedConnections
        self.tickInterval = tickInterval
        self.maxQueuedControlMessages = maxQueuedControlMessages
    }
}
