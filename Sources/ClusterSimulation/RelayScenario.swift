import Coordinator
import Edge
import EdgeProtocol
import EdgeServer
import Foundation
import Logging
import NodeRuntime
import Ownership
import RoomStore
import Routing
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

/// One channel at internet scale on the simulated network and clock: coordinators, real edges
/// (``InProcessEdge``, linked through an ``InProcessEdgeFabric`` so relays run), one broadcaster
/// publishing opaque video frames and a crowd of viewers that join as the SDK does (placement
/// from the channel's owner coordinator, a session, a join as audience, following a redirect).
/// The coordinators spread the audience over the edges past ``Settings/threshold`` viewers per
/// edge, so every edge but the origin relays the channel. Then one relay edge dies, and its
/// viewers rejoin elsewhere as the SDK does when its connection drops.
///
/// What it measures: the origin's egress (one copy per relay link, not per viewer), how long the
/// placement takes to settle, and who noticed the relay's death and how long each took to get
/// frames again. Deterministic for its settings: same settings, same figures and digest.
public struct RelayScenario {
    /// The size and pace of the run.
    public struct Settings: Sendable, Equatable {
        /// Where every random number of the run comes from.
        public var seed: UInt64 = 1
        /// Edges (the origin among them).
        public var edges = 100
        /// Viewers of the channel.
        public var viewers = 100_000
        /// Room-coordinators.
        public var coordinators = 3
        /// Video frames per second.
        public var fps = 1
        /// A keyframe every this many frames.
        public var keyframeEvery = 4
        /// Payload bytes of a keyframe and of another frame.
        public var keyframeBytes = 4_000
        public var deltaBytes = 1_000
        /// The viewers' joins are spread over this long.
        public var joinWindowMs = 10_000
        /// Viewers per edge before the next edge relays; nil: the viewers over the edges, so every
        /// edge takes its share.
        public var relayThreshold: Int?
        /// One-way delay between a client and an edge, and between two edges.
        public var clientDelayMs = 10
        public var linkDelayMs = 2
        /// How long the origin's egress is measured once the placement settled.
        public var measureMs = 10_000
        /// How long the run goes on after the relay's death.
        public var afterKillMs = 10_000
        /// The longest picture gap after an edge's death that the cluster promises (the evening's
        /// `show_plays` after a SIGKILL).
        public var failoverGoalMs = 2_000

        /// The defaults: the issue's 100 edges and 100,000 viewers.
        public init() {}

        /// Viewers an edge takes before the next edge of the channel does.
        public var threshold: Int { relayThreshold ?? max(1, (viewers + edges - 1) / max(edges, 1)) }
    }

    /// What a run measured.
    public struct Outcome: Sendable {
        public let settings: Settings
        /// The origin edge (where the broadcaster publishes).
        public let origin: String
        /// Edges hosting the channel when the placement settled: the origin and its relays.
        public let hostingEdges: Int
        public let relays: Int
        /// Viewers on the origin itself.
        public let originViewers: Int
        /// Frames the broadcaster published while the egress was measured.
        public let framesPublished: Int
        /// What the origin sent over links to its relays, per second, and per published frame.
        public let originLinkFramesPerSecond: Double
        public let originLinkBytesPerSecond: Double
        public let copiesPerFrame: Double
        /// What the origin sent to its own viewers, per second.
        public let originLocalFramesPerSecond: Double
        public let originLocalBytesPerSecond: Double
        /// From the first join until every viewer received frames and the hosting edges stopped
        /// changing (nil: it did not settle).
        public let settledMs: Int64?
        /// From the first join until every edge hosted or relayed the channel (nil: not all did).
        public let everyEdgeHostingMs: Int64?
        /// Join to first frame, over the viewers.
        public let firstFrameMs: Percentiles
        /// The relay edge killed and its viewers then.
        public let killedEdge: String
        public let killedViewers: Int
        /// Of its viewers, those that missed a frame (the rest got the frames they missed from
        /// their new edge's GOP cache).
        public let killedViewersMissingFrames: Int
        /// Viewers on other edges, receiving when the relay died, that noticed: a frame skipped,
        /// or no frame for two intervals.
        public let noticedElsewhere: Int
        /// Viewers on other edges not receiving when the relay died (still joining).
        public let notReceivingAtKill: Int
        /// Of the killed relay's viewers, those receiving frames again by the end.
        public let back: Int
        /// From the relay's death to each of its viewers' first frame on its new edge.
        public let rejoinMs: Percentiles
        /// Of its viewers, those back within ``Settings/failoverGoalMs``.
        public let backWithinGoal: Int
        /// Events in the log, simulated time, and the log's digest.
        public let events: Int
        public let simulatedMs: Int64
        public let digest: String
    }

