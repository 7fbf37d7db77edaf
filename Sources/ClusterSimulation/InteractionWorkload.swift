import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

/// PKs and co-host seats in a few rooms of their own, each owned by its own host, as apps do
/// them through the SDK's `RoomService`: hosts invite each other's rooms to PKs, answer, cancel
/// and stop them; viewers join rooms, apply for seats or are invited up, answer, step down and
/// leave. Requests go to any coordinator, carrying the actor's token for the room's channel.
/// What apps know of a room (its pending requests, its interaction) is what the last answer
/// showed them.
final class InteractionWorkload {
    private var rng: SimulationRNG
    private let cluster: SimulatedCluster
    private var network: SimulatedNetwork { cluster.network }
    /// The rooms, each owned by its host (`hosts[i]` owns `roomIDs[i]`).
    let roomIDs: [String]
    let hosts: [UInt32]
    let viewers: [UInt32]
    /// Rooms whose creation was acknowledged.
    private(set) var created: Set<String> = []
    /// The rooms whose creation was acknowledged, in order.
    var createdRoomIDs: [String] { roomIDs.filter { created.contains($0) } }
    /// Each room as the last answer about it showed it.
    private var known: [String: RoomRoom] = [:]
    private var tokens: [String: String] = [:]
    private var operations = 0
    static let timeoutMs: Int64 = 5_000

    init(rng: SimulationRNG, cluster: SimulatedCluster, rooms: Int = 4, viewers: Int = 4) {
        self.rng = rng
        self.cluster = cluster
        roomIDs = (1...rooms).map { "pk-room-\($0)" }
        hosts = (1...rooms).map { UInt32(3_000 + $0) }
        self.viewers = (1...viewers).map { UInt32(3_100 + $0) }
    }

    /// Creates the rooms (again until acknowledged: a repeat of an applied create is "exists").
    func start() {
        for (roomID, host) in zip(roomIDs, hosts) { create(roomID, host: host) }
    }

    private func create(_ roomID: String, host: UInt32) {
        ask(.roomCreate, RoomCreateRoomRequest.with {
            $0.roomID = roomID
            $0.name = "pk \(roomID)"
            $0.ownerUid = host
            $0.ownerName = "host \(host)"
            $0.seats = 2
        }, as: RoomCreateRoomResponse.self, roomID: roomID, what: "create") { [unowned self] result in
            switch result {
            case .success(let answer):
                created.insert(roomID)
                known[roomID] = answer.room
            case .failure(let error) where error.code == .roomExists:
                created.insert(roomID)
            case .failure:
                network.scheduler.after(500) { [unowned self] in create(roomID, host: host) }
            }
        }
    }

    /// The token of `uid` for the room's channel (the room id), as a business server mints it.
    private func token(_ uid: UInt32, _ roomID: String) -> String {
        let key = "\(roomID)/\(uid)"
        if let token = tokens[key] { return token }
        let token = (try? RTCTokenBuilder.buildToken(
            appID: SimulationApp.appID, appCertificate: SimulationApp.certificate, channelName: roomID, uid: uid,
            role: .publisher, tokenExpire: 86_400, issueTs: UInt32(Simulation.startMs / 1000) - 600, salt: uid)) ?? ""
        tokens[key] = token
        return token
    }

