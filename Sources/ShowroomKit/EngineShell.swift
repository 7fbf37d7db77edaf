#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import EdgeProtocol
internal import MediaCodecs
internal import ShowroomWire
internal import ZeroMQ

/// The engine's thin shell, confined to its loop thread: it owns the edge sessions' sockets, the
/// clock, the timers, the placement calls, local media and remote sinks, and does what
/// ``EngineState`` (the connection and session logic) decides. The public ``ShowroomEngine`` posts
/// work here and awaits the completions.
final class EngineShell {
    typealias Completion<T> = (Result<T, ShowroomError>) -> Void

    let loop: EventLoop
    let context: Context
    let configuration: EngineConfiguration
    /// Where rejoins and moves are placed (the engine's placement).
    let placement: any ChannelPlacement
    let emit: (EngineEvent) -> Void

    var state: EngineState
    /// The sockets of the sessions the state holds, by serial.
    var links: [SessionSerial: EdgeSession] = [:]
    /// App calls waiting for the state to end them.
    var tickets: [EngineTicket: Completion<ChannelConnection?>] = [:]
    var nextTicket: UInt64 = 1
    var nextRequestID: UInt64 = 1
    /// Remote video sinks by channel and uid; set before or after joining, dropped on leaving.
    var videoSinks: [String: [UInt32: (sink: any RemoteVideoSink, since: ContinuousClock.Instant)]] = [:]
    /// Remote video frames since the last keyframe of tracks without a sink yet, by channel.
    var pendingVideo: [String: PendingVideo] = [:]
    /// Remote audio sinks by channel and uid.
    var audioSinks: [String: [UInt32: any RemoteAudioSink]] = [:]
    var mediaStatistics = EngineStatistics()

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
        state = EngineState(settings: EngineState.Settings(
            clientID: configuration.clientID, sdkVersion: configuration.sdkVersion, requestTimeout: configuration.requestTimeout,
            heartbeatInterval: configuration.heartbeatInterval, heartbeatTimeout: configuration.heartbeatTimeout,
            interruptedAfterIntervals: configuration.interruptedAfterIntervals, sessionIdleTime: configuration.sessionIdleTime,
            rejoinWindow: configuration.rejoinWindow))
    }

    var isShutDown: Bool { state.isShutDown }

    /// The engine's counters: media from the shell, sessions, rejoins and moves from the state.
    var statistics: EngineStatistics {
        var statistics = mediaStatistics
        statistics.rejoins = state.rejoins
        statistics.moves = state.moves
        statistics.sessionsOpened = state.sessionsOpened
        return statistics
    }

    /// A ticket for an app call the state will end.
    func ticket(_ complete: @escaping Completion<ChannelConnection?>) -> EngineTicket {
        let ticket = EngineTicket(value: nextTicket)
        nextTicket += 1
        tickets[ticket] = complete
        return ticket
    }

    // MARK: - Directives

    /// Does what the state decided, in order.
    func perform(_ directives: [EngineDirective]) {
        for directive in directives { perform(directive) }
    }

    private func perform(_ directive: EngineDirective) {
        switch directive {
        case .openSession(let serial, let edge):
            open(serial, to: edge)
        case .request(let request, let serial, let purpose, let timeout):
            guard let link = links[serial], !link.isClosed else {
                return perform(state.answered(purpose, on: serial, .failure(.unavailable("the session with edge is closed")), now: .now))
            }
            self.request(request, on: link, timeout: timeout) { [weak self] result in
                guard let self else { return }
                self.perform(self.state.answered(purpose, on: serial, result, now: .now))
            }
        case .heartbeat(let serial):
            guard let link = links[serial] else { return }
            let id = nextRequestID
            nextRequestID += 1
            // Answers to heartbeats are not awaited: any message from the edge counts as hearing it.
            if let envelope = try? EdgeCodec.envelope(request: .heartbeat(clientTime: MediaClock.nowMicroseconds()), id: id) {
                _ = try? link.send(envelope)
            }
        case .movedOut(let serial):
            if let link = links[serial], let envelope = try? EdgeCodec.movedOut() { _ = try? link.send(envelope) }
        case .closeSession(let serial, let error):
            guard let link = links.removeValue(forKey: serial) else { return }
            loop.unregister(link.socket)
            loop.unregister(link.monitor.socket)
            link.close()
            link.failAll(error, loop: loop)
        case .emit(let event):
            emit(event)
        case .complete(let ticket, let result):
            tickets.removeValue(forKey: ticket)?(result)
        case .place(let channel, let credentials, let avoiding, let purpose):
            place(channel, credentials, avoiding: avoiding) { shell, placed in
                shell.perform(shell.state.placed(channel: channel, purpose, placed, now: .now))
            }
        case .schedule(let timer, let delay):
            loop.scheduleTimer(after: delay) { [weak self] in
                guard let self else { return }
                self.perform(self.state.fired(timer, now: .now))
            }
        case .forgetMedia(let channel):
            videoSinks[channel] = nil
            pendingVideo[channel] = nil
            audioSinks[channel] = nil
        case .forgetPendingVideo(let channel, let uid):
            pendingVideo[channel]?.forget(uid)
        case .refreshPublishing:
            refreshPublishing()
        case .wantKeyframe:
            wantKeyframe()
        }
    }

    /// Opens the socket of a session the state started.
    private func open(_ serial: SessionSerial, to edge: EdgeAddress) {
        let link: EdgeSession
        do throws(ShowroomError) {
            link = try EdgeSession(serial: serial, edge: edge, context: context)
        } catch {
            return perform(state.sessionFailed(serial, error, now: .now))
        }
        links[serial] = link
        loop.register(link.socket) { [weak self, weak link] _, _ in
            guard let self, let link else { return }
            self.receive(on: link)
        }
        loop.register(link.monitor.socket) { [weak self, weak link] _, _ in
            guard let self, let link, link.connectionBroke() else { return }
            self.perform(self.state.linkBroke(link.serial, now: .now))
        }
    }

    /// Asks the placement (off the loop) for an edge for the channel other than `avoiding`;
    /// `done` runs on the loop.
    private func place(_ channel: String, _ credentials: PlacementCredentials, avoiding: EdgeAddress?,
                       _ done: @escaping (EngineShell, Result<EdgeAddress, ShowroomError>) -> Void) {
        let placement = self.placement
        let core = WeakLoopReference(self)
        let loop = self.loop
        let done = UncheckedLoopWork(done)
        Task {
            let placed: Result<EdgeAddress, ShowroomError>
            do throws(ShowroomError) {
                placed = .success(try await placement.edge(for: channel, avoiding: avoiding, joiningAs: credentials))
            } catch {
                placed = .failure(error)
            }
            loop.execute { if let core = core.object { done.work(core, placed) } }
        }
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
            self.mediaStatistics.requestsTimedOut += 1
            pending.complete(.failure(.deadlineExceeded(
                "no answer to \(what) from edge \(session.edge) within \(timeout)")))
        }
        session.pending[id] = EdgeSession.Pending(complete: complete, timer: timer, what: what)
    }

    /// Runs a request on a joined connection's session, and on success `accepted` (a change the
    /// record keeps) and `map` the answer.
    func request<T>(
        _ edgeRequest: EdgeRequest, for connection: ChannelConnection?, accepted: EngineState.AcceptedChange? = nil,
        _ complete: @escaping Completion<T>, map: @escaping (EdgeReplyBody) -> T
    ) {
        do throws(ShowroomError) {
            let (record, serial) = try state.target(for: connection)
            guard let link = links[serial] else { throw .unavailable("the session with \(record.edgeEndpoint) is not open") }
            let channel = record.connection.channel
            request(edgeRequest, on: link) { [weak self] result in
                if case .success = result, let accepted, let self { self.perform(self.state.accepted(accepted, channel: channel)) }
                if case .failure(let error) = result, error.code == .notJoined, let self {
                    // The edge forgot a connection it serves: rejoin rather than stay broken.
                    self.perform(self.state.forgottenByEdge(channel, on: serial, error, now: .now))
                }
                complete(result.map(map))
            }
        } catch {
            complete(.failure(error))
        }
    }
}