    /// p50, p99 and the maximum of a set of durations in milliseconds (0 when empty).
    public struct Percentiles: Sendable, Equatable {
        public let count: Int
        public let p50: Int64
        public let p99: Int64
        public let max: Int64

        init(_ values: [Int64]) {
            let sorted = values.sorted()
            count = sorted.count
            func at(_ q: Double) -> Int64 {
                guard !sorted.isEmpty else { return 0 }
                return sorted[min(sorted.count - 1, Swift.max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
            }
            p50 = at(0.5)
            p99 = at(0.99)
            self.max = sorted.last ?? 0
        }
    }

    public let settings: Settings

    public init(settings: Settings) {
        self.settings = settings
    }

    /// Runs the scenario.
    public func run() throws -> Outcome {
        try RelayRun(settings).run()
    }
}

/// A client of the scenario: the broadcaster or a viewer, doing what the SDK does with the edges.
private final class RelayClient {
    enum Phase { case idle, placing, opening, joining, joined }

    let uid: UInt32
    let broadcaster: Bool
    var phase = Phase.idle
    /// The edge (index) and connection now.
    var edge = -1
    var connection: InProcessEdgeClient?
    var nextRequestID: UInt64 = 1
    /// The request whose answer moves the client on (heartbeats are answered too, and ignored).
    var awaited: UInt64 = 0
    /// Which coordinator a placement asks, in ring order from the owner.
    var coordinatorTry = 0
    var joinStartedMs: Int64 = 0
    var firstFrameMs: Int64?
    var lastSequence: Int64 = -1
    var lastFrameMs: Int64 = 0
    /// When its edge died under it, and its first frame after that.
    var lostEdgeAtMs: Int64?
    var backAtMs: Int64?
    /// A frame skipped, or a silence, after the relay's death.
    var sawGap = false
    /// Whether it received frames when the relay died.
    var receivingAtKill = false

    init(uid: UInt32, broadcaster: Bool) {
        self.uid = uid
        self.broadcaster = broadcaster
    }
}

/// One run of ``RelayScenario``.
private final class RelayRun {
    static let channel = "show"
    static let hostUID: UInt32 = 1

    let settings: RelayScenario.Settings
    let scheduler: SimulationScheduler
    let network: SimulatedNetwork
    let fabric: InProcessEdgeFabric
    let rng: SimulationRNG
    private var clients: SimulationRNG
    private let logger = Logger(label: "relay-scenario") { _ in SwiftLogNoOpLogHandler() }
    private(set) var coordinatorIDs: [String] = []
    private var coordinators: [InProcessCoordinator] = []
    private(set) var edgeIDs: [String] = []
    private var endpoints: [String] = []
    private var edgeIndex: [String: Int] = [:]
    private var edges: [InProcessEdge] = []
    private var host: RelayClient!
    private var viewers: [RelayClient] = []
    private var receiving = 0
    /// Frames and payload bytes the viewers of each edge received.
    private var edgeFramesOut: [Int] = []
    private var edgeBytesOut: [Int] = []
    private var framesPublished = 0
    private var forceKeyframe = false
    private var killedAtMs: Int64?
    private let viewerToken: String
    private let hostToken: String

