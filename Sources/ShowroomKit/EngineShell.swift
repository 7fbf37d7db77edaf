#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import EdgeProtocol
internal import MediaCodecs
internal import ShowroomWire
internal import ZeroMQ

/// Everything an engine holds, confined to its loop thread: edge sessions, channel
/// connections, requests in flight, local media and remote sinks. The public
/// ``ShowroomEngine`` posts work here and awaits the completions.
final class EngineShell {
    typealias Completion<T> = (Result<T, ShowroomError>) -> Void

    let loop: EventLoop
    let context: Context
    let configuration: EngineConfiguration
    /// Where rejoins are placed (the engine's placement).
    let placement: any ChannelPlacement
    let emit: (EngineEvent) -> Void

    /// Edge sessions by client endpoint.
    var sessions: [String: EdgeSession] = [:]
    /// Sessions waiting for the edge to confirm their close; held here because nothing else
    /// does (socket handlers and timers hold sessions weakly).
    var closingSessions: [ObjectIdentifier: EdgeSession] = [:]
    /// Channel connections by channel.
    var connections: [String: ConnectionRecord] = [:]
    /// The channel of ``ShowroomEngine/joinChannel(token:channel:uid:options:)``, used when a call
    /// names no connection.
    var primaryChannel: String?
    var nextRequestID: UInt64 = 1
    var volumeIndication: VolumeIndicationConfig?
    /// Remote video sinks by channel and uid; set before or after joining, dropped on leaving.
    var videoSinks: [String: [UInt32: (sink: any RemoteVideoSink, since: ContinuousClock.Instant)]] = [:]
    /// Remote video frames since the last keyframe of tracks without a sink yet, by channel.
    var pendingVideo: [String: PendingVideo] = [:]
    /// Remote audio sinks by channel and uid.
    var audioSinks: [String: [UInt32: any RemoteAudioSink]] = [:]
    var statistics = EngineStatistics()
    var isShutDown = false
    var nextRejoinAttempt: UInt64 = 1

    // Local media.
    var videoSource: (any VideoSource)?
    var audioSource: (any AudioSource)?
    var videoEncoder: VideoEncoder?
    var audioEncoder: OpusEncoder?
    var videoTimer: TimerID?
    var audioTimer: TimerID?
    var keyframeWanted = false
    /// The channels whose connections send video: one that starts sending starts on a keyframe.
    var videoChannels: Set<String> = []
    /// Video comes encoded from the app (``ShowroomEngine/pushExternalEncodedVideoFrame(_:)``), not from
    /// the camera.
    var externalEncodedVideo = false

