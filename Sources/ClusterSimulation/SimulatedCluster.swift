import Foundation
import Logging
import NodeRuntime
import Rooms
import RoomStore
import Routing
import ShowroomWire
import SwiftProtobuf
import CallSignal
import Coordinator

/// A channel event as a coordinator published it.
struct PublishedEvent: Equatable {
    let coordinator: String
    let channel: String
    let series: Int64
    let sequence: UInt64
    /// What happened, to tell two events under one number apart.
    let what: String
}

/// The server roles of a run on the simulated network: coordinators (each with a database that
/// outlives its process), call-signal nodes, and fake edges that report channel activities to the
/// channel's owner as an edge does, sending again until the report is taken.
final class SimulatedCluster {
    let network: SimulatedNetwork
    private(set) var coordinatorIDs: [String] = []
    private(set) var callSignalIDs: [String] = []
    private(set) var edgeIDs: [String] = []
    /// Every channel event every coordinator published, in order.
    var published: [PublishedEvent] = []
    private let logger = Logger(label: "simulation") { _ in SwiftLogNoOpLogHandler() }
    private(set) var coordinators: [String: InProcessCoordinator] = [:]
    private var stores: [String: RoomStore] = [:]
    private var callSignals: [String: InProcessCallSignal] = [:]
    /// Where each process's random numbers come from: a child per node and incarnation.
    private let rng: SimulationRNG
    /// Rules the coordinators break on purpose.
    private let faults: DeliberateFaults
    /// When the last partition healed or the last dead process came back.
    private(set) var lastFaultEndedMs: Int64 = 0
    /// Each fake edge's activities not yet taken, in order.
    private var edgeOutboxes: [String: [RoomChannelActivity]] = [:]
    private var edgeNumbers: [String: UInt64] = [:]

    init(network: SimulatedNetwork, knobs: SimulationKnobs, rng: SimulationRNG, faults: DeliberateFaults = []) throws {
        self.network = network
        self.rng = rng
        self.faults = faults
        coordinatorIDs = (1...knobs.coordinators).map { "coord-\($0)" }
        callSignalIDs = (1...knobs.callSignals).map { "signal-\($0)" }
        edgeIDs = (1...knobs.edges).map { "edge-\($0)" }
        for id in coordinatorIDs { try startCoordinator(network.add(id, role: .coordinator)) }
        for id in callSignalIDs { startCallSignal(network.add(id, role: .callsignal)) }
        for id in edgeIDs { startEdge(network.add(id, role: .edge)) }
        // Every node learns the members it starts with, as the membership's first round tells it.
        for id in network.order { for observer in network.nodes[id]!.membershipObservers { observer() } }
    }

    private func configuration(_ role: NodeRole, _ id: String) -> NodeConfiguration {
        var configuration = NodeConfiguration(role: role, nodeID: id)
        configuration.appID = SimulationApp.appID
        configuration.appCertificate = SimulationApp.certificate
        return configuration
    }

    /// The random source of `node`'s current process.
    private func random(of node: SimulatedNode) -> SimulationRNG {
        rng.child("\(node.nodeID)#\(node.incarnation)")
    }

    private func startCoordinator(_ node: SimulatedNode) throws {
        let id = node.nodeID
        let store = try stores[id] ?? RoomStore.inMemory()
        stores[id] = store
        let coordinator = try InProcessCoordinator(
            node: node, configuration: configuration(.coordinator, id), store: store, random: random(of: node),
            faults: faults, logger: logger
        ) { [unowned self] _, kind, body in
            guard kind == .channelEvent, let event = try? RoomChannelEvent(serializedBytes: body) else { return }
            published.append(PublishedEvent(coordinator: id, channel: event.channel, series: event.series,
                                            sequence: event.sequence,
                                            what: "\(event.type) uid=\(event.uid) at=\(event.atMs)"))
        }
        coordinator.install()
        coordinators[id] = coordinator
    }

    private func startCallSignal(_ node: SimulatedNode) {
        let callSignal = InProcessCallSignal(node: node, configuration: configuration(.callsignal, node.nodeID),
                                             random: random(of: node), logger: logger)
        callSignal.install()
        callSignals[node.nodeID] = callSignal
    }

