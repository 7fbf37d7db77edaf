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
import EdgeServer

/// A channel event as a coordinator published it.
struct PublishedEvent: Equatable {
    let coordinator: String
    let channel: String
    let series: Int64
    let sequence: UInt64
    /// What happened, to tell two events under one number apart.
    let what: String
    let type: RoomChannelEventType
    let uid: UInt32
}

/// A chat message as a coordinator published it in a room's notice.
struct PublishedChat: Equatable {
    let coordinator: String
    /// The room, and when it was made (a room made again under the same id numbers afresh).
    let room: String
    let sequence: UInt64
    /// Who sent what, to tell two messages under one number apart.
    let what: String
}

/// The server roles of a run on the simulated network: coordinators (each with a database that
/// outlives its process), call-signal nodes and edges (the real edge shell, ``InProcessEdge``,
/// whose clients are the run's SDK engines).
final class SimulatedCluster {
    let network: SimulatedNetwork
    private(set) var coordinatorIDs: [String] = []
    private(set) var callSignalIDs: [String] = []
    private(set) var edgeIDs: [String] = []
    /// Every channel event every coordinator published, in order.
    var published: [PublishedEvent] = []
    /// Every chat message every coordinator published, in order (not in the event log: the
    /// notices were never part of it, and seeds keep their digests).
    var publishedChat: [PublishedChat] = []
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
    /// The running edge processes, by node id.
    private(set) var edges: [String: InProcessEdge] = [:]
    /// Called with an edge's id and the channels it hosted when its process is killed.
    var onEdgeKilled: ((String, [String]) -> Void)?

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
            if kind == .roomNotice, let notice = try? RoomRoomNotice(serializedBytes: body), notice.kind == .messageAdded {
                publishedChat.append(PublishedChat(coordinator: id, room: "\(notice.roomID)@\(notice.room.createdAtMs)",
                                                   sequence: notice.message.sequence,
                                                   what: "uid=\(notice.message.uid) \"\(notice.message.text)\""))
            }
            guard kind == .channelEvent, let event = try? RoomChannelEvent(serializedBytes: body) else { return }
            network.record("published \(id) \(event.channel)/\(event.series)-\(event.sequence) \(event.type) uid=\(event.uid)")
            published.append(PublishedEvent(coordinator: id, channel: event.channel, series: event.series,
                                            sequence: event.sequence,
                                            what: "\(event.type) uid=\(event.uid) at=\(event.atMs)",
                                            type: event.type, uid: event.uid))
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
        if let edge = edges.removeValue(forKey: id) { onEdgeKilled?(id, edge.channelNames) }
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

    // MARK: Edges

    /// Starts an edge's process on `node`: the real edge shell and its link to the coordinators.
    private func startEdge(_ node: SimulatedNode) {
        var random = random(of: node)
        var configuration = EdgeServerConfiguration(appID: SimulationApp.appID, appCertificate: SimulationApp.certificate)
        // The plane's timers at a tenth of a second: what they time (heartbeats, token warnings)
        // counts in seconds, and a run's events stay few.
        configuration.tickInterval = .milliseconds(100)
        edges[node.nodeID] = InProcessEdge(configuration: configuration, node: node, random: { random.next() }, logger: logger)
    }
}

/// The app a simulated cluster serves.
enum SimulationApp {
    static let appID = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"
}