    init(_ settings: RelayScenario.Settings) throws {
        self.settings = settings
        rng = SimulationRNG(seed: settings.seed)
        clients = rng.child("clients")
        scheduler = SimulationScheduler(startMs: Simulation.startMs)
        let knobs = SimulationKnobs(
            coordinators: settings.coordinators, callSignals: 0, edges: settings.edges, delayMinMs: 1, delayMeanMs: 2,
            lossPerMille: 0, duplicatePerMille: 0, reorderPerMille: 0, pathCapacity: 1_000_000,
            detectionMinMs: 1_000, detectionMaxMs: 2_000, clockSkewMaxMs: 0, steps: 0, operationMeanMs: 0,
            faultMeanMs: 0, faultMaxDurationMs: 0, partitionPerMille: 0, quickRestartPerMille: 0, diskLossPerMille: 0,
            livenessMs: 0)
        var log = SimulationEventLog(keepLines: false)
        log.record(scheduler.now, "relay-scenario seed=\(settings.seed) \(settings)")
        network = SimulatedNetwork(scheduler: scheduler, log: log, rng: rng.child("network"), knobs: knobs)
        let delay = Int64(settings.linkDelayMs)
        fabric = InProcessEdgeFabric { [scheduler] action in scheduler.after(delay, action) }
        // Tokens as a business server mints them, dated by the simulated clock.
        let issued = UInt32(Simulation.startMs / 1000)
        viewerToken = try RTCTokenBuilder.buildToken(
            appID: SimulationApp.appID, appCertificate: SimulationApp.certificate, channelName: Self.channel, uid: 0,
            role: .subscriber, tokenExpire: 24 * 3600, issueTs: issued, salt: 1)
        hostToken = try RTCTokenBuilder.buildToken(
            appID: SimulationApp.appID, appCertificate: SimulationApp.certificate, channelName: Self.channel, uid: Self.hostUID,
            role: .publisher, tokenExpire: 24 * 3600, issueTs: issued, salt: 2)
        try start()
    }

    private var now: Int64 { scheduler.now }

    private func configuration(_ role: NodeRole, _ id: String) -> NodeConfiguration {
        var configuration = NodeConfiguration(role: role, nodeID: id)
        configuration.appID = SimulationApp.appID
        configuration.appCertificate = SimulationApp.certificate
        return configuration
    }

    private func start() throws {
        coordinatorIDs = (1...settings.coordinators).map { "coord-\($0)" }
        edgeIDs = (1...settings.edges).map { "edge-\($0)" }
        var coordinatorSettings = CoordinatorSettings()
        coordinatorSettings.relayThreshold = settings.threshold
        for id in coordinatorIDs {
            let node = network.add(id, role: .coordinator)
            let coordinator = try InProcessCoordinator(
                node: node, configuration: configuration(.coordinator, id), settings: coordinatorSettings,
                store: try RoomStore.inMemory(), random: rng.child("\(id)#1"), logger: logger) { _, _, _ in }
            coordinator.install()
            coordinators.append(coordinator)
        }
        for (index, id) in edgeIDs.enumerated() {
            let node = network.add(id, role: .edge)
            // The client endpoint the membership advertises, which coordinators name in answers.
            let endpoint = node.membersOnLoop.first { $0.id.rawValue == id }!.metadata.clientEndpoint
            var random = rng.child("\(id)#1")
            let edge = InProcessEdge(
                configuration: EdgeServerConfiguration(appID: SimulationApp.appID, appCertificate: SimulationApp.certificate),
                node: node, random: { random.next() }, fabric: fabric, endpoint: endpoint, logger: logger)
            edges.append(edge)
            endpoints.append(endpoint)
            edgeIndex[endpoint] = index
        }
        edgeFramesOut = Array(repeating: 0, count: edges.count)
        edgeBytesOut = Array(repeating: 0, count: edges.count)
        for id in network.order { for observer in network.nodes[id]!.membershipObservers { observer() } }
        host = RelayClient(uid: Self.hostUID, broadcaster: true)
        viewers = (0..<settings.viewers).map { RelayClient(uid: UInt32(100_000 + $0), broadcaster: false) }
    }

