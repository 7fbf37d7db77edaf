import ShowroomWire

/// One open client session, as ``ChannelPlane`` keeps it.
struct ClientSession: Sendable {
    let id: SessionID
    let clientID: String
    let sdkVersion: String
    let openedAt: Duration
    /// The IP address the client connects from (``IPAddress/canonical(_:)``), if known: what an
    /// address ban matches. Never set for another edge's link or a stand-in.
    var address: String?
    /// Any message counts as a heartbeat.
    var lastHeard: Duration
    /// The channels it is connected to, in join order.
    var channels: [String] = []
    /// Volume indication for all its channels, if enabled.
    var volume: VolumeIndicationConfig?
    var nextVolumeReport: Duration = .zero
    /// The last refusal reported by an error event, to report repeats at most once per
    /// `refusalReportInterval`.
    var lastRefusal: Refusal?
    /// Grants checked ahead by `PRELOAD_CHANNEL`, oldest first, each until its expiry: a join
    /// with the same channel, uid and token takes it instead of checking the token again.
    var preloads: [Preload] = []
    /// A relay's stand-in for a publisher of its origin edge (``ChannelPlane/openStandIn(_:clientID:now:)``):
    /// never timed out (the relay link's liveness is the relay's business), its activities unreported.
    var isStandIn = false
    /// While the edge drains: the client said everything of this session that moves has moved
    /// (``ChannelPlane/movedOut(_:)``).
    var hasMovedOut = false

    struct Preload: Sendable {
        var channel: String
        var uid: UInt32
        var token: String
        var grant: ChannelGrant
        var until: Duration
    }
    /// Another edge's link forwarding a broadcaster here: its users going away is "forward
    /// stopped" to the others.
    var isForwardLink: Bool { ForwardLinkIdentity.isLink(clientID: clientID) }
    /// A relay edge's link pulling a channel from this edge (see ``RelayLinkIdentity``).
    var isRelayLink: Bool { RelayLinkIdentity.isLink(clientID: clientID) }

    struct Refusal: Sendable {
        var code: ShowroomError.Code
        var channel: String
        var at: Duration
    }
}