    /// Kills `id`'s process: its memory goes; a coordinator's database stays with every write
    /// it made (a simulated coordinator writes inline).
    func kill(_ id: String) {
        coordinators[id] = nil
        callSignals[id] = nil
        network.kill(id)
    }

    /// Starts `id` again; with `diskLost`, a coordinator comes back with an empty database.
    func restart(_ id: String, diskLost: Bool) throws {
        let node = network.restart(id)
        if diskLost { stores[id] = nil }
        switch node.role {
        case .coordinator: try startCoordinator(node)
        case .callsignal: startCallSignal(node)
        default: startEdge(node)
        }
        // It learned the members from its seeds as it joined.
        for observer in node.membershipObservers where node.isCurrent { observer() }
    }

    /// Runs `end` (a heal, a restart) after `delayMs`, and notes when.
    func faultEnded(after delayMs: Int64, _ end: @escaping () -> Void) {
        network.scheduler.after(delayMs) { [unowned self] in
            end()
            lastFaultEndedMs = network.now
        }
    }

    /// The room as coordinator `id` holds it.
    func room(_ roomID: String, at id: String) -> RoomRoom? {
        coordinators[id]?.room(roomID)
    }

    /// Call-signal node `id`'s process, while it runs.
    func callSignal(_ id: String) -> InProcessCallSignal? { callSignals[id] }

    /// The chat messages of a room as coordinator `id` holds them.
    func messages(in roomID: String, at id: String) -> [RoomChatMessage] {
        coordinators[id]?.messages(in: roomID) ?? []
    }

    // MARK: Fake edges

    private func startEdge(_ node: SimulatedNode) {
        let id = node.nodeID
        node.serve(.nodeInfo) { _, respond in respond(.success(WireNodeInfo())) }
        node.serve(.edgeBans) { _, respond in respond(.success(RoomEdgeBansResponse())) }
        node.serve(.edgeStage) { _, respond in respond(.success(RoomEdgeStageResponse())) }
        node.scheduleRepeating(every: .milliseconds(500)) { [unowned self, unowned node] in pumpEdge(node) }
        // A new run of the edge numbers its activities afresh, under a new origin.
        edgeNumbers[id] = 0
        edgeOutboxes[id] = []
    }

    /// Edge `id` saw `uid` join or leave `channel`: it reports it to the channel's owner.
    func edgeActivity(_ id: String, joined: Bool, channel: String, uid: UInt32) {
        guard let node = network.nodes[id], node.alive else { return }
        edgeNumbers[id, default: 0] += 1
        edgeOutboxes[id, default: []].append(RoomChannelActivity.with {
            $0.type = joined ? .audienceJoined : .audienceLeft
            $0.channel = channel
            $0.uid = uid
            $0.atMs = node.clock.nowMs()
            $0.origin = "\(id)#\(node.incarnation)"
            $0.originSequence = edgeNumbers[id]!
        })
        pumpEdge(node)
    }

    private func pumpEdge(_ node: SimulatedNode) {
        guard node.isCurrent, let pending = edgeOutboxes[node.nodeID], let first = pending.first else { return }
        let coordinators = node.membersOnLoop.filter { $0.state == .alive && $0.metadata.role == NodeRole.coordinator.rawValue }
        let ring = OwnerRing(.coordinator, memberIDs: coordinators.map(\.id.rawValue))
        guard let owner = ring.owner(of: first.channel) else { return }
        // One channel's activities at a time, in order, to that channel's owner.
        let batch = Array(pending.prefix { $0.channel == first.channel }.prefix(16))
        let report = RoomEdgeChannelReport.with {
            $0.edgeID = node.nodeID
            $0.activities = batch
        }
        node.send(.edgeChannelReport, body: report, to: SimulatedNetwork.endpoint(owner), timeout: .seconds(1)) {
            [unowned self, unowned node] result in
            guard case .success(let answer) = result, answer.failure == nil, node.isCurrent else { return }
            let taken = Set(batch.map(\.originSequence))
            edgeOutboxes[node.nodeID]?.removeAll { taken.contains($0.originSequence) }
        }
    }
}

/// The app a simulated cluster serves.
enum SimulationApp {
    static let appID = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"
}
