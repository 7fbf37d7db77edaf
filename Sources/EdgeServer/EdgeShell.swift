import Edge
import Logging
import NIOCore
import NodeRuntime
import ShowroomWire
import ZeroMQ

/// The edge's shell around ``ChannelPlane``, confined to one thread: the receive path, the
/// fan-out, the plane's timers, the links to other edges, and carrying out what the plane and the
/// books (``ForwardBook``, ``RelayBook``, ``ChannelClaims``) decide. Its clients reach it through
/// a ``ClientFace``: the client ROUTER in the edge's process, in-process clients in a harness.
final class EdgeShell<Face: ClientFace> {
    let face: Face
    var plane: ChannelPlane<Multipart>
    /// Verifies joins' tokens and mints the relay links'.
    let grants: GrantVerifier
    let logger: Logger
    /// Every time the shell reads: the injected clock.
    private(set) var time: ElapsedTime
    /// Every random number the shell draws (link names, where relay link uids start): injected,
    /// so that a simulation replays.
    let random: () -> UInt64
    private let metrics = EdgeMetrics()
    /// The drain, once begun (new joins are refused), and who waits for it to end.
    private var drain = EdgeDrain<() -> Void>()
    /// Whether the edge drains (it refuses new joins).
    var draining: Bool { drain.isDraining }
    /// Told the hosted channel and connection counts when they change.
    var reportLoad: (_ channels: Int, _ connections: Int) -> Void = { _, _ in }
    /// Where channel activities and summaries for the room-coordinators go, once the node is up.
    var coordinatorReports: CoordinatorReports? {
        didSet { reports.linked() }
    }
    /// The activities held for ``coordinatorReports``, the summary's and the load's pacing.
    var reports = EdgeReportBook()
    /// Joins waiting for their channel's owner coordinator (``ChannelClaims``).
    var claims = ChannelClaims()
    /// The forwards of broadcasters on this edge into other channels.
    var forwards = ForwardBook()
    /// The forwards' links to destination edges and what goes over them.
    var forwardLinks = ForwardLinks<ForwardLink>()
    /// Reused for every forwarded frame: the rewritten envelope and the frames sent.
    var forwardHeader = ForwardedFrameHeader()
    let forwardBuffer = Multipart(capacity: 2)
    /// The destination channels of one forwarded frame on one edge (reused).
    var forwardChannels: [String] = []
    /// A forwarded audio frame moved to another of its channels (reused).
    let alsoBuffer = Multipart(capacity: 3)
    /// The channels hosted here as relays of their origin edges.
    var relays: RelayBook
    /// Links to origin edges, by the origin's client endpoint: one session for every channel
    /// pulled from that origin.
    var relayLinks = RelayLinks<ForwardLink>()
    /// A relayed audio frame, moved into the plane's frame layout (reused).
    let relayAudioFrame = Multipart(capacity: 3)
    /// The recordings this edge writes; nil where nothing is recorded (in-process edges).
    var recorder: EdgeRecorder?

    init(configuration: EdgeServerConfiguration, face: Face, clock: WallClock, random: @escaping () -> UInt64, logger: Logger) {
        self.face = face
        self.logger = logger
        self.random = random
        time = ElapsedTime(clock)
        grants = GrantVerifier(appID: configuration.appID, appCertificate: configuration.appCertificate)
        relays = RelayBook(settings: configuration.relay, firstLinkUID: UInt32(truncatingIfNeeded: random()))
        plane = ChannelPlane(settings: configuration.settings)
        face.start(receive: { [unowned self] message in handle(message) }, tick: { [unowned self] in tick() },
                   every: configuration.tickInterval)
    }

    var now: Duration { time.now() }

    // MARK: - Receiving

    /// A WebSocket client's message (``WebSocketFraming``), laid out as the ROUTER's are (an
    /// empty frame where the routing id goes) and handled as they are.
    func receiveWebSocket(_ message: ByteBuffer, from session: SessionID) {
        let parts = message.withUnsafeReadableBytes { bytes in
            Result { () throws(ShowroomError) in try WebSocketFraming.parts(of: bytes) }
        }
        let (envelope, payload): (Range<Int>, Range<Int>)
        switch parts {
        case .success(let ranges): (envelope, payload) = ranges
        case .failure(let error): return refuse(WireEnvelope(), from: session, error)
        }
        let incoming = Multipart(capacity: 3)
        incoming.append([])
        message.withUnsafeReadableBytes { bytes in
            incoming.append(bytes: UnsafeRawBufferPointer(rebasing: bytes[envelope]))
            if !payload.isEmpty { incoming.append(bytes: UnsafeRawBufferPointer(rebasing: bytes[payload])) }
        }
        _ = handle(incoming, from: session)
    }

