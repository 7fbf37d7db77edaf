internal import EdgeProtocol
internal import ShowroomWire

/// The engine's state of one channel connection: a value in ``EngineState``.
struct ConnectionRecord {
    /// A rejoin under way: the connection's edge failed and the engine is placing it again.
    struct Rejoin {
        /// When the edge was found lost.
        let started: ContinuousClock.Instant
        /// The edge to avoid in the next placement: the lost one, then any that failed a retry;
        /// nil when the edge itself is fine (it forgot the connection: rejoin there or anywhere).
        var failedEdge: EdgeAddress?
        var backoff = RejoinBackoff()
        /// Identifies the attempt in flight, so a late answer to an earlier one is ignored.
        var attempt: UInt64 = 0
    }

    /// A move off a draining edge (make before break): joined on `to` while the old edge still
    /// serves the connection, until the switch.
    struct Move {
        let from: EdgeAddress
        let attempt: UInt64
        /// The new edge, once joined there; frames and events come from the old one until the switch.
        var to: EdgeAddress?
    }

    /// Tells this record from an earlier or later one of the same channel (left and joined again).
    let serial: UInt64
    var connection: ChannelConnection
    /// The edge the connection lives on (its session is keyed by the client endpoint).
    var edge: EdgeAddress
    var edgeEndpoint: String { edge.endpoint }
    /// The token of the join, or of the last renewal: a rejoin presents it.
    var token: String
    var role: ClientRole
    /// The options as the app asked for them (publish flags before local mutes).
    var options: MediaOptions
    /// The app asked an audience connection to publish: send anyway, and let the edge refuse it
    /// (ROLE_FORBIDS_PUBLISH comes back as an error event), rather than hide the mistake.
    var publishesAsAudience: Bool
    var audioMuted = false
    var videoMuted = false
    /// When the join (or the rejoin under way or last done) started: first-frame times count
    /// from here.
    var joinStarted: ContinuousClock.Instant
    var isJoined = false
    /// The first join is the primary connection (``ShowroomEngine/joinChannel(token:channel:uid:options:)``).
    var isPrimary = false
    var state = ConnectionState.connecting
    var rejoin: Rejoin?
    var move: Move?
    /// Its move off a draining edge could not happen: it stays until that edge closes.
    var staysUntilClose = false
    /// A broadcaster that moved stays joined on its draining old edge (so viewers not yet moved
    /// never see it go offline) and publishes there too, until that edge closes.
    var lingeringOn: EdgeAddress?
    var audioSequence: UInt32 = 0
    var videoSequence: UInt32 = 0
    /// Whether a video (an audio) frame went out on this join: the first is reported.
    private var sentVideo = false, sentAudio = false
    /// Remote users whose first decoded frame has been reported (until they go offline or
    /// unpublish video, or the connection rejoins).
    var firstFrameReported: Set<UInt32> = []
    /// Explicit subscriptions (true) and unsubscriptions (false) that override auto-subscribe,
    /// replayed on a rejoin.
    var subscriptions: [TrackID: Bool] = [:]
    /// Remote tracks muted with `muteRemote…Stream`, replayed on a rejoin.
    var remoteMutes: Set<TrackID> = []

    init(serial: UInt64, connection: ChannelConnection, edge: EdgeAddress, token: String, role: ClientRole, options: MediaOptions,
         publishesAsAudience: Bool, joinStarted: ContinuousClock.Instant) {
        self.serial = serial
        self.connection = connection
        self.edge = edge
        self.token = token
        self.role = role
        self.options = options
        self.publishesAsAudience = publishesAsAudience
        self.joinStarted = joinStarted
    }

    /// Frames of `kind` go out: joined (not rejoining), the option set, not muted locally, and a
    /// broadcaster (or an audience member that explicitly asked to publish).
    func sends(_ kind: TrackKind) -> Bool {
        guard isJoined, rejoin == nil, role == .broadcaster || publishesAsAudience else { return false }
        return kind == .audio ? options.publishAudio && !audioMuted : options.publishVideo && !videoMuted
    }

    /// Notes a frame of `kind` sent; true for the join's first of that kind. Per frame: two
    /// flags, no hashing.
    mutating func markSent(_ kind: TrackKind) -> Bool {
        switch kind {
        case .video:
            defer { sentVideo = true }
            return !sentVideo
        case .audio:
            defer { sentAudio = true }
            return !sentAudio
        }
    }

    /// The header of this connection's next frame of `kind`: its sequence bumped, the fields every
    /// frame of the track carries set.
    mutating func nextMediaHeader(_ kind: TrackKind, captured: UInt64) -> WireMediaHeader {
        var header = WireMediaHeader()
        header.channel = connection.channel
        header.publisherUid = connection.uid
        if kind == .audio {
            audioSequence &+= 1
            header.track = .audio
            header.codec = .opus
            header.sequence = audioSequence
        } else {
            videoSequence &+= 1
            header.track = .video
            header.codec = .vp8
            header.sequence = videoSequence
        }
        header.captureTimeUs = captured
        return header
    }

    /// The publish flag the edge should hold for `kind`: the option, unless muted locally.
    func wirePublishes(_ kind: TrackKind) -> Bool {
        kind == .audio ? options.publishAudio && !audioMuted : options.publishVideo && !videoMuted
    }

    /// The options a join (or rejoin) sends: the publish flags with local mutes applied.
    var wireOptions: MediaOptions {
        var options = self.options
        options.publishAudio = wirePublishes(.audio)
        options.publishVideo = wirePublishes(.video)
        return options
    }

    /// True if `options` ask an audience connection to publish something.
    static func asksAudienceToPublish(_ options: ChannelMediaOptions, role: ClientRole) -> Bool {
        role == .audience && (options.publishAudio == true || options.publishVideo == true)
    }
}
