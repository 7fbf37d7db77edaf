import Edge

/// The engine's state of one channel connection; confined to the engine's loop.
final class ConnectionRecord {
    var connection: ChannelConnection
    /// The client endpoint of the edge session the connection lives in.
    let edgeEndpoint: String
    var role: ClientRole
    /// The options as the app asked for them (publish flags before local mutes).
    var options: MediaOptions
    /// The app asked an audience connection to publish: send anyway, and let the edge refuse it
    /// (ROLE_FORBIDS_PUBLISH comes back as an error event), rather than hide the mistake.
    var publishesAsAudience: Bool
    var audioMuted = false
    var videoMuted = false
    let joinStarted: ContinuousClock.Instant
    var isJoined = false
    var state = ConnectionState.connecting
    var audioSequence: UInt32 = 0
    var videoSequence: UInt32 = 0
    /// Remote users whose first decoded frame has been reported (until they go offline or
    /// unpublish video).
    var firstFrameReported: Set<UInt32> = []

    init(connection: ChannelConnection, edgeEndpoint: String, role: ClientRole, options: MediaOptions,
         publishesAsAudience: Bool, joinStarted: ContinuousClock.Instant) {
        self.connection = connection
        self.edgeEndpoint = edgeEndpoint
        self.role = role
        self.options = options
        self.publishesAsAudience = publishesAsAudience
        self.joinStarted = joinStarted
    }

    /// Frames of `kind` go out: joined, the option set, not muted locally, and a broadcaster
    /// (or an audience member that explicitly asked to publish).
    func sends(_ kind: TrackKind) -> Bool {
        guard isJoined, role == .broadcaster || publishesAsAudience else { return false }
        return kind == .audio ? options.publishAudio && !audioMuted : options.publishVideo && !videoMuted
    }

    /// The publish flag the edge should hold for `kind`: the option, unless muted locally.
    func wirePublishes(_ kind: TrackKind) -> Bool {
        kind == .audio ? options.publishAudio && !audioMuted : options.publishVideo && !videoMuted
    }

    /// True if `options` ask an audience connection to publish something.
    static func asksAudienceToPublish(_ options: ChannelMediaOptions, role: ClientRole) -> Bool {
        role == .audience && (options.publishAudio == true || options.publishVideo == true)
    }
}
