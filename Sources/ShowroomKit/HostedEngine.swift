internal import EdgeProtocol
internal import ShowroomWire

/// What a ``HostedEngine`` needs of the world it runs in: a clock, timers, links to edges that
/// carry the client protocol's messages as bytes, and the cluster's placement. A simulation gives
/// simulated ones, so that the engine's own connection logic (``EngineState``) runs against real
/// edges on a simulated network and clock.
package protocol EngineHost: AnyObject {
    /// The host's time now.
    var now: ContinuousClock.Instant { get }
    /// The time stamped on frames and heartbeats, in microseconds.
    var microseconds: UInt64 { get }
    /// Runs `action` after `delay` on the host's clock.
    func after(_ delay: Duration, _ action: @escaping () -> Void)
    /// Opens a link to `edge`: `receive` gets each message the edge sends (its frames), `broke`
    /// runs when the link breaks. Nil when no link can be opened.
    func connect(to edge: EdgeAddress, receive: @escaping ([[UInt8]]) -> Void, broke: @escaping () -> Void) -> (any EngineLink)?
    /// Asks the cluster where `channel` goes; `done` gets the edge or why not, later.
    func place(_ channel: String, credentials: PlacementCredentials, avoiding: EdgeAddress?,
               _ done: @escaping (Result<EdgeAddress, ShowroomError>) -> Void)
}

/// One link of a ``HostedEngine`` to an edge.
package protocol EngineLink: AnyObject {
    /// Sends one message (`[envelope]` or `[envelope][payload]`); false if it could not go.
    func send(_ frames: [[UInt8]]) -> Bool
    /// Closes the link; nothing is received on it any more.
    func close()
}