    /// A WebSocket client's connection closed: its session is over.
    func webSocketClosed(_ session: SessionID) {
        perform(plane.sessionUnreachable(session, now: now))
    }

    /// Handles one client message: from the ROUTER (the session is its routing id, frame 0), or
    /// from a WebSocket (`knownSession`). ``ClientIntake`` decides what becomes of it.
    ///
    /// - Returns: Whether the message's buffer is kept (a video frame in a GOP cache).
    private func handle(_ incoming: Multipart, from knownSession: SessionID? = nil) -> Bool {
        guard incoming.count >= 2 else { return false }  // a bare routing id: nothing to answer
        guard let session = knownSession ?? incoming.withBytes(of: 0, { SessionID(routingID: $0) }) else {
            let refusal = try? ClientIntake.longRoutingIDRefusal.serializedBytes() as [UInt8]
            if let refusal { face.sendRaw(refusal, to: incoming.bytes(of: 0)) }
            return false
        }
        let size = Self.messageBytes(incoming)
        let limit = plane.settings.limits.maxMessageBytes
        let verdict: ClientMessageVerdict
        if ClientIntake.isOversize(size, maxMessageBytes: limit) {
            verdict = ClientIntake.oversize(size, maxMessageBytes: limit, head: incoming.withBytes(of: 1) { EdgeCodec.peekEnvelope($0) })
        } else {
            let envelope = incoming.withBytes(of: 1) { bytes in Result { () throws(ShowroomError) in try WireEnvelope.decode(frame: bytes) } }
            verdict = ClientIntake.message(envelope, attachments: incoming.count - 2)
        }
        switch verdict {
        case .drop: return false
        case .refuse(let envelope, let error): refuse(envelope, from: session, error)
        case .refuseFrame(let error, let channel, let track): refuseFrame(error, channel: channel, track: track, from: session)
        case .frame(let envelope): return handleFrame(envelope, incoming, from: session)
        case .request(let envelope): handleRequest(envelope, incoming, from: session)
        }
        return false
    }

    private func handleRequest(_ envelope: WireEnvelope, _ incoming: Multipart, from session: SessionID) {
        let request: EdgeRequest
        switch ClientIntake.route(envelope) {
        case .forward: return handleForwardRequest(envelope, from: session)
        case .relayKeyframeRequest: return handleRelayKeyframeRequest(envelope, from: session)
        case .movedOut: return plane.movedOut(session)
        case .refuse(let error): return refuse(envelope, from: session, error)
        case .plane(let arrived): request = arrived
        }
        let now = self.now
        let linked = coordinatorReports != nil
        let admission = claims.arrive(request, from: session, requestID: envelope.requestID, linked: linked, plane: plane, relays: relays,
                                      drain: drain, now: now) { token, channel, uid in
            (try? verify(token, channel: channel, uid: uid, now: now).get()) != nil
        }
        switch admission {
        case .refuse(let error): refuse(envelope, from: session, error)
        case .held(let directives): performClaims(directives)
        case .handOver:
            let address = if case .openSession = request { face.sessionOpened(session, by: incoming) } else { String?.none }
            handOver(request, from: session, requestID: envelope.requestID)
            if let address { plane.setAddress(address, of: session) }
        }
    }

    /// Hands a request to the plane (tokens verified on the way) and carries out what it says.
    func handOver(_ request: EdgeRequest, from session: SessionID, requestID: UInt64) {
        let now = self.now
        perform(plane.handle(request, from: session, requestID: requestID, now: now) { token, channel, uid in
            verify(token, channel: channel, uid: uid, now: now)
        })
    }