    // MARK: - The run

    func run() throws -> RelayScenario.Outcome {
        let start = now
        scheduler.schedule(at: start + 1_000) { [self] in place(host) }
        let interval = Int64(1000 / max(settings.fps, 1))
        let firstJoin = start + 3_000
        // Joins spread evenly over the window, each at a drawn moment of its slot.
        let slot = max(1.0, Double(settings.joinWindowMs) / Double(max(settings.viewers, 1)))
        for (index, viewer) in viewers.enumerated() {
            let at = firstJoin + Int64(Double(index) * slot) + Int64(clients.int(in: 0...max(0, Int(slot) - 1)))
            scheduler.schedule(at: at) { [self] in place(viewer) }
        }
        network.record("viewers join from \(firstJoin) over \(settings.joinWindowMs)ms")

        // Until every viewer receives frames and the edges hosting the channel stop changing.
        var hosting = 0
        var hostingChangedMs = firstJoin
        var everyEdgeHostingMs: Int64?
        var settledMs: Int64?
        var t = firstJoin
        let deadline = firstJoin + Int64(settings.joinWindowMs) + 60_000
        while t < deadline {
            t += 100
            guard scheduler.run(until: t, maxEvents: 100_000_000) else { break }
            let count = edges.indices.filter { edges[$0].channelNames.contains(Self.channel) }.count
            if count != hosting {
                hosting = count
                hostingChangedMs = t
            }
            if everyEdgeHostingMs == nil, count == edges.count { everyEdgeHostingMs = t - firstJoin }
            if receiving == viewers.count, t - hostingChangedMs >= 2 * interval {
                settledMs = max(hostingChangedMs, viewers.compactMap(\.firstFrameMs).max() ?? t) - firstJoin
                break
            }
        }
        network.record("settled=\(settledMs.map(String.init) ?? "no") hosting=\(hosting)")
        let originIndex = host.edge
        let relaying = edges.indices.filter { edges[$0].relayedChannels[Self.channel] != nil }
        let originViewers = viewers.filter { $0.edge == originIndex && $0.phase == .joined }.count

        // The origin's egress, over a steady window.
        let measureStart = now
        let linkBefore = originIndex >= 0 ? fabric.egress(of: endpoints[originIndex]) : InProcessEdgeFabric.Egress()
        let localBefore = originIndex >= 0 ? (edgeFramesOut[originIndex], edgeBytesOut[originIndex]) : (0, 0)
        let publishedBefore = framesPublished
        scheduler.run(until: measureStart + Int64(settings.measureMs), maxEvents: 100_000_000)
        let seconds = Double(settings.measureMs) / 1000
        let linkAfter = originIndex >= 0 ? fabric.egress(of: endpoints[originIndex]) : InProcessEdgeFabric.Egress()
        let localAfter = originIndex >= 0 ? (edgeFramesOut[originIndex], edgeBytesOut[originIndex]) : (0, 0)
        let published = framesPublished - publishedBefore
        let linkFrames = linkAfter.frames - linkBefore.frames

        // A relay dies: the one with the lowest id.
        let victim = relaying.first { $0 != originIndex }
        var killedViewers: [RelayClient] = []
        if let victim {
            killedViewers = viewers.filter { $0.edge == victim && $0.connection != nil }
            kill(victim)
        }
        let end = now + Int64(settings.afterKillMs)
        scheduler.run(until: end, maxEvents: 100_000_000)

        let killedSet = Set(killedViewers.map { ObjectIdentifier($0) })
        var noticedElsewhere = 0
        var notReceivingAtKill = 0
        for viewer in viewers where !killedSet.contains(ObjectIdentifier(viewer)) {
            // One not receiving when the relay died (still joining) had nothing to notice.
            guard viewer.receivingAtKill else {
                notReceivingAtKill += 1
                continue
            }
            // Two frame intervals without a frame is a gap too.
            if viewer.sawGap || end - viewer.lastFrameMs > 2 * interval { noticedElsewhere += 1 }
        }

        let killedAt = killedAtMs ?? end
        let rejoin = killedViewers.compactMap { viewer in viewer.backAtMs.map { $0 - killedAt } }
        let log = network.log
        return RelayScenario.Outcome(
            settings: settings, origin: originIndex >= 0 ? edgeIDs[originIndex] : "",
            hostingEdges: hosting, relays: relaying.count, originViewers: originViewers, framesPublished: published,
            originLinkFramesPerSecond: Double(linkFrames) / seconds,
            originLinkBytesPerSecond: Double(linkAfter.bytes - linkBefore.bytes) / seconds,
            copiesPerFrame: published == 0 ? 0 : Double(linkFrames) / Double(published),
            originLocalFramesPerSecond: Double(localAfter.0 - localBefore.0) / seconds,
            originLocalBytesPerSecond: Double(localAfter.1 - localBefore.1) / seconds,
            settledMs: settledMs, everyEdgeHostingMs: everyEdgeHostingMs,
            firstFrameMs: RelayScenario.Percentiles(viewers.compactMap { viewer in
                viewer.firstFrameMs.map { $0 - viewer.joinStartedMs } }),
            killedEdge: victim.map { edgeIDs[$0] } ?? "", killedViewers: killedViewers.count,
            killedViewersMissingFrames: killedViewers.filter(\.sawGap).count, noticedElsewhere: noticedElsewhere,
            notReceivingAtKill: notReceivingAtKill,
            back: rejoin.count, rejoinMs: RelayScenario.Percentiles(rejoin),
            backWithinGoal: rejoin.filter { $0 <= Int64(settings.failoverGoalMs) }.count,
            events: log.count, simulatedMs: now - Simulation.startMs, digest: log.digest)
    }

