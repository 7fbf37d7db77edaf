internal import EdgeProtocol

/// The engine's connection and session state as a value: app calls, edge answers and events,
/// timers and lost links go in; directives (open a session, send a request, emit an event, place a
/// rejoin, schedule a timer …) come out. ``EngineShell`` owns the sockets, the clock and the media
/// and does what the directives say; this type decides everything else, and tests drive it with
/// plain values and a fake clock.
struct EngineState {
    /// The timings and identity the state works with.
    struct Settings {
        var clientID: String
        var sdkVersion: String
        var requestTimeout: Duration
        var heartbeatInterval: Duration
        var heartbeatTimeout: Duration
        var interruptedAfterIntervals: Int
        var sessionIdleTime: Duration
        var rejoinWindow: Duration
        /// The longest a viewer's move waits for the new edge's first keyframe before it switches.
        var moveSwitchTimeout: Duration = .seconds(2)
    }

    /// One edge session as the state sees it.
    struct Session {
        /// A closed session is gone from ``EngineState/sessions``.
        enum Phase { case opening, open, closing }

        /// Something to do once the session is open (or to fail if it does not open).
        enum Waiter {
            case join(channel: String, JoinAttempt)
            case preload(ticket: EngineTicket, channel: String, uid: UInt32, token: String)
        }

        let serial: SessionSerial
        let edge: EdgeAddress
        var phase = Phase.opening
        var heartbeatInterval: Duration
        var heartbeatTimeout: Duration
        var lastHeard: ContinuousClock.Instant
        var isInterrupted = false
        /// Counts the times the session was left without channels: a warm-session timer closes it
        /// only if no channel came and went since it was set.
        var idleGeneration: UInt64 = 0
        var limits: EdgeLimits?
        /// Channels whose connections live (or are being joined) in this session.
        var channels: Set<String> = []
        var waiting: [Waiter] = []
        /// The edge drains: no join uses this session any more, and it closes once the
        /// connections in it have moved.
        var isDraining = false
        /// `EDGE_MOVED_OUT` was sent: every connection that moves has moved.
        var movedOut = false
    }

    let settings: Settings
    /// Sessions not yet closed, by serial.
    var sessions: [SessionSerial: Session] = [:]
    /// The session a new join to an edge uses (opening or open), by the edge's client endpoint.
    var active: [String: SessionSerial] = [:]
    /// Channel connections by channel.
    var connections: [String: ConnectionRecord] = [:]
    /// The channel of ``ShowroomEngine/joinChannel(token:channel:uid:options:)``, used when a call
    /// names no connection.
    var primaryChannel: String?
    var isShutDown = false
    var volumeIndication: VolumeIndicationConfig?
    /// The uids with a video sink, by channel: a viewer watching video moves with its first
    /// keyframe from the new edge.
    var videoSinks: [String: Set<UInt32>] = [:]
    var rejoins = 0
    var moves = 0
    var sessionsOpened = 0
    var nextSerial: UInt64 = 1
    var shutdownTicket: EngineTicket?
    var shutdownWaits: Set<SessionSerial> = []
    /// When a session to an edge last failed (broke, went silent, or was closed by the edge
    /// draining), by the edge's client endpoint: a channel preloaded there is not joined there
    /// (the edge is gone or going), the cluster is asked instead.
    var failedEdges: [String: ContinuousClock.Instant] = [:]
    /// How long a failed edge is remembered: as long as a preloaded edge is (30 s).
    static let failedEdgeMemory = Duration.seconds(30)

    init(settings: Settings) {
        self.settings = settings
    }

    /// A fresh number for records, sessions and attempts.
    mutating func nextNumber() -> UInt64 {
        defer { nextSerial += 1 }
        return nextSerial
    }

    // MARK: - Lookups

