import ShowroomWire
import SwiftProtobuf

/// Client operations on rooms drawn from the workload's generator, sent to any coordinator as an
/// app's server sends them, with what each answer acknowledged kept for the checks: a room
/// acknowledged created must exist, an acknowledged close must hold, an acknowledged chat message
/// must keep its number. Viewers' apps join, swipe between and leave the rooms' channels.
final class RoomWorkload {
    /// What the clients were told about one room.
    struct Acknowledged {
        var created = false
        var closed = false
        var version: UInt64 = 0
        /// Chat messages acknowledged, by number.
        var chat: [UInt64: String] = [:]
        /// Chat messages sent and not acknowledged (refused, or never answered): each may have
        /// taken a number and died with its owner before any replica held it.
        var chatNotAcknowledged = 0
    }

    private var rng: SimulationRNG
    private let cluster: SimulatedCluster
    private var network: SimulatedNetwork { cluster.network }
    /// Room ids in the order they were first tried.
    private(set) var roomIDs: [String] = []
    private(set) var acknowledged: [String: Acknowledged] = [:]
    private var operations = 0
    private(set) var answered = (ok: 0, failed: 0, unknown: 0)
    /// The apps: hosts go on air with their rooms, viewers join, swipe and leave.
    var engines: EngineWorkload?
    static let clientTimeoutMs: Int64 = 5_000

    init(rng: SimulationRNG, cluster: SimulatedCluster) {
        self.rng = rng
        self.cluster = cluster
    }

    /// Starts one operation drawn from the generator.
    func step() {
        operations += 1
        let coordinator = rng.pick(cluster.coordinatorIDs)
        let open = roomIDs.filter { acknowledged[$0]?.closed != true }
        guard !open.isEmpty, rng.int(in: 0...99) >= 12 else { return create(at: coordinator) }
        let roomID = rng.pick(open)
        let uid = UInt32(rng.int(in: 100...120))
        switch rng.int(in: 0...99) {
        case 0..<25:
            ask(.roomJoin, RoomJoinRoomRequest.with {
                $0.roomID = roomID
                $0.uid = uid
                $0.userName = "viewer \(uid)"
            }, as: RoomJoinRoomResponse.self, at: coordinator, roomID: roomID) { $0.room }
        case 25..<40:
            ask(.roomLeave, RoomLeaveRoomRequest.with {
                $0.roomID = roomID
                $0.uid = uid
            }, as: RoomLeaveRoomResponse.self, at: coordinator, roomID: roomID) { $0.room }
        case 40..<65:
            let text = "m\(operations)"
            ask(.roomChatSend, RoomSendChatRequest.with {
                $0.roomID = roomID
                $0.uid = uid
                $0.userName = "viewer \(uid)"
                $0.text = text
            }, as: RoomSendChatResponse.self, at: coordinator, roomID: roomID) { [unowned self] answer in
                acknowledged[roomID]?.chat[answer.message.sequence] = text
                return nil
            }
        case 65..<72:
            ask(.roomClose, RoomCloseRoomRequest.with {
                $0.roomID = roomID
                $0.uid = 42
            }, as: RoomCloseRoomResponse.self, at: coordinator, roomID: roomID) { [unowned self] answer in
                acknowledged[roomID]?.closed = true
                engines?.roomClosed(roomID)
                return answer.room
            }
        case 72..<80:
            ask(.roomGet, RoomGetRoomRequest.with { $0.roomID = roomID },
                as: RoomGetRoomResponse.self, at: coordinator, roomID: roomID) { _ in nil }
        default:
            // A viewer's app joins the room's channel, swipes to it or leaves it.
            network.record("op \(operations) viewer \(uid) \(roomID)")
            engines?.viewerStep(roomID, uid: uid)
        }
    }

    private func create(at coordinator: String) {
        let roomID = "room-\(roomIDs.count + 1)"
        roomIDs.append(roomID)
        acknowledged[roomID] = Acknowledged()
        ask(.roomCreate, RoomCreateRoomRequest.with {
            $0.roomID = roomID
            $0.name = "show \(roomID)"
            $0.ownerUid = 42
            $0.ownerName = "host"
        }, as: RoomCreateRoomResponse.self, at: coordinator, roomID: roomID) { [unowned self] answer in
            acknowledged[roomID]?.created = true
            engines?.roomCreated(roomID)
            return answer.room
        }
    }

    /// Sends one client request; `acknowledge` records what a success acknowledged and returns
    /// the room as the answer showed it (for its version).
    private func ask<Answer: SwiftProtobuf.Message>(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message,
                                                    as: Answer.Type, at coordinator: String, roomID: String,
                                                    acknowledge: @escaping (Answer) -> RoomRoom?) {
        let number = operations
        let request: WireEnvelope
        do {
            request = try WireEnvelope(request: kind, id: network.nextRequestID(), body: body)
        } catch {
            preconditionFailure("a client request does not encode: \(error)")
        }
        network.record("op \(number) \(kind) \(roomID) at \(coordinator)")
        network.send(request, from: nil, to: coordinator, timeoutMs: Self.clientTimeoutMs) { [unowned self] result in
            switch result {
            case .success(let envelope):
                if let failure = envelope.failure {
                    answered.failed += 1
                    if kind == .roomChatSend { acknowledged[roomID]?.chatNotAcknowledged += 1 }
                    network.record("op \(number) fail \(failure.code)")
                } else if let answer = try? envelope.decodeBody(Answer.self) {
                    answered.ok += 1
                    if let room = acknowledge(answer), var acknowledgedRoom = acknowledged[roomID] {
                        acknowledgedRoom.version = max(acknowledgedRoom.version, room.version)
                        acknowledged[roomID] = acknowledgedRoom
                    }
                    network.record("op \(number) ok")
                } else {
                    answered.failed += 1
                    network.record("op \(number) undecodable answer")
                }
            case .failure(let error):
                // Maybe applied, maybe not.
                answered.unknown += 1
                if kind == .roomChatSend { acknowledged[roomID]?.chatNotAcknowledged += 1 }
                network.record("op \(number) unknown \(error.code)")
            }
        }
    }
}