    /// Kills edge `index` as SIGKILL does: the process, its links and its clients' connections.
    private func kill(_ index: Int) {
        killedAtMs = now
        let interval = Int64(1000 / max(settings.fps, 1))
        for viewer in viewers { viewer.receivingAtKill = viewer.firstFrameMs != nil && now - viewer.lastFrameMs <= 2 * interval }
        network.record("kill relay \(edgeIDs[index])")
        network.kill(edgeIDs[index])
        fabric.kill(endpoints[index])
        for viewer in viewers where viewer.edge == index && viewer.connection != nil {
            let connection = viewer.connection
            // The SDK sees the TCP connection drop once it reaches it, and rejoins elsewhere.
            scheduler.after(Int64(settings.clientDelayMs)) { [self] in
                guard viewer.connection === connection else { return }
                viewer.lostEdgeAtMs = killedAtMs
                viewer.connection = nil
                place(viewer, avoiding: edgeIDs[index])
            }
        }
    }

    // MARK: - Clients, as the SDK does it

    /// Asks the channel's owner coordinator (then the next) where to join.
    private func place(_ client: RelayClient, avoiding unreachable: String = "") {
        client.phase = .placing
        if client.joinStartedMs == 0 { client.joinStartedMs = now }
        var body = RoomPlaceChannelRequest()
        body.channel = Self.channel
        body.uid = client.uid
        body.token = client.broadcaster ? hostToken : viewerToken
        body.audience = !client.broadcaster
        body.unreachableEdge = unreachable
        let ring = OwnerRing(.coordinator, memberIDs: coordinatorIDs)
        let owner = ring.owner(of: Self.channel) ?? coordinatorIDs[0]
        let ordered = [owner] + coordinatorIDs.filter { $0 != owner }
        let coordinator = ordered[client.coordinatorTry % ordered.count]
        guard let request = try? WireEnvelope(request: .channelPlace, id: network.nextRequestID(), body: body) else { return }
        network.send(request, from: nil, to: coordinator, timeoutMs: 3_000) { [self] result in
            guard client.phase == .placing else { return }
            if case .success(let answer) = result, answer.failure == nil,
               let placed = try? answer.decodeBody(RoomPlaceChannelResponse.self), !placed.edgeID.isEmpty {
                return connect(client, to: placed.clientEndpoint, edgeID: placed.edgeID)
            }
            client.coordinatorTry += 1
            retry(client, avoiding: unreachable)
        }
    }