    init(loop: EventLoop, context: Context, configuration: EngineConfiguration, placement: any ChannelPlacement,
         emit: @escaping (EngineEvent) -> Void) {
        self.loop = loop
        self.context = context
        self.configuration = configuration
        self.placement = placement
        self.emit = emit
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
    func session(of record: ConnectionRecord) throws(ShowroomError) -> EdgeSession {
        if let rejoin = record.rejoin {
            throw .unavailable(
                "rejoining '\(record.connection.channel)' after edge \(rejoin.failedEdge) failed; try again once the connection state is connected")
        }
        guard let session = sessions[record.edgeEndpoint], session.phase == .open else {
            throw .unavailable("the session with \(record.edgeEndpoint) is not open")
        }
        return session
    }

    // MARK: - Requests

    /// Sends a request and calls `complete` with the edge's answer, `DEADLINE_EXCEEDED` after the
    /// request timeout, or the reason it could not be sent.
    func request(_ request: EdgeRequest, on session: EdgeSession, timeout: Duration? = nil, _ complete: @escaping Completion<EdgeReplyBody>) {
        send("\(request.kind)", on: session, timeout: timeout, { id throws(ShowroomError) in try EdgeCodec.envelope(request: request, id: id) }) { result in
            complete(result.flatMap { envelope in
                Result { () throws(ShowroomError) in try EdgeCodec.reply(from: envelope) }.flatMap(\.result)
            })
        }
    }

    /// Sends the request `encode` makes with a fresh request id and calls `complete` with the
    /// response envelope (failed or not), `DEADLINE_EXCEEDED` after the request timeout, or the
    /// reason it could not be sent.
    func send(
        _ what: String, on session: EdgeSession, timeout: Duration? = nil, _ encode: (UInt64) throws(ShowroomError) -> WireEnvelope,
        _ complete: @escaping Completion<WireEnvelope>
    ) {
        let id = nextRequestID
        nextRequestID += 1
        do throws(ShowroomError) {
            let envelope = try encode(id)
            guard try session.send(envelope) else {
                complete(.failure(.unavailable("the queue to edge \(session.edge) is full")))
                return
            }
        } catch {
            complete(.failure(error))
            return
        }
        let timeout = timeout ?? configuration.requestTimeout
        let timer = loop.scheduleTimer(after: timeout) { [weak self, weak session] in
            guard let self, let session, let pending = session.pending.removeValue(forKey: id) else { return }
            self.statistics.requestsTimedOut += 1
            pending.complete(.failure(.deadlineExceeded(
                "no answer to \(what) from edge \(session.edge) within \(timeout)")))
        }
        session.pending[id] = EdgeSession.Pending(complete: complete, timer: timer, what: what)
    }

    /// Runs a request on a joined connection's session, mapping the answer with `map`.
    func request<T>(
        _ edgeRequest: EdgeRequest, for connection: ChannelConnection?, _ complete: @escaping Completion<T>,
        map: @escaping (ConnectionRecord, EdgeReplyBody) -> T
    ) {
        do throws(ShowroomError) {
            let record = try record(for: connection)
            let session = try session(of: record)
            request(edgeRequest, on: session) { result in
                complete(result.map { map(record, $0) })
            }
        } catch {
            complete(.failure(error))
        }
    }

    // MARK: - Sessions

    /// The session with `edge`, opened if there is none; `ready` runs once it is open (or failed).
    func withOpenSession(to edge: EdgeAddress, _ ready: @escaping (Result<EdgeSession, ShowroomError>) -> Void) {
        if let session = sessions[edge.endpoint], session.isDraining {
            return ready(.failure(.unavailable("edge \(edge) is shutting down; join the channel again through the cluster")))
        }
        if let session = sessions[edge.endpoint], session.phase == .opening || session.phase == .open {
            if session.phase == .open {
                ready(.success(session))
            } else {
                session.openWaiters.append { result in ready(result.map { session }) }
            }
            return
        }
        let session: EdgeSession
        do throws(ShowroomError) {
            session = try EdgeSession(
                edge: edge, context: context, heartbeatInterval: configuration.heartbeatInterval,
                heartbeatTimeout: configuration.heartbeatTimeout)
        } catch {
            ready(.failure(error))
            return
        }
        sessions[edge.endpoint] = session
        statistics.sessionsOpened += 1
        session.openWaiters.append { result in ready(result.map { session }) }
        loop.register(session.socket) { [weak self, weak session] _, _ in
            guard let self, let session else { return }
            self.receive(on: session)
        }
        loop.register(session.monitor.socket) { [weak self, weak session] _, _ in
            guard let self, let session, session.connectionBroke() else { return }
            self.edgeFailed(session, error: .unavailable("the connection to edge \(session.edge) broke"))
        }
        request(.openSession(clientID: configuration.clientID, sdkVersion: configuration.sdkVersion), on: session) {
            [weak self, weak session] result in
            guard let self, let session else { return }
            self.sessionOpened(session, result)
        }
    }

    private func sessionOpened(_ session: EdgeSession, _ result: Result<EdgeReplyBody, ShowroomError>) {
        guard session.phase == .opening else { return }
        switch result {
        case .success(.sessionOpened(_, let interval, let timeout, let limits)):
            session.phase = .open
            if interval > .zero { session.heartbeatInterval = interval }
            if timeout > .zero { session.heartbeatTimeout = timeout }
            session.limits = limits
            session.lastHeard = .now
            session.heartbeatTimer = loop.scheduleRepeating(every: session.heartbeatInterval) { [weak self, weak session] in
                guard let self, let session else { return }
                self.heartbeat(session)
            }
            if let volumeIndication {
                request(.enableVolumeIndication(volumeIndication), on: session) { _ in }
            }
            let waiters = session.openWaiters
            session.openWaiters = []
            for waiter in waiters { waiter(.success(())) }
        case .success(let body):
            teardown(session, error: .malformed("edge \(session.edge) answered the session request with \(body)"))
        case .failure(let error):
            teardown(session, error: error)
        }
    }

    /// One heartbeat tick: send a heartbeat (as a request, so the edge answers and its silence
    /// shows), and judge the edge by how long it has been silent.
    private func heartbeat(_ session: EdgeSession) {
        guard session.phase == .open else { return }
        let silence = session.lastHeard.duration(to: .now)
        if silence >= session.heartbeatTimeout {
            sessionLost(session)
            return
        }
        if !session.isInterrupted, silence >= session.heartbeatInterval * configuration.interruptedAfterIntervals {
            session.isInterrupted = true
            setState(.reconnecting, .interrupted, channelsOf: session)
        }
        let id = nextRequestID
        nextRequestID += 1
        // Answers to heartbeats are not awaited: any message from the edge counts as hearing it.
        if let envelope = try? EdgeCodec.envelope(request: .heartbeat(clientTime: MediaClock.nowMicroseconds()), id: id) {
            _ = try? session.send(envelope)
        }
    }

    /// The edge was silent past its heartbeat timeout: it has dropped the session, so every
    /// connection in it rejoins elsewhere.
    func sessionLost(_ session: EdgeSession) {
        edgeFailed(session, error: .unavailable("edge \(session.edge) silent for \(session.heartbeatTimeout); its session is gone"))
    }

    /// Removes every connection of a session, reporting each as closed.
    func closeConnections(of session: EdgeSession, state: ConnectionState, reason: ConnectionStateReason, error: ShowroomError) {
        for channel in session.channels.sorted() {
            // A connection that moved to another edge is not this session's to close.
            guard connections[channel]?.edgeEndpoint == session.edge.endpoint,
                  let record = connections.removeValue(forKey: channel) else { continue }
            forget(channel)
            if record.isJoined { emit(.connectionClosed(record.connection, error: error)) }
            setState(state, reason, of: record)
        }
        session.channels = []
        refreshPublishing()
    }

    /// Closes the socket and fails what waits on the session.
    func teardown(_ session: EdgeSession, error: ShowroomError) {
        guard session.phase != .closed else { return }
        session.phase = .closed
        if let timer = session.heartbeatTimer { loop.cancelTimer(timer) }
        if sessions[session.edge.endpoint] === session { sessions[session.edge.endpoint] = nil }
        closingSessions[ObjectIdentifier(session)] = nil
        loop.unregister(session.socket)
        loop.unregister(session.monitor.socket)
        session.close()
        session.failAll(error, loop: loop)
        for channel in session.channels {
            if let record = connections[channel], record.edgeEndpoint == session.edge.endpoint {
                connections[channel] = nil
            }
        }
        session.channels = []
    }

    /// Opens (or keeps) a session to `edge` ahead of a join (a preloaded channel's edge), warm
    /// until a join uses it, and has the edge check the join's token ahead (`PRELOAD_CHANNEL`).
    func warmSession(to edge: EdgeAddress, preloading channel: String, uid: UInt32, token: String,
                     _ complete: @escaping Completion<Void>) {
        withOpenSession(to: edge) { [weak self] result in
            switch result {
            case .success(let session):
                self?.keepWarm(session)
                self?.request(.preload(channel: channel, uid: uid, token: token), on: session) { reply in
                    complete(reply.map { _ in () })
                }
            case .failure(let error):
                complete(.failure(error))
            }
        }
    }

    /// A session whose last channel was left stays open (warm) for
    /// ``EngineConfiguration/sessionIdleTime``, so the next room on its edge costs no handshake,
    /// then closes if no channel came meanwhile.
    func keepWarm(_ session: EdgeSession) {
        guard configuration.sessionIdleTime > .zero, !isShutDown, !session.isDraining else { return releaseIfUnused(session) }
        guard session.channels.isEmpty, session.phase == .open else { return }
        session.idleGeneration &+= 1
        let generation = session.idleGeneration
        _ = loop.scheduleTimer(after: configuration.sessionIdleTime) { [weak self, weak session] in
            guard let self, let session, session.idleGeneration == generation else { return }
            self.releaseIfUnused(session)
        }
    }

    /// Closes a session that holds no connection any more: `EDGE_CLOSE_SESSION`, then the socket
    /// once the edge answers (closing at once would drop the request, sockets have no linger).
    func releaseIfUnused(_ session: EdgeSession, then done: (() -> Void)? = nil) {
        guard session.channels.isEmpty, session.phase == .open else {
            done?()
            return
        }
        session.phase = .closing
        if sessions[session.edge.endpoint] === session { sessions[session.edge.endpoint] = nil }
        closingSessions[ObjectIdentifier(session)] = session
        request(.closeSession, on: session, timeout: min(configuration.requestTimeout, .seconds(1))) { [weak self, weak session] _ in
            if let self, let session { self.teardown(session, error: .unavailable("the session was closed")) }
            done?()
        }
    }

    /// Drops what the engine kept for a channel it no longer holds.
    func forget(_ channel: String) {
        if primaryChannel == channel { primaryChannel = nil }
        videoSinks[channel] = nil
        pendingVideo[channel] = nil
        audioSinks[channel] = nil
    }

    // MARK: - States

    func setState(_ state: ConnectionState, _ reason: ConnectionStateReason, of record: ConnectionRecord) {
        record.state = state
        emit(.connectionStateChanged(record.connection, state: state, reason: reason))
    }

    func setState(_ state: ConnectionState, _ reason: ConnectionStateReason, channelsOf session: EdgeSession) {
        for channel in session.channels.sorted() {
            if let record = connections[channel], record.isJoined { setState(state, reason, of: record) }
        }
    }
}
