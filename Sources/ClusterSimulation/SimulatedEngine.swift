import Ownership
import ShowroomKit
import ShowroomWire

/// One app of a run with the SDK's own engine: the SDK's shell (``EngineShell``, over its
/// `EngineState`) on a host of the run's (``SimulatedEngineHost``), taking the path a real app
/// takes. It joins where the coordinators place it, sets a video sink for a remote user once told
/// the user joined (frames before that are kept by the engine and handed over), publishes video
/// it encodes itself (opaque bytes), a keyframe whenever the engine asks. Every event the engine
/// gives it is a line of the log.
final class SimulatedEngine {
    /// A remote publisher's video as this app received it in one channel.
    struct ReceivedVideo: Equatable {
        var frames = 0
        var keyframes = 0
        /// When the last frame arrived (run milliseconds).
        var lastAtMs: Int64?
        /// The last frame's payload.
        var lastPayload: [UInt8] = []
    }

    /// The app's video sink for one remote user: it counts what arrives.
    private final class VideoSink: RemoteVideoSink, @unchecked Sendable {
        // @unchecked: a run is one thread; the engine calls it there.
        var received = ReceivedVideo()

        func consume(_ frame: RemoteMediaFrame) -> VideoSinkOutcome {
            received.frames += 1
            if frame.isKeyframe { received.keyframes += 1 }
            received.lastAtMs = Simulation.startMs + Int64(frame.receiveTimeMicroseconds / 1000)
            received.lastPayload = Array(frame.payload)
            return .decoded(width: frame.width, height: frame.height)
        }
    }

    let id: String
    let uid: UInt32
    private(set) var shell: EngineShell!
    private let host: SimulatedEngineHost
    /// The remote users each channel's connection was told are there (joined, not offline since),
    /// as an app sees them from its events.
    private(set) var remoteUsers: [String: Set<UInt32>] = [:]
    /// The sinks set, by channel and remote user.
    private var sinks: [String: [UInt32: VideoSink]] = [:]
    /// The engine asked for a keyframe (or nothing was published yet): the next frame is one.
    private(set) var keyframeWanted = true
    /// Frames published: sent on a connection.
    private(set) var framesSent = 0

    init(id: String, uid: UInt32, cluster: SimulatedCluster, links: SimulatedClientLinks) {
        self.id = id
        self.uid = uid
        host = SimulatedEngineHost(id: id, cluster: cluster, links: links)
        shell = EngineShell(host: host, configuration: EngineConfiguration(entry: .seeds([]), clientID: id),
                            emit: { [unowned self] event in note(event) })
        shell.setExternalEncodedVideo(true)
    }

    private var network: SimulatedNetwork { host.network }

    // MARK: The app's calls

    /// Joins `channel` as `uid` where the coordinators place it, as `joinChannel` does.
    func join(channel: String, uid: UInt32, token: String, broadcaster: Bool,
              _ done: @escaping (Result<Void, ShowroomError>) -> Void) {
        shell.join(token: token, connection: ChannelConnection(channel: channel, uid: uid), options: broadcaster ? .broadcaster : .audience,
                   primary: false, preferringWarmEdges: false, started: host.now) { done($0.map { _ in () }) }
    }

    /// Leaves `channel`.
    func leave(channel: String, _ done: @escaping (Result<Void, ShowroomError>) -> Void) {
        shell.leave(ChannelConnection(channel: channel, uid: uid), done)
    }

    /// Sends an opaque video frame on every connection that publishes video (and on a draining
    /// edge a moved broadcaster lingers on). Returns the connections it went to.
    @discardableResult
    func publishVideo(_ payload: [UInt8], keyframe: Bool) -> Int {
        let frame = ExternalEncodedVideoFrame(data: payload, isKeyframe: keyframe, width: 16, height: 16, captureTimeMicroseconds: host.microseconds)
        let sent = (try? shell.pushEncodedVideo(frame)) ?? 0
        if keyframe, sent > 0 { keyframeWanted = false }
        framesSent += sent
        return sent
    }

    // MARK: What the app holds

    /// Video received, by channel and publisher, since the app set the publisher's sink.
    var video: [String: [UInt32: ReceivedVideo]] { sinks.mapValues { $0.mapValues(\.received) } }

    /// Keeps what an app learns from an event, and logs it.
    private func note(_ event: EngineEvent) {
        switch event {
        case .userJoined(let connection, let remote):
            remoteUsers[connection.channel, default: []].insert(remote)
            // The app's view of the user: its sink, set after the event, as apps do.
            let sink = VideoSink()
            sinks[connection.channel, default: [:]][remote] = sink
            try? shell.setVideoSink(sink, uid: remote, connection)
        case .userOffline(let connection, let remote, _):
            remoteUsers[connection.channel]?.remove(remote)
            sinks[connection.channel]?[remote] = nil
            try? shell.setVideoSink(nil, uid: remote, connection)
        case .connectionStateChanged(let connection, let state, _) where state == .reconnecting || state == .failed || state == .disconnected:
            // What the lost edge said no longer holds; the new edge tells it again.
            remoteUsers[connection.channel] = nil
            sinks[connection.channel] = nil
        case .keyframeRequested:
            keyframeWanted = true
        default:
            break
        }
        network.record("engine \(id) \(EngineEventSummary(event))")
    }
}

