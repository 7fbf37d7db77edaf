#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import EdgeProtocol
internal import MediaCodecs
internal import ShowroomWire

/// The engine's thin shell, confined to one thread: it holds the edge sessions' links, the
/// requests waiting on them, the timers, local media and remote sinks, and does what
/// ``EngineState`` (the connection and session logic) decides. Its clock, timers, links and
/// placement are its ``EngineHost``'s: an app's engine runs it on its loop (``LoopEngineHost``,
/// posted to by the public ``ShowroomEngine``), a simulation on a simulated network and clock.
package final class EngineShell {
    package typealias Completion<T> = (Result<T, ShowroomError>) -> Void

    /// One session's link as the shell holds it: the host's link and the requests waiting for an
    /// answer on it.
    final class SessionLink {
        struct Pending {
            /// Gets the response envelope (failed or not), or why none came.
            let complete: (Result<WireEnvelope, ShowroomError>) -> Void
            let timer: HostTimer
        }

        let serial: SessionSerial
        let edge: EdgeAddress
        let link: any EngineLink
        var pending: [UInt64: Pending] = [:]
        var isClosed = false

        init(serial: SessionSerial, edge: EdgeAddress, link: any EngineLink) {
            self.serial = serial
            self.edge = edge
            self.link = link
        }

        /// Sends one envelope.
        ///
        /// - Returns: False if the edge's queue is full (nothing was sent).
        func send(_ envelope: WireEnvelope) throws(ShowroomError) -> Bool {
            let bytes: [UInt8]
            do { bytes = try envelope.serializedBytes() } catch {
                throw .internal("cannot serialize a \(envelope.kind) message: \(error)")
            }
            return try link.send(bytes)
        }

        /// Sends a media frame: `[envelope][payload]`; false if it was dropped.
        func sendMedia(_ envelope: WireEnvelope, payload: [UInt8]) -> Bool {
            guard let head: [UInt8] = try? envelope.serializedBytes() else { return false }
            return link.sendMedia(head, payload)
        }
    }

    let host: any EngineHost
    let configuration: EngineConfiguration
    let emit: (EngineEvent) -> Void

    var state: EngineState
    /// The links of the sessions the state holds, by serial.
    var links: [SessionSerial: SessionLink] = [:]
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
    var videoTimer: HostTimer?
    var audioTimer: HostTimer?
    var keyframeWanted = false
    /// The channels whose connections send video: one that starts sending starts on a keyframe.
    var videoChannels: Set<String> = []
    /// Video comes encoded from the app (``ShowroomEngine/pushExternalEncodedVideoFrame(_:)``), not from
    /// the camera.
    var externalEncodedVideo = false

    /// A shell whose I/O `host` does, with `configuration`'s timings and media settings, that
    /// gives the app's events to `emit`.
    package init(host: any EngineHost, configuration: EngineConfiguration, emit: @escaping (EngineEvent) -> Void) {
        self.host = host
        self.configuration = configuration
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
                return perform(state.answered(purpose, on: serial, .failure(.unavailable("the session with edge is closed")), now: host.now))
            }
            self.request(request, on: link, timeout: timeout) { [weak self] result in
                guard let self else { return }
                self.perform(self.state.answered(purpose, on: serial, result, now: self.host.now))
            }
        case .heartbeat(let serial):
            guard let link = links[serial] else { return }
            let id = nextRequestID
            nextRequestID += 1
            // Answers to heartbeats are not awaited: any message from the edge counts as hearing it.
            if let envelope = try? EdgeCodec.envelope(request: .heartbeat(clientTime: host.microseconds), id: id) {
                _ = try? link.send(envelope)
            }
        case .movedOut(let serial):
            if let link = links[serial], let envelope = try? EdgeCodec.movedOut() { _ = try? link.send(envelope) }
        case .closeSession(let serial, let error):
            guard let link = links.removeValue(forKey: serial) else { return }
            link.isClosed = true
            link.link.close()
            let waiting = link.pending
            link.pending = [:]
            for (_, request) in waiting.sorted(by: { $0.key < $1.key }) {
                host.cancel(request.timer)
                request.complete(.failure(error))
            }
        case .emit(let event):
            emit(event)
        case .complete(let ticket, let result):
            tickets.removeValue(forKey: ticket)?(result)
        case .place(let channel, let credentials, let avoiding, let purpose):
            host.place(channel, credentials: credentials, avoiding: avoiding) { [weak self] placed in
                guard let self else { return }
                self.perform(self.state.placed(channel: channel, purpose, placed, now: self.host.now))
            }
        case .schedule(let timer, let delay):
            _ = host.schedule(after: delay) { [weak self] in
                guard let self else { return }
                self.perform(self.state.fired(timer, now: self.host.now))
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

    /// Opens the link of a session the state started.
    private func open(_ serial: SessionSerial, to edge: EdgeAddress) {
        // The link's callbacks find the session through this box: it is made before the link.
        final class Opened { weak var link: SessionLink? }
        let opened = Opened()
        let link: any EngineLink
        do throws(ShowroomError) {
            link = try host.connect(to: edge, receive: { [weak self] message, firstOfBatch in
                guard let self, let session = opened.link, !session.isClosed else { return }
                self.receive(message, on: session, firstOfBatch: firstOfBatch)
            }, broke: { [weak self] in
                guard let self, let session = opened.link, !session.isClosed else { return }
                self.perform(self.state.linkBroke(session.serial, now: self.host.now))
            })
        } catch {
            return perform(state.sessionFailed(serial, error, now: host.now))
        }
        let session = SessionLink(serial: serial, edge: edge, link: link)
        opened.link = session
        links[serial] = session
    }

    // MARK: - Requests

    /// Sends a request and calls `complete` with the edge's answer, `DEADLINE_EXCEEDED` after the
    /// request timeout, or the reason it could not be sent.
    func request(_ request: EdgeRequest, on session: SessionLink, timeout: Duration? = nil, _ complete: @escaping Completion<EdgeReplyBody>) {
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
        _ what: String, on session: SessionLink, timeout: Duration? = nil, _ encode: (UInt64) throws(ShowroomError) -> WireEnvelope,
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
        let timer = host.schedule(after: timeout) { [weak self, weak session] in
            guard let self, let session, let pending = session.pending.removeValue(forKey: id) else { return }
            self.mediaStatistics.requestsTimedOut += 1
            pending.complete(.failure(.deadlineExceeded(
                "no answer to \(what) from edge \(session.edge) within \(timeout)")))
        }
        session.pending[id] = SessionLink.Pending(complete: complete, timer: timer)
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
                    self.perform(self.state.forgottenByEdge(channel, on: serial, error, now: self.host.now))
                }
                complete(result.map(map))
            }
        } catch {
            complete(.failure(error))
        }
    }
}
