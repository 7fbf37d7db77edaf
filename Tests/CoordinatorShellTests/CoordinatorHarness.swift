import Foundation
import Logging
import NodeRuntime
import Rooms
import RoomStore
import Routing
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import SwiftProtobuf
@testable import Coordinator

/// What a coordinator published on its events endpoint, decoded as it was sent.
final class RecordingSink: EventSink {
    private(set) var published: [(topic: String, kind: WireMessageKind, body: Data)] = []

    func publish(topic: String, kind: WireMessageKind, body: some SwiftProtobuf.Message) {
        published.append((topic, kind, (try? body.serializedData()) ?? Data()))
    }

    /// The channel events published so far, in order.
    var channelEvents: [RoomChannelEvent] {
        published.filter { $0.kind == .channelEvent }.compactMap { try? RoomChannelEvent(serializedBytes: $0.body) }
    }

    /// The room notices published so far, in order.
    var roomNotices: [RoomRoomNotice] {
        published.filter { $0.kind == .roomNotice }.compactMap { try? RoomRoomNotice(serializedBytes: $0.body) }
    }
}

/// Coordinators on an ``InProcessNetwork``: each a real ``CoordinatorShell`` with an in-memory
/// database that outlives a restart, fake edges that record what they are asked, and one clock
/// moved by hand. No process, socket or thread.
final class CoordinatorHarness {
    let network = InProcessNetwork()
    private(set) var shells: [String: CoordinatorShell] = [:]
    private(set) var sinks: [String: RecordingSink] = [:]
    private var stores: [String: RoomStore] = [:]
    /// The bans each fake edge was asked to enforce.
    private(set) var edgeBans: [String: [RoomBan]] = [:]
    /// The stages each fake edge was sent, in order.
    private(set) var edgeStages: [String: [RoomStage]] = [:]
    /// The call channel activities each fake call-signal node was passed.
    private(set) var callActivities: [String: [SignalChannelActivity]] = [:]

    /// A fake call-signal node: records the call channel activities passed on to it.
    func addCallSignal(_ id: String) {
        let node = network.add(id, role: .callsignal)
        node.serve(.callChannelActivity) { [unowned self] request, respond in
            if let body = try? request.decodeBody(SignalChannelActivities.self) { callActivities[id, default: []] += body.activities }
            respond(.success(SignalChannelActivitiesResponse()))
        }
        network.membershipChanged()
    }
    var settings: (roomExpirySeconds: Int, ownerGraceSeconds: Int) = (20 * 60, 5 * 60)
    /// Viewers per edge before audience members go to relays (0: never).
    var relayThreshold = 0
    /// Rules the coordinators started from now on break on purpose.
    var faults: DeliberateFaults = []

    /// Starts coordinators `ids` (and tells every node about them).
    init(coordinators ids: [String], edges: [String] = []) throws {
        for id in ids { try start(id, announce: false) }
        for edge in edges { addEdge(edge, announce: false) }
        network.membershipChanged()
    }

    /// Starts (or restarts, with the database it had) coordinator `id`.
    func start(_ id: String, announce: Bool = true) throws {
        let node = network.add(id, role: .coordinator)
        var configuration = NodeConfiguration(role: .coordinator, nodeID: id)
        configuration.appID = TestApp.appID
        configuration.appCertificate = TestApp.certificate
        var coordinator = CoordinatorSettings()
        coordinator.roomExpirySeconds = settings.roomExpirySeconds
        coordinator.ownerGraceSeconds = settings.ownerGraceSeconds
        coordinator.relayThreshold = relayThreshold
        let store = try stores[id] ?? RoomStore.inMemory()
        stores[id] = store
        let storage = StoreWriter(store: store, logger: LogCapture.logger(label: "\(id).store"))
        let sink = RecordingSink()
        sinks[id] = sink
        let shell = try CoordinatorShell(node: node, configuration: configuration, settings: coordinator, storage: storage, publisher: sink,
                                         webhooks: nil, logger: LogCapture.logger(label: id), faults: faults)
        shells[id] = shell
        shell.install()
        if announce { network.membershipChanged() }
    }

    /// Kills coordinator `id` (its database stays, flushed, for a restart) and tells the others.
    func kill(_ id: String) {
        shells[id]?.storage.flush()
        shells[id] = nil
        network.kill(id)
        network.membershipChanged()
    }

    /// A fake edge: answers reachability probes, records bans.
    func addEdge(_ id: String, announce: Bool = true) {
        let edge = network.add(id, role: .edge)
        edge.serve(.nodeInfo) { _, respond in respond(.success(WireNodeInfo())) }
        edge.serve(.edgeBans) { [unowned self] request, respond in
            if let body = try? request.decodeBody(RoomEdgeBansRequest.self) { edgeBans[id, default: []] += body.bans }
            respond(.success(RoomEdgeBansResponse()))
        }
        edge.serve(.edgeStage) { [unowned self] request, respond in
            if let body = try? request.decodeBody(RoomEdgeStageRequest.self) { edgeStages[id, default: []] += body.stages }
            respond(.success(RoomEdgeStageResponse()))
        }
        if announce { network.membershipChanged() }
    }