    private func retry(_ client: RelayClient, avoiding unreachable: String = "") {
        client.phase = .placing
        // The SDK's first rejoin wait.
        scheduler.after(250) { [self] in
            guard client.phase == .placing else { return }
            place(client, avoiding: unreachable)
        }
    }

    private func connect(_ client: RelayClient, to endpoint: String, edgeID: String) {
        guard let index = edgeIndex[endpoint], fabric.isAlive(endpoint) else { return retry(client, avoiding: edgeID) }
        client.connection?.disconnect()
        let connection = edges[index].connect()
        client.connection = connection
        client.edge = index
        client.phase = .opening
        connection.onReceive = { [unowned self, unowned client, unowned connection] frames in
            received(frames, by: client, on: connection)
        }
        send(client, .openSession(clientID: "\(client.broadcaster ? "host" : "viewer")-\(client.uid)", sdkVersion: "relay-scenario"))
    }

    private func send(_ client: RelayClient, _ request: EdgeRequest) {
        guard let connection = client.connection else { return }
        let id = client.nextRequestID
        client.nextRequestID += 1
        if case .heartbeat = request {} else { client.awaited = id }
        guard let bytes = try? EdgeCodec.envelope(request: request, id: id).serializedBytes() as [UInt8] else { return }
        let endpoint = endpoints[client.edge]
        scheduler.after(Int64(settings.clientDelayMs)) { [fabric] in
            guard connection.isConnected, fabric.isAlive(endpoint) else { return }
            connection.send([bytes])
        }
    }

    /// Heartbeats at the edge's interval while the connection is the client's.
    private func heartbeat(_ client: RelayClient, on connection: InProcessEdgeClient, every intervalMs: Int64) {
        scheduler.after(intervalMs) { [self] in
            guard client.connection === connection, connection.isConnected else { return }
            send(client, .heartbeat(clientTime: 0))
            heartbeat(client, on: connection, every: intervalMs)
        }
    }

    /// What an edge sent the client: frames are counted as they arrive; answers and the events
    /// that matter are handled a client delay later (never inside the edge's call).
    private func received(_ frames: [[UInt8]], by client: RelayClient, on connection: InProcessEdgeClient) {
        guard client.connection === connection else { return }
        if frames.count == 2 { return frameArrived(frames[1], at: now + Int64(settings.clientDelayMs), by: client) }
        guard frames.count == 1, let envelope = try? WireEnvelope.decode(frame: frames[0]) else { return }
        if envelope.isResponse {
            guard envelope.requestID == client.awaited else { return }
            scheduler.after(Int64(settings.clientDelayMs)) { [self] in
                guard client.connection === connection else { return }
                answered(envelope, client)
            }
        } else if envelope.kind == .keyframeRequest, client.broadcaster {
            forceKeyframe = true
        } else if let event = try? EdgeCodec.event(from: envelope) {
            switch event {
            case .sessionClosed, .connectionClosed:
                scheduler.after(Int64(settings.clientDelayMs)) { [self] in
                    guard client.connection === connection else { return }
                    client.connection = nil
                    connection.disconnect()
                    retry(client)
                }
            default: break
            }
        }
    }

