import Edge
import Foundation
import Logging
import NodeRuntime
import Recording
import Synchronization
import ShowroomWire
import ZeroMQ

/// An edge's client side: the ROUTER clients' sessions connect to, the channel plane behind it,
/// and the fan-out of media frames, on an event loop of its own so that media never delays the
/// node's gossip.
///
/// ```swift
/// let edge = try EdgeServer(configuration: .init(appID: id, appCertificate: cert), logger: logger)
/// print(edge.endpoint)  // tcp://127.0.0.1:PORT, for clients
/// ...
/// await edge.stop()
/// ```
public final class EdgeServer: Sendable {
    /// Where clients connect.
    public let endpoint: String
    /// The loop the client socket and the plane live on.
    public let loop: EventLoop
    private let shell: LoopBound<EdgeShell<RouterClientFace>>
    /// Writes the recordings, when the configuration names a directory.
    private let recordingWorker: RecordingWorker?
    /// Browsers' sessions, once ``startWebSocket(_:advertiseHost:)`` ran.
    private let webSockets = Mutex<WebSocketClients?>(nil)
    private let logger: Logger

    /// Binds the client endpoint and starts serving.
    ///
    /// - Parameters:
    ///   - configuration: The edge's settings.
    ///   - clock: The clock every decision of the edge reads (default: the system's).
    ///   - logger: Where the edge logs.
    /// - Throws: ``ShowroomError`` or `ZeroMQError` if the endpoint cannot be bound.
    public init(configuration: EdgeServerConfiguration, clock: WallClock = .system, logger: Logger) throws {
        try ZeroMQLibrary.requireSupported()
        self.logger = logger
        let context = try Context(ioThreads: 1)
        let loop = try EventLoop.start(name: "edge-clients", context: context)
        self.loop = loop
        do {
            let shell = try loop.submitAndWait { () throws -> LoopBound<EdgeShell<RouterClientFace>> in
                let face = try RouterClientFace(configuration: configuration, loop: loop, clock: clock, logger: logger)
                return LoopBound(EdgeShell(configuration: configuration, face: face, clock: clock, random: { .random(in: 0 ... .max) }, logger: logger),
                                 loop: loop)
            }
            self.shell = shell
            endpoint = try loop.submitAndWait { shell.value.face.endpoint }
            if let recording = configuration.recording {
                // The worker tells from its own thread; what it tells is carried out on the loop.
                let worker = RecordingWorker(maxQueuedBytes: recording.maxQueuedBytes, clock: { clock.nowMs() }, logger: logger) {
                    key, event in loop.execute { shell.value.recordingEvent(key, event) }
                }
                recordingWorker = worker
                try loop.submitAndWait { shell.value.recorder = EdgeRecorder(settings: recording, worker: worker) }
            } else {
                recordingWorker = nil
            }
        } catch {
            loop.shutdown()
            context.shutdown()
            throw error
        }
        logger.info("edge client endpoint bound", metadata: ["endpoint": "\(endpoint)"])
    }

    /// Calls `report` (on the edge's loop) with the hosted channel and connection counts whenever
    /// they change.
    public func onLoadChange(_ report: @escaping @Sendable (_ channels: Int, _ connections: Int) -> Void) {
        loop.execute { [shell] in shell.value.reportLoad = report }
    }

    /// Hands channel activities and summaries to `reports` from now on (on the edge's loop).
    func setCoordinatorReports(_ reports: CoordinatorReports) {
        loop.execute { [shell] in shell.value.coordinatorReports = reports }
    }

    /// The owner coordinator's answer to a channel claim (see ``CoordinatorReports/claim``).
    func claimAnswered(_ channel: String, _ outcome: ClaimOutcome) {
        loop.execute { [shell] in shell.value.claimAnswered(channel, outcome) }
    }

    /// A coordinator's answer to a forward destination's placement.
    func forwardPlaced(_ placement: ForwardPlacement, _ result: Result<ForwardEdge, ShowroomError>) {
        loop.execute { [shell] in shell.value.forwardPlaced(placement, result) }
    }