    /// The media path: the header checked (``ClientIntake/frame(_:payloadSize:fromForwardLink:)``),
    /// the frame handed to the plane, what it says sent.
    ///
    /// - Returns: Whether the frame's buffer is kept (video, in the GOP cache).
    private func handleFrame(_ envelope: WireEnvelope, _ frame: Multipart, from session: SessionID) -> Bool {
        let (header, info): (WireMediaHeader, MediaFrameInfo)
        switch ClientIntake.frame(envelope, payloadSize: frame.size(of: 2), fromForwardLink: plane.isForwardLink(session)) {
        case .forward(let checkedHeader, let checkedInfo): (header, info) = (checkedHeader, checkedInfo)
        case .refuse(let error, let channel, let track):
            refuseFrame(error, channel: channel, track: track, from: session)
            return false
        }
        let refusedBefore = plane.statistics.framesRefused
        let directives = forwardInPlane(frame, info: info, from: session)
        // Only a frame the plane took (its refusal count unchanged) is recorded.
        if let recorder, !recorder.desk.isIdle, plane.statistics.framesRefused == refusedBefore {
            record(frame, header: header, info: info, from: session, recorder)
        }
        if !forwards.isEmpty { forwardFrame(frame, header: header, info: info, from: session) }
        perform(directives)
        if !header.alsoChannels.isEmpty { forwardAlso(frame, header: header, info: info, from: session) }
        return info.kind == .video
    }

    /// Forwards a frame to the channel's subscribers (the plane decides who gets it).
    func forwardInPlane(_ frame: Multipart, info: MediaFrameInfo, from session: SessionID) -> [EdgeDirective] {
        let face = self.face
        return plane.forward(frame, info: info, from: session, now: now) { subscriber, frame in
            face.sendFrame(frame, to: subscriber)
        }
    }

    /// Refuses a media frame that never reached the plane, reported as the plane reports its own
    /// refusals (at most once a second per code and channel).
    private func refuseFrame(_ error: ShowroomError, channel: String, track: TrackKind?, from session: SessionID) {
        perform(plane.refuseFrame(error, channel: channel, track: track, from: session, now: now))
    }

    /// The size of a received message without its routing id.
    private static func messageBytes(_ message: Multipart) -> Int {
        var total = 0
        for index in 1..<message.count { total += message.size(of: index) }
        return total
    }

    /// Answers a request that never reached the plane (``ClientIntake/refusal(of:_:to:)``).
    func refuse(_ envelope: WireEnvelope, from session: SessionID, _ error: ShowroomError) {
        switch ClientIntake.refusal(of: envelope, error, to: session) {
        case .directive(let directive): perform([directive])
        case .response(let response): sendControl(response, to: session)
        }
    }

    // MARK: - Tokens

    /// Verifies a join's token against the app (see ``GrantVerifier``).
    func verify(_ token: String, channel: String, uid: UInt32, now: Duration) -> Result<ChannelGrant, ShowroomError> {
        grants.grant(token, channel: channel, uid: uid, unixNow: UInt32(clamping: time.unixNowMs / 1000), now: now)
    }

    // MARK: - Carrying out directives

    /// Carries out the plane's directives in order; what they lead to (cache flushes, unreachable
    /// clients) is carried out after them.
    func perform(_ directives: [EdgeDirective]) {
        guard !directives.isEmpty else { return }
        var work = directives
        var index = 0
        while index < work.count {
            let directive = work[index]
            index += 1
            switch directive {
            case .reply(let reply, let session):
                work += control(to: session) { () throws(ShowroomError) in try EdgeCodec.envelope(reply: reply) }
            case .send(let event, let session):
                work += control(to: session) { () throws(ShowroomError) in try EdgeCodec.envelope(event: event) }
            case .sendCachedFrames(let track, let session):
                let face = self.face
                work += plane.sendCachedFrames(track, to: session, now: now) { subscriber, frame in
                    face.sendFrame(frame, to: subscriber)
                }
            case .requestKeyframe(let track, let publisher) where relays.isStandIn(publisher):
                performRelay(relays.keyframeWanted(track, now: now))
            case .requestKeyframe(let track, let publisher):
                work += control(to: publisher) { () throws(ShowroomError) in try EdgeCodec.keyframeRequest(for: track) }
            case .closeSession(let session):
                face.sessionClosed(session)
            case .log(let entry):
                log(entry)
            case .report(let activity):
                if let recorder, !recorder.desk.isIdle { carryOut(recorder.desk.see(activity), recorder) }
                if !relays.isIdle, !relayReports(activity) { continue }
                hold(activity)
                if !forwards.isEmpty { work += forwardDirectives(forwards.activity(activity, now: now)) }
            }
        }
    }