/// The world of a ``SimulatedEngine``'s shell: the run's clock and timers, links to the edges'
/// processes (``SimulatedClientLink``) and the cluster's placement asked of the coordinators as the
/// SDK's coordinator placement asks them (`CHANNEL_PLACE` to the channel's owner, the next one on
/// `UNAVAILABLE` or no answer).
final class SimulatedEngineHost: EngineHost {
    private let id: String
    private unowned let cluster: SimulatedCluster
    private let links: SimulatedClientLinks
    var network: SimulatedNetwork { cluster.network }
    private var nextTimer: UInt64 = 1
    /// Timers cancelled before they ran.
    private var cancelled: Set<UInt64> = []
    /// Where the run's time starts on the engines' monotonic clock; only differences are used.
    static let base = ContinuousClock.now
    static let placementTimeoutMs: Int64 = 3_000

    init(id: String, cluster: SimulatedCluster, links: SimulatedClientLinks) {
        self.id = id
        self.cluster = cluster
        self.links = links
    }

    var now: ContinuousClock.Instant { Self.base + .milliseconds(network.now - Simulation.startMs) }

    func microseconds(at instant: ContinuousClock.Instant) -> UInt64 {
        let elapsed = Self.base.duration(to: instant).components
        return UInt64(max(0, elapsed.seconds * 1_000_000 + elapsed.attoseconds / 1_000_000_000_000))
    }

    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> HostTimer {
        let timer = HostTimer(value: nextTimer)
        nextTimer += 1
        network.scheduler.after(delay.wholeMilliseconds) { [weak self] in
            guard let self, cancelled.remove(timer.value) == nil else { return }
            action()
        }
        return timer
    }

    func scheduleRepeating(every interval: Duration, _ action: @escaping () -> Void) -> HostTimer {
        let timer = HostTimer(value: nextTimer)
        nextTimer += 1
        repeatEvery(max(interval.wholeMilliseconds, 1), timer, action)
        return timer
    }

    private func repeatEvery(_ ms: Int64, _ timer: HostTimer, _ action: @escaping () -> Void) {
        network.scheduler.after(ms) { [weak self] in
            guard let self, cancelled.remove(timer.value) == nil else { return }
            action()
            repeatEvery(ms, timer, action)
        }
    }

    func cancel(_ timer: HostTimer) {
        if timer.value < nextTimer { cancelled.insert(timer.value) }
    }

    func connect(to edge: EdgeAddress, receive: @escaping (_ message: any EngineMessage, _ firstOfBatch: Bool) -> Void,
                 broke: @escaping () -> Void) throws(ShowroomError) -> any EngineLink {
        guard let node = network.nodes[edge.id] else { throw .unavailable("cannot connect to edge \(edge)") }
        network.record("engine \(id) connect \(edge.id)#\(node.incarnation)")
        return links.connect(edgeID: edge.id, node: node, edge: node.alive ? cluster.edges[edge.id] : nil,
                             receive: { receive(FramesMessage($0), true) },
                             broke: { [unowned self] in
                                 network.record("engine \(id) link to \(edge.id) broke")
                                 broke()
                             })
    }

    func place(_ channel: String, credentials: PlacementCredentials, avoiding: EdgeAddress?,
               _ done: @escaping (Result<EdgeAddress, ShowroomError>) -> Void) {
        // The coordinators a cluster status lists, the channel's owner first.
        let alive = cluster.coordinatorIDs.filter { network.isAlive($0) }
        let order = OwnerRing(.coordinator, memberIDs: alive).holders(of: channel, count: alive.count)
        let request = RoomPlaceChannelRequest.with {
            $0.channel = channel
            $0.unreachableEdge = avoiding?.id ?? ""
            $0.uid = credentials.uid
            $0.token = credentials.token
            $0.audience = credentials.audience
            $0.preferredEdges = Array(credentials.preferredEdges.prefix(4))
        }
        ask(order, 0, request, done)
    }

    private func ask(_ order: [String], _ index: Int, _ request: RoomPlaceChannelRequest,
                     _ done: @escaping (Result<EdgeAddress, ShowroomError>) -> Void) {
        guard index < order.count else {
            return done(.failure(.unavailable("no coordinator placed '\(request.channel)'")))
        }
        guard let envelope = try? WireEnvelope(request: .channelPlace, id: network.nextRequestID(), body: request) else {
            preconditionFailure("a placement request does not encode")
        }
        network.send(envelope, from: nil, to: order[index], timeoutMs: Self.placementTimeoutMs) { [unowned self] result in
            switch result {
            case .success(let answer):
                if let failure = answer.failure {
                    guard [.unavailable, .deadlineExceeded, .noCoordinator].contains(failure.code) else { return done(.failure(failure)) }
                    ask(order, index + 1, request, done)
                } else if let placed = try? answer.decodeBody(RoomPlaceChannelResponse.self), !placed.edgeID.isEmpty {
                    done(.success(EdgeAddress(id: placed.edgeID, endpoint: placed.clientEndpoint,
                                              curvePublicKey: placed.clientCurvePublicKey)))
                } else {
                    done(.failure(.malformed("a placement answer without an edge")))
                }
            case .failure:
                ask(order, index + 1, request, done)
            }
        }
    }
}

/// An engine event in brief, for a log line: what happened and to which channel and user.
struct EngineEventSummary: Sendable, CustomStringConvertible {
    /// The channel it is about, if any.
    let channel: String?
    /// The event's name and details.
    let what: String

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

    var description: String { "\(channel ?? "-") \(what)" }
}