    /// One host or viewer does one thing, as what it knows of the rooms allows.
    func step() {
        operations += 1
        let open = roomIDs.filter { created.contains($0) }
        guard !open.isEmpty else { return }
        let index = rng.int(in: 0...(roomIDs.count - 1))
        let roomID = roomIDs[index]
        guard created.contains(roomID) else { return }
        let host = hosts[index]
        let room = known[roomID]
        let viewer = rng.pick(viewers)
        switch rng.int(in: 0...99) {
        case 0..<15:
            ask(.roomGet, RoomGetRoomRequest.with { $0.roomID = roomID }, as: RoomGetRoomResponse.self, roomID: roomID,
                what: "get") { [unowned self] result in
                if case .success(let answer) = result { known[roomID] = answer.room }
            }
        case 15..<30:
            // The host invites another room's host to a PK (inviting back accepts).
            let peers = open.filter { $0 != roomID }
            guard !peers.isEmpty else { return }
            let peer = rng.pick(peers)
            let duration = UInt32(rng.pick([0, 0, 5, 12]))
            act(.roomPkInvite, RoomPkInviteRequest.with {
                $0.roomID = roomID
                $0.uid = host
                $0.token = token(host, roomID)
                $0.peerRoomID = peer
                $0.durationS = duration
            }, roomID: roomID, what: "pk invite \(peer)")
        case 30..<50:
            // The host answers (or cancels) a PK invitation its room holds.
            guard let invitation = room?.pending.first(where: { $0.kind == .pkInvitation }) else { return }
            let sent = invitation.fromRoomID == roomID
            let accept = rng.chance(perMille: 700)
            act(.roomPkAnswer, RoomPkAnswerRequest.with {
                $0.roomID = roomID
                $0.uid = host
                $0.token = token(host, roomID)
                $0.invitationID = invitation.id
                $0.accept = !sent && accept
                $0.cancel = sent
            }, roomID: roomID, what: "pk \(sent ? "cancel" : accept ? "accept" : "reject") \(invitation.id)")
        case 50..<58:
            guard let room, room.interaction.kind == .pk else { return }
            act(.roomPkStop, RoomPkStopRequest.with {
                $0.roomID = roomID
                $0.uid = host
                $0.token = token(host, roomID)
                $0.pkID = room.interaction.id
            }, roomID: roomID, what: "pk stop \(room.interaction.id)")
        case 58..<66:
            ask(.roomJoin, RoomJoinRoomRequest.with {
                $0.roomID = roomID
                $0.uid = viewer
                $0.userName = "viewer \(viewer)"
            }, as: RoomJoinRoomResponse.self, roomID: roomID, what: "join \(viewer)") { [unowned self] result in
                if case .success(let answer) = result { known[roomID] = answer.room }
            }
        case 66..<70:
            ask(.roomLeave, RoomLeaveRoomRequest.with {
                $0.roomID = roomID
                $0.uid = viewer
            }, as: RoomLeaveRoomResponse.self, roomID: roomID, what: "leave \(viewer)") { [unowned self] result in
                if case .success(let answer) = result { known[roomID] = answer.room }
            }
        case 70..<78:
            act(.roomCohostApply, RoomCoHostApplyRequest.with {
                $0.roomID = roomID
                $0.uid = viewer
                $0.token = token(viewer, roomID)
                $0.userName = "viewer \(viewer)"
            }, roomID: roomID, what: "cohost apply \(viewer)")
        case 78..<84:
            act(.roomCohostInvite, RoomCoHostInviteRequest.with {
                $0.roomID = roomID
                $0.uid = host
                $0.token = token(host, roomID)
                $0.inviteeUid = viewer
            }, roomID: roomID, what: "cohost invite \(viewer)")
        case 84..<93:
            // The one asked answers an application or invitation the room holds.
            guard let asked = room?.pending.first(where: { $0.kind == .cohostApplication || $0.kind == .cohostInvitation })
            else { return }
            let accept = rng.chance(perMille: 750)
            act(.roomCohostAnswer, RoomCoHostAnswerRequest.with {
                $0.roomID = roomID
                $0.uid = asked.toUid
                $0.token = token(asked.toUid, roomID)
                $0.requestID = asked.id
                $0.accept = accept
            }, roomID: roomID, what: "cohost \(accept ? "accept" : "reject") \(asked.id)")
        default:
            // A co-host steps down, or the host ends its seat.
            guard let room, room.interaction.kind == .cohost, !room.interaction.seats.isEmpty else { return }
            let seat = rng.pick(room.interaction.seats)
            let by = rng.chance(perMille: 500) ? seat.uid : host
            act(.roomCohostStop, RoomCoHostStopRequest.with {
                $0.roomID = roomID
                $0.uid = by
                $0.token = token(by, roomID)
                $0.seatID = seat.id
            }, roomID: roomID, what: "cohost stop \(seat.id) by \(by)")
        }
    }

    /// A PK or co-host request; its answer shows the room.
    private func act(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, roomID: String, what: String) {
        ask(kind, body, as: RoomInteractionResponse.self, roomID: roomID, what: what) { [unowned self] result in
            if case .success(let answer) = result { known[roomID] = answer.room }
        }
    }

    private func ask<Answer: SwiftProtobuf.Message>(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, as: Answer.Type,
                                                    roomID: String, what: String,
                                                    done: @escaping (Result<Answer, ShowroomError>) -> Void) {
        network.ask(kind, body, as: Answer.self, to: rng.pick(cluster.coordinatorIDs), timeoutMs: Self.timeoutMs,
                    label: "interaction op \(operations) \(roomID) \(what)", done: done)
    }
}