    /// Encodes and sends one control message; a client found gone is dropped from the plane.
    ///
    /// - Returns: What dropping it leads to (nothing if it was sent or queued).
    private func control(to session: SessionID, _ encode: () throws(ShowroomError) -> WireEnvelope) -> [EdgeDirective] {
        // A stand-in has no client: what the plane tells it is known to the relay already.
        if relays.isStandIn(session) { return [] }
        do {
            if sendControl(try encode(), to: session) { return [] }
            return plane.sessionUnreachable(session, now: now)
        } catch {
            logger.error("cannot encode a message for session \(session)", metadata: ["error": "\(error)"])
            return []
        }
    }

    /// Sends a reply or event to a client, behind those already waiting for it.
    ///
    /// - Returns: false if the client is gone (unknown to the socket, or too far behind).
    @discardableResult
    func sendControl(_ envelope: WireEnvelope, to session: SessionID) -> Bool {
        let bytes: [UInt8]
        do {
            bytes = try envelope.serializedBytes()
        } catch {
            logger.error("cannot serialize \(envelope.kind)", metadata: ["error": "\(error)"])
            return true
        }
        return face.sendControl(bytes, to: session)
    }

    /// Sends what waits for clients that were at their high-water mark; those found gone are
    /// dropped from the plane.
    private func flushPendingControl() {
        for session in face.flush() {
            perform(plane.sessionUnreachable(session, now: now))
        }
    }

    /// Carries out directives that come from outside a client's message (a coordinator's word,
    /// the drain) and sends what they queued at once, then hands the activities they led to
    /// over to the coordinators unless `handingOverReports` is false (the next tick does).
    private func settle(_ directives: [EdgeDirective], handingOverReports: Bool = true) {
        perform(directives)
        flushPendingControl()
        if handingOverReports { handOverReports() }
    }

    // MARK: - Timers and lifecycle

    private func tick() {
        perform(plane.tick(now: now))
        tickForwards()
        tickRelays()
        performClaims(claims.expire(now: now))
        if let recorder, !recorder.desk.isIdle { carryOut(recorder.desk.tick(now: now), recorder) }
        face.closeUnopened()
        flushPendingControl()
        handOverReports()
        if let waiters = drain.finishes(now: now, awaitsMovingClients: plane.awaitsMovingClients) { finishDraining(waiters) }
        let (channels, connections) = (plane.channelCount, plane.connectionCount)
        metrics.update(plane.statistics, sessions: plane.sessionCount, channels: channels, connections: connections,
                       bans: plane.banCount, stages: plane.stageCount)
        if reports.shouldReportLoad(channels: channels, connections: connections, now: now) { reportLoad(channels, connections) }
    }

    /// Drains the edge (make before break): refuses new joins, tells the room-coordinators (who
    /// place nothing here any more and move the channels it is the origin of) and every client
    /// (who joins elsewhere, then leaves here), keeps serving meanwhile, and closes every session
    /// once every client has left or moved out (a broadcaster stays joined until the end, so the
    /// viewers still here never see it go offline) or `within` has passed. `done` runs then.
    func beginDraining(nodeID: String, within: Duration, _ done: @escaping () -> Void) {
        guard drain.begin(nodeID: nodeID, waiter: done) else { return }
        // The clients are told once the coordinators know, so that none is placed here again.
        guard let link = coordinatorReports else { return notifyDraining(within: within) }
        link.draining { self.notifyDraining(within: within) }
    }

    private func notifyDraining(within: Duration) {
        guard drain.clientsTold(now: now, within: within) else { return }
        settle(plane.drainingNotices(within: within), handingOverReports: false)
    }

    private func finishDraining(_ waiters: [() -> Void]) {
        settle(plane.closeAllSessions(reason: drain.closing, now: now))
        for done in waiters { done() }
    }

    // MARK: - Channel claims

    /// The owner coordinator answered the claim for `channel`: the relays hear it first (an answer
    /// with `relay_of_*` makes this edge a relay of the channel), then the joins held for it.
    func claimAnswered(_ channel: String, _ outcome: ClaimOutcome) {
        performRelay(relays.claimAnswered(channel, outcome, hostedHere: plane.hosts(channel: channel), now: now))
        performClaims(claims.answered(channel, outcome, drain: drain, relays: relays))
    }