    /// The connection a call names, or the primary one for `nil`.
    func record(for connection: ChannelConnection?) throws(ShowroomError) -> ConnectionRecord {
        guard let channel = connection?.channel ?? primaryChannel else {
            throw .notJoined("no channel joined: call joinChannel first or name a connection")
        }
        guard let record = connections[channel], record.isJoined else {
            throw .notJoined("not joined to channel '\(channel)'")
        }
        if let uid = connection?.uid, uid != 0, uid != record.connection.uid {
            throw .notJoined("joined to '\(channel)' as uid \(record.connection.uid), not \(uid)")
        }
        return record
    }

    /// The open session of a joined connection.
    func session(of record: ConnectionRecord) throws(ShowroomError) -> SessionSerial {
        if let rejoin = record.rejoin {
            let why = rejoin.failedEdge.map { "after edge \($0) failed" } ?? "after edge \(record.edgeEndpoint) forgot the connection"
            throw .unavailable("rejoining '\(record.connection.channel)' \(why); try again once the connection state is connected")
        }
        guard let serial = active[record.edgeEndpoint], sessions[serial]?.phase == .open else {
            throw .unavailable("the session with \(record.edgeEndpoint) is not open")
        }
        return serial
    }

    /// The connection a request names and the session to send it on.
    func target(for connection: ChannelConnection?) throws(ShowroomError) -> (record: ConnectionRecord, session: SessionSerial) {
        let record = try record(for: connection)
        return (record, try session(of: record))
    }

    /// The open session with an edge, if there is one.
    func openSession(to endpoint: String) -> SessionSerial? {
        // Runs for every frame sent: the session is read in place, not copied.
        guard let serial = active[endpoint], let index = sessions.index(forKey: serial), sessions.values[index].phase == .open else { return nil }
        return serial
    }

    /// The sessions open now, by serial.
    var openSessions: [SessionSerial] {
        sessions.values.filter { $0.phase == .open }.map(\.serial).sorted()
    }

    /// The edges of the open sessions that take new joins (not draining), those holding the most
    /// channels first: where a channel new to the cluster is best placed for this engine.
    var warmEdges: [String] {
        sessions.values.filter { $0.phase == .open && !$0.isDraining && active[$0.edge.endpoint] == $0.serial }
            .sorted { ($0.channels.count, $1.serial) > ($1.channels.count, $0.serial) }
            .map(\.edge.id)
    }

    /// The channels the app holds a video sink in, for `uid`s; the shell keeps the sinks.
    mutating func setVideoSink(channel: String, uid: UInt32, present: Bool) {
        if present { videoSinks[channel, default: []].insert(uid) } else { videoSinks[channel]?.remove(uid) }
        connections[channel]?.firstFrameReported.remove(uid)
    }

    // MARK: - States

    mutating func setState(_ state: ConnectionState, _ reason: ConnectionStateReason, of channel: String, _ out: inout [EngineDirective]) {
        guard let connection = connections[channel]?.connection else { return }
        connections[channel]?.state = state
        out.append(.emit(.connectionStateChanged(connection, state: state, reason: reason)))
    }

    /// The state of a record no longer held (it failed or was left).
    func report(_ state: ConnectionState, _ reason: ConnectionStateReason, of record: ConnectionRecord, _ out: inout [EngineDirective]) {
        out.append(.emit(.connectionStateChanged(record.connection, state: state, reason: reason)))
    }

    mutating func setState(_ state: ConnectionState, _ reason: ConnectionStateReason, channelsOf serial: SessionSerial, _ out: inout [EngineDirective]) {
        for channel in (sessions[serial]?.channels ?? []).sorted() where connections[channel]?.isJoined == true {
            setState(state, reason, of: channel, &out)
        }
    }

    /// Drops what the engine kept for a channel it no longer holds.
    mutating func forget(_ channel: String, _ out: inout [EngineDirective]) {
        if primaryChannel == channel { primaryChannel = nil }
        videoSinks[channel] = nil
        out.append(.forgetMedia(channel: channel))
    }

    func watchesVideo(_ channel: String) -> Bool {
        !(videoSinks[channel]?.isEmpty ?? true)
    }
}
