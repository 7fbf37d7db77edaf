/// What every member publishes about itself and every other member sees: its role, where to reach
/// it, its version and its load. Changing it (``Membership/updateMetadata(_:now:)``) raises the
/// member's incarnation so the new value wins everywhere.
public struct MemberMetadata: Sendable, Equatable {
    /// `edge`, `coordinator` or `callsignal`.
    public var role: String
    /// Where gossip for this member is sent: `tcp://host:port`.
    public var clusterEndpoint: String
    /// Where clients connect; empty if none.
    public var clientEndpoint: String
    /// The admin HTTP endpoint (`http://host:port`); empty if none.
    public var adminEndpoint: String
    /// Software version of the member's process.
    public var version: String
    /// The member's latest load report.
    public var load: MemberLoad
    /// Where the member publishes notices (coordinators); empty if none.
    public var eventsEndpoint: String
    /// The client endpoint's CURVE public key (Z85) when the member encrypts client links; empty
    /// if not.
    public var clientCurvePublicKey: String = ""
    /// Where browsers reach the member over WebSocket (`ws://` or `wss://`); empty if nowhere.
    public var webSocketEndpoint: String = ""

    /// Creates metadata; everything but the role and the cluster endpoint is optional.
    ///
    /// - Parameters:
    ///   - role: `edge`, `coordinator` or `callsignal`.
    ///   - clusterEndpoint: Where gossip for this member is sent (`tcp://host:port`).
    ///   - clientEndpoint: Where clients connect; empty if none.
    ///   - adminEndpoint: The admin HTTP endpoint; empty if none.
    ///   - version: Software version.
    ///   - load: The current load.
    ///   - eventsEndpoint: Where the member publishes notices; empty if none.
    public init(
        role: String,
        clusterEndpoint: String,
        clientEndpoint: String = "",
        adminEndpoint: String = "",
        version: String = "",
        load: MemberLoad = MemberLoad(),
        eventsEndpoint: String = ""
    ) {
        self.eventsEndpoint = eventsEndpoint
        self.role = role
        self.clusterEndpoint = clusterEndpoint
        self.clientEndpoint = clientEndpoint
        self.adminEndpoint = adminEndpoint
        self.version = version
        self.load = load
    }
}