    /// Carries out a coordinator's `FORWARD_COMMAND`; `completion` runs on the edge's loop with
    /// the destinations after it.
    func forwardCommand(_ command: EdgeForwardCommand, completion: @escaping @Sendable (Result<[ForwardDestinationStatus], ShowroomError>) -> Void) {
        loop.execute { [shell] in
            completion(Result { () throws(ShowroomError) in try shell.value.forwardCommand(command) })
        }
    }

    /// The forwards this edge runs, sorted by source channel and uid.
    public func forwards() async throws -> [EdgeForwardedPublisher] {
        try await loop.submit { [shell] in shell.value.forwardedPublishers }
    }

    /// The forwards this edge runs; `completion` runs on the edge's loop.
    func forwards(completion: @escaping @Sendable ([EdgeForwardedPublisher]) -> Void) {
        loop.execute { [shell] in completion(shell.value.forwardedPublishers) }
    }

    /// Enforces bans from a room-coordinator; `completion` runs on the edge's loop with the number
    /// of connections closed, or `INVALID_ARGUMENT` for a malformed ban (nothing applied).
    func applyBans(_ bans: [RoomBan], completion: @escaping @Sendable (Result<Int, ShowroomError>) -> Void) {
        loop.execute { [shell] in
            completion(Result { () throws(ShowroomError) in try shell.value.applyBans(bans) })
        }
    }

    /// Who is in a channel on this edge; `completion` runs on the edge's loop.
    func channelUsers(_ request: RoomChannelUsersRequest, completion: @escaping @Sendable (Result<RoomChannelUsersResponse, ShowroomError>) -> Void) {
        loop.execute { [shell] in
            completion(Result { () throws(ShowroomError) in try shell.value.channelUsers(request) })
        }
    }

    /// Delivers a message from the business server in a channel; `completion` runs on the edge's loop.
    func channelData(_ request: RoomChannelDataRequest, completion: @escaping @Sendable (Result<RoomChannelDataResponse, ShowroomError>) -> Void) {
        loop.execute { [shell] in
            completion(Result { () throws(ShowroomError) in try shell.value.channelData(request) })
        }
    }

    /// Sends the connections of channels placed on other edges there, on the edge's loop.
    func channelsElsewhere(_ channels: [RoomChannelElsewhere]) {
        loop.execute { [shell] in shell.value.channelsElsewhere(channels) }
    }

    /// Applies the stages of rooms' channels on the edge's loop; `completion` gets how many
    /// broadcasters became audience.
    func applyStages(_ stages: [RoomStage], completion: @escaping @Sendable (Result<Int, ShowroomError>) -> Void) {
        loop.execute { [shell] in
            completion(Result { () throws(ShowroomError) in try shell.value.applyStages(stages) })
        }
    }

    /// Applies a coordinator's recording orders on the edge's loop; `completion` gets how many
    /// publishers are recorded.
    func applyRecordings(_ request: RoomEdgeRecordingsRequest, completion: @escaping @Sendable (Result<Int, ShowroomError>) -> Void) {
        loop.execute { [shell] in
            completion(Result { () throws(ShowroomError) in try shell.value.applyRecordings(request) })
        }
    }