    private func answered(_ envelope: WireEnvelope, _ client: RelayClient) {
        guard let reply = try? EdgeCodec.reply(from: envelope) else { return retry(client) }
        switch (client.phase, reply.result) {
        case (.opening, .success(.sessionOpened(_, let interval, _, _))):
            client.phase = .joining
            if let connection = client.connection {
                heartbeat(client, on: connection, every: max(100, Int64(interval.components.seconds * 1000
                    + interval.components.attoseconds / 1_000_000_000_000_000)))
            }
            let role: ClientRole = client.broadcaster ? .broadcaster : .audience
            send(client, .join(channel: Self.channel, uid: client.uid, token: client.broadcaster ? hostToken : viewerToken,
                               role: role, options: .defaults(for: role)))
        case (.joining, .success):
            client.phase = .joined
            client.coordinatorTry = 0
            if client.broadcaster { publish(sequence: 0) }
        case (.joining, .failure(let error)) where error.code == .channelElsewhere && error.redirect != nil:
            connect(client, to: error.redirect!.clientEndpoint, edgeID: error.redirect!.edgeID)
        default:
            client.connection?.disconnect()
            client.connection = nil
            retry(client)
        }
    }

    private func frameArrived(_ payload: [UInt8], at arrival: Int64, by client: RelayClient) {
        guard payload.count >= 4 else { return }
        let sequence = Int64(UInt32(payload[0]) << 24 | UInt32(payload[1]) << 16 | UInt32(payload[2]) << 8 | UInt32(payload[3]))
        edgeFramesOut[client.edge] += 1
        edgeBytesOut[client.edge] += payload.count
        if client.firstFrameMs == nil {
            client.firstFrameMs = arrival
            receiving += 1
        }
        if client.lostEdgeAtMs != nil, client.backAtMs == nil { client.backAtMs = arrival }
        if let killed = killedAtMs, arrival > killed {
            let interval = Int64(1000 / max(settings.fps, 1))
            if sequence > client.lastSequence + 1 || arrival - client.lastFrameMs > 2 * interval { client.sawGap = true }
        }
        if sequence > client.lastSequence {
            client.lastSequence = sequence
            client.lastFrameMs = arrival
        }
    }

    // MARK: - The broadcaster

    /// Publishes frame `sequence`, and the next one a frame interval later, while joined.
    private func publish(sequence: UInt32) {
        guard host.phase == .joined, let connection = host.connection else { return }
        let keyframe = sequence % UInt32(max(settings.keyframeEvery, 1)) == 0 || forceKeyframe
        forceKeyframe = false
        var payload = [UInt8](repeating: 0x5A, count: max(4, keyframe ? settings.keyframeBytes : settings.deltaBytes))
        payload[0] = UInt8(truncatingIfNeeded: sequence >> 24)
        payload[1] = UInt8(truncatingIfNeeded: sequence >> 16)
        payload[2] = UInt8(truncatingIfNeeded: sequence >> 8)
        payload[3] = UInt8(truncatingIfNeeded: sequence)
        var header = WireMediaHeader()
        header.channel = Self.channel
        header.publisherUid = Self.hostUID
        header.track = .video
        header.codec = .vp8
        header.sequence = sequence
        header.keyframe = keyframe
        header.payloadSize = UInt32(payload.count)
        var envelope = WireEnvelope()
        envelope.kind = .mediaFrame
        envelope.body = (try? header.serializedData()) ?? Data()
        if let bytes = try? envelope.serializedBytes() as [UInt8] {
            let endpoint = endpoints[host.edge]
            scheduler.after(Int64(settings.clientDelayMs)) { [self] in
                guard connection.isConnected, fabric.isAlive(endpoint) else { return }
                // Counted as the origin takes it, in the same step as it sends the copies.
                framesPublished += 1
                connection.send([bytes, payload])
            }
        }
        scheduler.after(Int64(1000 / max(settings.fps, 1))) { [self] in
            guard host.connection === connection else { return }
            publish(sequence: sequence + 1)
        }
    }
}