/// The engine's connection logic (``EngineState``: sessions, joins, heartbeats, warm sessions,
/// rejoins, moves) with its I/O done by an ``EngineHost`` instead of ZeroMQ sockets on a loop:
/// what ``EngineShell`` does with the state's directives, without codecs, sinks or capture. Media
/// is opaque bytes: ``publishVideo(_:keyframe:)`` sends a frame on every connection that
/// publishes video, and what arrives is counted per channel and publisher.
package final class HostedEngine {
    private final class Link {
        let serial: SessionSerial
        let edge: EdgeAddress
        var link: (any EngineLink)?
        var pending: [UInt64: (Result<WireEnvelope, ShowroomError>) -> Void] = [:]
        var isClosed = false
        init(serial: SessionSerial, edge: EdgeAddress) {
            self.serial = serial
            self.edge = edge
        }
    }

    /// A remote publisher's video as this engine received it in one channel.
    package struct ReceivedVideo: Sendable, Equatable {
        package var frames = 0
        package var keyframes = 0
        /// When the last frame arrived.
        package var lastAt: ContinuousClock.Instant?
        /// The last frame's payload.
        package var lastPayload: [UInt8] = []
    }

    /// The host owns its engine.
    private unowned let host: any EngineHost
    private var state: EngineState
    private var links: [SessionSerial: Link] = [:]
    private var tickets: [UInt64: (Result<ChannelConnection?, ShowroomError>) -> Void] = [:]
    private var nextTicket: UInt64 = 1
    private var nextRequestID: UInt64 = 1
    private var videoChannels: Set<String> = []
    /// A subscriber or a new edge needs a keyframe: the next frame published should be one.
    package private(set) var keyframeWanted = true
    /// Every event the engine would give the app, as it happens.
    package var onEvent: ((EngineEventSummary) -> Void)?
    /// The remote users each channel's connection was told are there (joined, not offline since),
    /// as an app sees them from its events.
    package private(set) var remoteUsers: [String: Set<UInt32>] = [:]
    /// Video received, by channel and publisher, since the connection's last (re)join.
    package private(set) var video: [String: [UInt32: ReceivedVideo]] = [:]
    /// Frames published: sent on a connection.
    package private(set) var framesSent = 0

    /// An engine with `clientID` whose I/O `host` (which keeps the engine) does, with the SDK's default timings
    /// (``EngineConfiguration``'s).
    package init(clientID: String, host: any EngineHost) {
        self.host = host
        state = EngineState(settings: EngineState.Settings(
            clientID: clientID, sdkVersion: "hosted", requestTimeout: .seconds(3), heartbeatInterval: .seconds(1),
            heartbeatTimeout: .seconds(5), interruptedAfterIntervals: 3, sessionIdleTime: .seconds(10), rejoinWindow: .seconds(30)))
    }

    // MARK: - The app's calls

    /// Joins `channel` as `uid` with `token`: placed by the host's placement (preferring edges
    /// this engine has sessions with), then joined there, following a redirect, as
    /// ``ShowroomEngine/joinChannelEx(token:connection:options:)`` does.
    package func join(channel: String, uid: UInt32, token: String, broadcaster: Bool,
                      _ done: @escaping (Result<Void, ShowroomError>) -> Void) {
        let connection = ChannelConnection(channel: channel, uid: uid)
        let options: ChannelMediaOptions = broadcaster ? .broadcaster : .audience
        let credentials = PlacementCredentials(uid: uid, token: token, audience: !broadcaster, preferredEdges: state.warmEdges)
        host.place(channel, credentials: credentials, avoiding: nil) { [weak self] placed in
            guard let self else { return }
            switch placed {
            case .failure(let error): done(.failure(error))
            case .success(let edge):
                let ticket = ticket { done($0.map { _ in () }) }
                perform(state.join(token: token, connection: connection, options: options, edge: edge, primary: false,
                                   ticket: ticket, now: host.now))
            }
        }
    }

    /// Leaves `channel`.
    package func leave(channel: String, _ done: @escaping (Result<Void, ShowroomError>) -> Void) {
        let ticket = ticket { done($0.map { _ in () }) }
        perform(state.leave(ChannelConnection(channel: channel, uid: 0), ticket: ticket))
    }

    /// Leaves everything and closes every session.
    package func shutdown(_ done: @escaping () -> Void) {
        perform(state.shutdown(ticket: ticket { _ in done() }, now: host.now))
    }

    /// Sends an opaque video frame on every connection that publishes video (and on a draining
    /// edge a moved broadcaster lingers on). Returns the connections it went to.
    @discardableResult
    package func publishVideo(_ payload: [UInt8], keyframe: Bool) -> Int {
        var sent = 0
        let micros = host.microseconds
        for index in state.connections.values.indices where state.connections.values[index].sends(.video) {
            var header = state.connections.values[index].nextMediaHeader(.video, captured: micros)
            header.keyframe = keyframe
            header.payloadSize = UInt32(payload.count)
            header.sendTimeUs = micros
            let record = state.connections.values[index]
            guard let envelope = try? WireEnvelope(request: .mediaFrame, id: 0, body: header),
                  let head: [UInt8] = try? envelope.serializedBytes(),
                  let serial = state.openSession(to: record.edgeEndpoint), let link = links[serial]?.link,
                  link.send([head, payload])
            else { continue }
            if let lingering = record.lingeringOn, let old = state.openSession(to: lingering.endpoint) {
                _ = links[old]?.link?.send([head, payload])
            }
            _ = state.connections.values[index].markSent(.video)
            sent += 1
        }
        if keyframe, sent > 0 { keyframeWanted = false }
        framesSent += sent
        return sent
    }

    // MARK: - What the engine holds

    /// The channels joined now (not rejoining), sorted.
    package var joinedChannels: [String] {
        state.connections.values.filter { $0.isJoined && $0.rejoin == nil && $0.move == nil }.map(\.connection.channel).sorted()
    }

    /// The channels held in any state (joining, joined, rejoining), sorted.
    package var heldChannels: [String] { state.connections.keys.sorted() }

    /// The edge a channel's connection lives on.
    package func edge(of channel: String) -> String? { state.connections[channel]?.edge.id }

    /// Whether a channel's connection publishes video now.
    package func publishes(_ channel: String) -> Bool { state.connections[channel]?.sends(.video) ?? false }

    /// The state of a channel's connection, as the app's state events told it.
    package func connectionState(of channel: String) -> String? { state.connections[channel].map { "\($0.state)" } }

    /// The sessions open now, by edge id.
    package var openSessionEdges: [String] { state.openSessions.compactMap { state.sessions[$0]?.edge.id } }

    /// Rejoins started so far.
    package var rejoins: Int { state.rejoins }

    // MARK: - Directives


    private func ticket(_ complete: @escaping (Result<ChannelConnection?, ShowroomError>) -> Void) -> EngineTicket {
        defer { nextTicket += 1 }
        tickets[nextTicket] = complete
        return EngineTicket(value: nextTicket)
    }

    private func perform(_ directives: [EngineDirective]) {
        for directive in directives { perform(directive) }
    }

    private func perform(_ directive: EngineDirective) {
        switch directive {
        case .openSession(let serial, let edge):
            let entry = Link(serial: serial, edge: edge)
            links[serial] = entry
            entry.link = host.connect(to: edge, receive: { [weak self, weak entry] frames in
                guard let self, let entry, !entry.isClosed else { return }
                receive(frames, on: entry)
            }, broke: { [weak self, weak entry] in
                guard let self, let entry, !entry.isClosed else { return }
                perform(state.linkBroke(entry.serial, now: host.now))
            })
            if entry.link == nil {
                links[serial] = nil
                perform(state.sessionFailed(serial, .unavailable("cannot connect to edge \(edge)"), now: host.now))
            }
        case .request(let request, let serial, let purpose, let timeout):
            guard let entry = links[serial], !entry.isClosed else {
                return perform(state.answered(purpose, on: serial, .failure(.unavailable("the session with edge is closed")), now: host.now))
            }
            send(request, on: entry, timeout: timeout ?? state.settings.requestTimeout) { [weak self] result in
                guard let self else { return }
                let reply = result.flatMap { envelope in
                    Result { () throws(ShowroomError) in try EdgeCodec.reply(from: envelope) }.flatMap(\.result)
                }
                perform(state.answered(purpose, on: serial, reply, now: host.now))
            }
        case .heartbeat(let serial):
            guard let entry = links[serial], !entry.isClosed else { return }
            let id = nextRequestID
            nextRequestID += 1
            let micros = host.microseconds
            if let envelope = try? EdgeCodec.envelope(request: .heartbeat(clientTime: micros), id: id),
               let bytes: [UInt8] = try? envelope.serializedBytes() {
                _ = entry.link?.send([bytes])
            }
        case .movedOut(let serial):
            if let entry = links[serial], let envelope = try? EdgeCodec.movedOut(), let bytes: [UInt8] = try? envelope.serializedBytes() {
                _ = entry.link?.send([bytes])
            }
        case .closeSession(let serial, let error):
            guard let entry = links.removeValue(forKey: serial) else { return }
            entry.isClosed = true
            entry.link?.close()
            let waiting = entry.pending
            entry.pending = [:]
            for (_, complete) in waiting.sorted(by: { $0.key < $1.key }) { complete(.failure(error)) }
        case .emit(let event):
            note(event)
        case .complete(let ticket, let result):
            tickets.removeValue(forKey: ticket.value)?(result)
        case .place(let channel, let credentials, let avoiding, let purpose):
            host.place(channel, credentials: credentials, avoiding: avoiding) { [weak self] placed in
                guard let self else { return }
                perform(state.placed(channel: channel, purpose, placed, now: host.now))
            }
        case .schedule(let timer, let delay):
            host.after(delay) { [weak self] in
                guard let self else { return }
                perform(state.fired(timer, now: host.now))
            }
        case .forgetMedia(let channel):
            remoteUsers[channel] = nil
            video[channel] = nil
        case .forgetPendingVideo:
            break
        case .refreshPublishing:
            let sending = Set(state.connections.values.filter { $0.sends(.video) }.map(\.connection.channel))
            if !sending.isSubset(of: videoChannels) { keyframeWanted = true }
            videoChannels = sending
        case .wantKeyframe:
            keyframeWanted = true
        }
    }

    /// Keeps what an app would learn from an event, and passes the event on.
    private func note(_ event: EngineEvent) {
        switch event {
        case .userJoined(let connection, let uid):
            remoteUsers[connection.channel, default: []].insert(uid)
        case .userOffline(let connection, let uid, _):
            remoteUsers[connection.channel]?.remove(uid)
            video[connection.channel]?[uid] = nil
        case .connectionStateChanged(let connection, let state, _) where state == .reconnecting || state == .failed:
            // What the lost edge said no longer holds; the new edge tells it again.
            remoteUsers[connection.channel] = nil
            video[connection.channel] = nil
        default:
            break
        }
        onEvent?(EngineEventSummary(event))
    }

    private func send(_ request: EdgeRequest, on entry: Link, timeout: Duration,
                      _ complete: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        let id = nextRequestID
        nextRequestID += 1
        guard let envelope = try? EdgeCodec.envelope(request: request, id: id), let bytes: [UInt8] = try? envelope.serializedBytes()
        else { return complete(.failure(.internal("cannot encode a \(request.kind) request"))) }
        guard entry.link?.send([bytes]) == true else {
            return complete(.failure(.unavailable("the link to edge \(entry.edge) is down")))
        }
        entry.pending[id] = complete
        host.after(timeout) { [weak entry] in
            guard let entry, let pending = entry.pending.removeValue(forKey: id) else { return }
            pending(.failure(.deadlineExceeded("no answer to \(request.kind) from edge \(entry.edge) within \(timeout)")))
        }
    }

    // MARK: - From the edge

    private func receive(_ frames: [[UInt8]], on entry: Link) {
        let recovered = state.heard(entry.serial, now: host.now)
        if !recovered.isEmpty { perform(recovered) }
        guard let first = frames.first, let envelope = try? WireEnvelope.decode(frame: first) else { return }
        if envelope.kind == .mediaFrame {
            guard frames.count >= 2, let header = try? envelope.decodeBody(WireMediaHeader.self), header.track == .video else { return }
            let isKeyframe = header.keyframe
            switch state.mediaArrived(channel: header.channel, from: entry.serial, isKeyframe: isKeyframe) {
            case .drop: return
            case .accept: break
            case .acceptAfterSwitch(let directives, _, _): perform(directives)
            }
            var received = video[header.channel, default: [:]][header.publisherUid, default: ReceivedVideo()]
            received.frames += 1
            if isKeyframe { received.keyframes += 1 }
            received.lastAt = host.now
            received.lastPayload = frames[1]
            video[header.channel, default: [:]][header.publisherUid] = received
        } else if envelope.isResponse {
            entry.pending.removeValue(forKey: envelope.requestID)?(.success(envelope))
        } else if envelope.kind == .keyframeRequest {
            keyframeWanted = true
        } else {
            guard let event = try? EdgeCodec.event(from: envelope) else { return }
            perform(state.edgeEvent(event, on: entry.serial, now: host.now))
        }
    }
}

/// An engine event in brief, for a log line: what happened and to which channel and user.
package struct EngineEventSummary: Sendable, CustomStringConvertible {
    /// The channel it is about, if any.
    package let channel: String?
    /// The event's name and details.
    package let what: String

    init(_ event: EngineEvent) {
        channel = event.connection?.channel
        switch event {
        case .joined(let c, _): what = "joined uid=\(c.uid)"
        case .userJoined(_, let uid): what = "userJoined \(uid)"
        case .userOffline(_, let uid, let reason): what = "userOffline \(uid) \(reason)"
        case .connectionStateChanged(_, let state, let reason): what = "state \(state) \(reason)"
        case .connectionClosed(_, let error): what = "closed \(error.code)"
        case .rejoinedChannel: what = "rejoined"
        case .error(_, let error): what = "error \(error.code)"
        case .remoteTrackPublished(_, let uid, let track): what = "published \(uid) \(track)"
        case .remoteTrackUnpublished(_, let uid, let track): what = "unpublished \(uid) \(track)"
        case .remoteVideoStateChanged(_, let uid, let state, _): what = "video \(uid) \(state)"
        default: what = "other"
        }
    }

    package var description: String { "\(channel ?? "-") \(what)" }
}