    /// Finishes every recording (their files and reports), for a drain's end or a stop: waits
    /// until the worker has written them and the reports are held for the coordinators.
    public func finishRecordings() async {
        guard let worker = recordingWorker else { return }
        _ = try? await loop.submit { [shell] in
            let shell = shell.value
            if let recorder = shell.recorder { shell.carryOut(recorder.desk.stopAll(), recorder) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            worker.perform { continuation.resume() }
        }
        // The reports the worker posted before the barrier are on the loop now: one more hop holds them.
        _ = try? await loop.submit {}
    }

    /// The stages the edge enforces now.
    public func activeStages() async throws -> [ChannelStage] {
        try await loop.submit { [shell] in shell.value.plane.activeStages }
    }

    /// The bans the edge enforces now.
    public func activeBans() async throws -> [ChannelBan] {
        try await loop.submit { [shell] in shell.value.plane.activeBans }
    }

    /// Every hosted channel in brief, sorted by name, as reported to the room-coordinators.
    public func channelSummaries() async throws -> [ChannelSummary] {
        try await loop.submit { [shell] in shell.value.reportedSummaries() }
    }

    /// Hosts `channel` as a relay of `origin`, as a room-coordinator's claim answer with
    /// `relay_of_*` does: audience joins are admitted and the channel is pulled from the origin
    /// once the first viewer is in; broadcasting here is refused with `CHANNEL_ELSEWHERE`
    /// naming the origin. For an edge without coordinators (tools, tests).
    public func hostAsRelay(_ channel: String, of origin: RelayOrigin) async throws {
        try await loop.submit { [shell] in shell.value.hostRelay(channel, of: origin) }
    }

    /// The channels hosted as relays with their local viewers.
    public func relayedChannels() async throws -> [String: Int] {
        try await loop.submit { [shell] in
            Dictionary(uniqueKeysWithValues: shell.value.relays.channels.map { ($0, shell.value.relays.viewers(of: $0)) })
        }
    }

    /// The plane's counters.
    public func statistics() async throws -> EdgeStatistics {
        try await loop.submit { [shell] in shell.value.plane.statistics }
    }

    /// A hosted channel, or `nil` if nobody is connected to it.
    public func channel(_ name: String) async throws -> ChannelSnapshot? {
        try await loop.submit { [shell] in shell.value.plane.channel(name) }
    }

    /// The hosted channels, sorted by name.
    public func channelNames() async throws -> [String] {
        try await loop.submit { [shell] in shell.value.plane.channelNames }
    }

    /// Drains the edge (SIGTERM), make before break: refuses new joins, tells the coordinators and
    /// every client to move, and returns once every client session has left or said it moved out
    /// (a broadcaster stays joined until then) or `within` has passed; what is left is then
    /// closed, each client told to join again through the cluster.
    ///
    /// - Parameters:
    ///   - nodeID: The edge's id, named in what the clients are told.
    ///   - within: The longest the clients get to move.
    public func drain(nodeID: String, within: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [shell] in shell.value.beginDraining(nodeID: nodeID, within: within) { continuation.resume() } }
        }
    }

    /// Serves client sessions over WebSocket too (``WebSocketFraming``): the same protocol, plane
    /// and limits as the ZeroMQ client face, for pages in a browser.
    ///
    /// - Parameters:
    ///   - settings: Where (`listen`, not `off`), the pages' origins allowed, TLS files if any.
    ///   - advertiseHost: The host put in the returned address instead of the bound one.
    /// - Returns: `ws://HOST:PORT/v1/edge`, or `wss://` with TLS.
    /// - Throws: ``ShowroomError`` `invalidArgument` for an address or a TLS file that is not
    ///   usable, `unavailable` if the port cannot be bound.
    public func startWebSocket(_ settings: WebSocketSettings, advertiseHost: String? = nil) async throws -> String {
        let shell = self.shell
        let loop = self.loop
        // As on the ROUTER: up to max_message_bytes a message is answered (TOO_LARGE past it);
        // far past it the connection is closed unread.
        let closeBytes = try await loop.submit { shell.value.plane.settings.limits.connectionCloseBytes }
        let clients = WebSocketClients(
            settings: try .init(settings, path: WebSocketClients.path, maxMessageBytes: closeBytes),
            logger: logger,
            receive: { session, message in loop.execute { shell.value.receiveWebSocket(message, from: session) } },
            closed: { session in loop.execute { shell.value.webSocketClosed(session) } })
        try await loop.submit { shell.value.face.webSockets = clients }
        let endpoint = try await clients.start(advertiseHost: advertiseHost)
        webSockets.withLock { $0 = clients }
        logger.info("edge WebSocket endpoint listening", metadata: ["endpoint": "\(endpoint)"])
        return endpoint
    }

    /// Stops serving: closes the socket and ends the loop, without blocking the caller's thread.
    public func stop() async {
        await webSockets.withLock { $0 }?.stop()
        await finishRecordings()
        recordingWorker?.shutdown()
        let loop = self.loop
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                loop.shutdown()
                continuation.resume()
            }.start()
        }
    }

    /// Stops serving, blocking the calling thread (not for async code).
    public func shutdown() {
        recordingWorker?.shutdown()
        loop.shutdown()
    }
}