    private func performClaims(_ directives: [ClaimDirective]) {
        for directive in directives {
            switch directive {
            case .claim(let channel): coordinatorReports?.claim(channel)
            case .admit(let join): handOver(join.request, from: join.session, requestID: join.requestID)
            case .refuse(let join, let error): perform([join.refusal(error)])
            }
        }
    }

    // MARK: - Room-coordinators

    /// Keeps an activity for the coordinators, its time moved to the wall clock.
    private func hold(_ activity: ChannelActivity) {
        let age = now - activity.at
        hold(wire: EdgeCodec.wire(activity, atMs: time.unixNowMs - Int64(age.milliseconds)))
    }

    /// Keeps an activity for the coordinators, as they receive it.
    func hold(wire activity: RoomChannelActivity) {
        let (dropped, overflowBegan) = reports.hold(activity)
        guard dropped > 0 else { return }
        metrics.activitiesDropped.increment(by: Int64(dropped))
        if overflowBegan {
            logger.warning("no link to the room-coordinators; dropping the oldest channel activities beyond \(reports.maxHeldActivities)")
        }
    }

    /// Hands the activities to the node side, and the channel summary when it is due.
    private func handOverReports() {
        guard let link = coordinatorReports else { return }
        let (activities, summaryDue) = reports.handOver(now: now)
        if !activities.isEmpty { link.activities(activities) }
        if summaryDue { link.summary(reportedSummaries()) }
    }

    /// The channel summaries as reported (see ``EdgeReportBook/summaries(_:forwards:relays:recordings:)``).
    func reportedSummaries() -> [ChannelSummary] {
        EdgeReportBook.summaries(plane.channelSummaries, forwards: forwards, relays: relays, recordings: recorder?.desk)
    }

    /// The forwards as the status view lists them.
    var forwardedPublishers: [EdgeForwardedPublisher] { forwards.publishers }

    /// Enforces bans from a room-coordinator.
    ///
    /// - Returns: How many connections were closed.
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT` for a malformed ban (nothing is applied).
    func applyBans(_ bans: [RoomBan]) throws(ShowroomError) -> Int {
        let now = self.now
        let checked = try EdgeCodec.bans(bans, now: now, unixNowMs: time.unixNowMs)
        let (closed, directives) = plane.applyBans(checked, now: now)
        settle(directives)
        return closed
    }

    /// `CHANNEL_DATA`: a message from the business server to the channel's users on this edge.
    func channelData(_ request: RoomChannelDataRequest) throws(ShowroomError) -> RoomChannelDataResponse {
        let (channel, uids, data) = try EdgeCodec.channelData(request)
        let (delivered, directives) = try plane.sendServerMessage(channel: channel, to: uids, data: data)
        settle(directives, handingOverReports: false)
        return RoomChannelDataResponse.with { $0.delivered = UInt32(clamping: delivered) }
    }

    /// `CHANNEL_USERS`: who is in a channel on this edge, joins on the wall clock (the link names
    /// the edge).
    func channelUsers(_ request: RoomChannelUsersRequest) throws(ShowroomError) -> RoomChannelUsersResponse {
        try EdgeCodec.channelUsers(request, in: plane, now: now, unixNowMs: time.unixNowMs)
    }

    /// Sends the connections of channels their owner coordinator placed on another edge there
    /// (``ChannelPlane/sendElsewhere(_:now:)``); what does not check out is logged and left.
    func channelsElsewhere(_ channels: [RoomChannelElsewhere]) {
        let moves: [ChannelPlacedElsewhere]
        do throws(ShowroomError) {
            moves = try EdgeCodec.elsewhere(channels)
        } catch {
            logger.warning("channels placed elsewhere not taken: \(error)")
            return
        }
        settle(plane.sendElsewhere(moves, now: now))
    }

    /// Applies the stages of rooms' channels; returns how many broadcasters became audience.
    func applyStages(_ stages: [RoomStage]) throws(ShowroomError) -> Int {
        let (demoted, directives) = plane.applyStages(try EdgeCodec.stages(stages), now: now)
        settle(directives)
        return demoted
    }

    /// Writes a machine's log line (``EdgeLogEntry``) at its level.
    func log(_ entry: EdgeLogEntry) {
        let level: Logger.Level = switch entry.level {
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        }
        logger.log(level: level, "\(entry.message)")
    }
}