    func node(_ id: String) -> InProcessNetwork.Node { network.nodes[id]! }

    /// The owner and successor of `key` among the alive coordinators.
    func holders(of key: String) -> [String] {
        OwnerRing(.coordinator, memberIDs: shells.keys.filter { network.isAlive($0) }).holders(of: key, count: 2)
    }

    /// The room as coordinator `id` holds it, if it does.
    func room(_ roomID: String, at id: String) -> RoomRoom? { shells[id]?.machine.records.registry.room(roomID) }

    // MARK: Requests, as a client sends them

    func create(at id: String, name: String = "Friday show", owner: UInt32 = 42, roomID: String = "") throws -> RoomRoom {
        try node(id).ask(.roomCreate, RoomCreateRoomRequest.with {
            $0.roomID = roomID
            $0.name = name
            $0.ownerUid = owner
            $0.ownerName = "host \(owner)"
        }, as: RoomCreateRoomResponse.self).room
    }

    func get(_ roomID: String, at id: String) throws -> RoomRoom {
        try node(id).ask(.roomGet, RoomGetRoomRequest.with { $0.roomID = roomID }, as: RoomGetRoomResponse.self).room
    }

    func join(_ roomID: String, uid: UInt32, at id: String) throws -> RoomRoom {
        try node(id).ask(.roomJoin, RoomJoinRoomRequest.with {
            $0.roomID = roomID
            $0.uid = uid
            $0.userName = "viewer \(uid)"
        }, as: RoomJoinRoomResponse.self).room
    }

    func leave(_ roomID: String, uid: UInt32, at id: String) throws -> RoomRoom {
        try node(id).ask(.roomLeave, RoomLeaveRoomRequest.with {
            $0.roomID = roomID
            $0.uid = uid
        }, as: RoomLeaveRoomResponse.self).room
    }

    func close(_ roomID: String, uid: UInt32, at id: String) throws -> RoomRoom {
        try node(id).ask(.roomClose, RoomCloseRoomRequest.with {
            $0.roomID = roomID
            $0.uid = uid
        }, as: RoomCloseRoomResponse.self).room
    }

    func chat(_ roomID: String, uid: UInt32, text: String, at id: String) throws -> RoomChatMessage {
        try node(id).ask(.roomChatSend, RoomSendChatRequest.with {
            $0.roomID = roomID
            $0.uid = uid
            $0.userName = "viewer \(uid)"
            $0.text = text
        }, as: RoomSendChatResponse.self).message
    }

    func history(_ roomID: String, at id: String) throws -> [RoomChatMessage] {
        try node(id).ask(.roomChatHistory, RoomChatHistoryRequest.with { $0.roomID = roomID },
                         as: RoomChatHistoryResponse.self).messages
    }

    func list(at id: String, pageSize: UInt32 = 0, pageToken: String = "") throws -> RoomListRoomsResponse {
        try node(id).ask(.roomList, RoomListRoomsRequest.with {
            $0.pageSize = pageSize
            $0.pageToken = pageToken
        }, as: RoomListRoomsResponse.self)
    }

    func place(_ channel: String, uid: UInt32 = 7, at id: String, unreachableEdge: String = "", preferring: [String] = []) throws -> RoomPlaceChannelResponse {
        try node(id).ask(.channelPlace, RoomPlaceChannelRequest.with {
            $0.channel = channel
            $0.uid = uid
            $0.token = (try? TestApp.token(channel: channel, uid: uid)) ?? ""
            $0.unreachableEdge = unreachableEdge
            $0.preferredEdges = preferring
        }, as: RoomPlaceChannelResponse.self)
    }

    func kick(_ channel: String, uid: UInt32, banSeconds: UInt32, at id: String,
              certificate: String = TestApp.certificate) throws -> RoomKickResponse {
        try node(id).ask(.kick, RoomKickRequest.with {
            $0.channel = channel
            $0.uid = uid
            $0.banSeconds = banSeconds
            $0.admin = AdminSigner.sign(action: "kick", target: channel, uid: uid, issuedAtMs: network.now,
                                        appCertificate: certificate)
        }, as: RoomKickResponse.self)
    }

    /// An edge's report of channel activities, sent to coordinator `id` as the edge sends it.
    @discardableResult
    func report(from edge: String, to id: String, _ activities: [RoomChannelActivity],
                channels: [RoomChannelStatus]? = nil, draining: Bool = false) throws -> RoomEdgeChannelReportResponse {
        try node(id).ask(.edgeChannelReport, RoomEdgeChannelReport.with {
            $0.edgeID = edge
            $0.activities = activities
            $0.draining = draining
            if let channels {
                $0.hasChannels_p = true
                $0.channels = channels
            }
        }, as: RoomEdgeChannelReportResponse.self)
    }
}

/// An activity as an edge reports it: `origin` names the edge's run, `number` counts in it.
func activity(_ type: RoomChannelEventType, channel: String, uid: UInt32, origin: String = "edge-1#1",
              number: UInt64, atMs: Int64) -> RoomChannelActivity {
    RoomChannelActivity.with {
        $0.type = type
        $0.channel = channel
        $0.uid = uid
        $0.atMs = atMs
        $0.origin = origin
        $0.originSequence = number
    }
}