/// The edge as its node process runs it: ``EdgeServer`` started from the node's configuration, its
/// client endpoint announced in the membership and its load reported through the node; channel
/// activities and summaries reported to the room-coordinators (`EDGE_CHANNEL_REPORT`), their bans
/// enforced (`EDGE_BANS`, and `BAN_LIST` at start).
public final class EdgeRoleService: NodeRoleService {
    private let configuration: EdgeServerConfiguration
    private let webSocket: WebSocketSettings
    private let nodeID: String
    private let logger: Logger
    private let server = Mutex<EdgeServer?>(nil)
    private let link = Mutex<(node: Node, link: LoopBound<CoordinatorLink>)?>(nil)
    /// How long ``drain()`` waits for the coordinators to take the last activities.
    private let reportFlushTimeout: Duration = .seconds(2)

    /// Takes the edge's settings from the node's configuration (browsers' sessions where its
    /// ``NodeConfiguration/webSocket`` says) and where it writes recordings.
    ///
    /// - Throws: ``ShowroomError`` `invalidArgument` when the app id or certificate is missing.
    public init(configuration: NodeConfiguration, recording: EdgeRecordingSettings = EdgeRecordingSettings(),
                logger: Logger) throws(ShowroomError) {
        webSocket = configuration.webSocket
        guard let appID = configuration.appID, let appCertificate = configuration.appCertificate else {
            throw .invalidArgument(
                "an edge verifies join tokens: give it the app's id and certificate (appID and appCertificate in the configuration file, or --app-id and --app-certificate)")
        }
        var edge = EdgeServerConfiguration(
            clientBind: configuration.clientBind, advertiseHost: configuration.advertiseHost, appID: appID,
            appCertificate: appCertificate)
        try recording.validate()
        edge.recording = recording
        if configuration.clientEncryption == .curve {
            do {
                edge.clientCurveKey = try CurveKeyPair.generate()
            } catch {
                throw .invalidArgument("client encryption needs libzmq with CURVE: \(error)")
            }
        }
        self.configuration = edge
        nodeID = configuration.nodeID
        self.logger = logger
    }

    public func start() async throws -> RoleEndpoints {
        let edge = try EdgeServer(configuration: configuration, logger: logger)
        server.withLock { $0 = edge }
        var webSocketEndpoint = ""
        if webSocket.listen != "off" {
            webSocketEndpoint = try await edge.startWebSocket(webSocket, advertiseHost: configuration.advertiseHost)
        }
        return RoleEndpoints(client: edge.endpoint, clientCurvePublicKey: configuration.clientCurveKey?.publicKey ?? "",
                             webSocket: webSocketEndpoint)
    }

    public func attach(to node: Node) {
        guard let edge = server.withLock({ $0 }) else { return }
        edge.onLoadChange { channels, connections in node.updateLoad(channels: channels, connections: connections) }
        let logger = self.logger
        node.loop.execute { [self] in
            let started = CoordinatorLink.start(
                node: node, edge: EdgeOnNodeLoop(edge, nodeLoop: node.loop),
                run: String(UInt64.random(in: 0 ... .max), radix: 16), logger: logger)
            let bound = LoopBound(started, loop: node.loop)
            edge.setCoordinatorReports(EdgeOnNodeLoop.reports(to: bound, edgeLoop: edge.loop))
            link.withLock { $0 = (node, bound) }
        }
    }

    /// Drains the edge (its clients move elsewhere first, for at most the configured drain time),
    /// then gives the room-coordinators a moment to take the activities that caused (every user
    /// left, every channel destroyed).
    public func drain() async {
        await server.withLock { $0 }?.drain(nodeID: nodeID, within: configuration.drainTime)
        // Every client is gone: the recordings' last files are finished and reported with the rest.
        await server.withLock { $0 }?.finishRecordings()
        guard let (node, link) = link.withLock({ $0 }) else { return }
        let deadlineMs = node.clock.nowMs() + Int64(reportFlushTimeout.milliseconds)
        while node.clock.nowMs() < deadlineMs {
            guard let pending = try? await node.loop.submit({ link.value.pendingActivities }), pending > 0 else { return }
            try? await Task.sleep(for: .milliseconds(20))  // poll period while the last reports go out
        }
        logger.warning("stopping with channel activities the room-coordinators have not taken")
    }

    public func stop() async {
        await server.withLock { $0 }?.stop()
    }
}
