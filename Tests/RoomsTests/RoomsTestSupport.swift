import Rooms
import Routing
import ShowroomWire
import ShowroomTesting
import XCTest

/// A deterministic generator (SplitMix64) for room ids in tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// Request builders, so tests read as the product's words.
enum Requests {
    static func create(_ name: String = "Evening show", id: String = "", owner: UInt32 = 7, channel: String = "") -> RoomCreateRoomRequest {
        var request = RoomCreateRoomRequest()
        request.roomID = id
        request.name = name
        request.ownerUid = owner
        request.ownerName = "Host \(owner)"
        request.ownerAvatar = "https://example.invalid/\(owner).png"
        request.channel = channel
        return request
    }

    static func list(pageSize: UInt32 = 0, token: String = "") -> RoomListRoomsRequest {
        var request = RoomListRoomsRequest()
        request.pageSize = pageSize
        request.pageToken = token
        return request
    }

    static func get(_ id: String) -> RoomGetRoomRequest {
        var request = RoomGetRoomRequest()
        request.roomID = id
        return request
    }

    static func join(_ id: String, uid: UInt32) -> RoomJoinRoomRequest {
        var request = RoomJoinRoomRequest()
        request.roomID = id
        request.uid = uid
        request.userName = "User \(uid)"
        return request
    }

    static func leave(_ id: String, uid: UInt32) -> RoomLeaveRoomRequest {
        var request = RoomLeaveRoomRequest()
        request.roomID = id
        request.uid = uid
        return request
    }

    static func close(_ id: String, uid: UInt32) -> RoomCloseRoomRequest {
        var request = RoomCloseRoomRequest()
        request.roomID = id
        request.uid = uid
        return request
    }

    static func chat(_ id: String, uid: UInt32 = 11, text: String) -> RoomSendChatRequest {
        var request = RoomSendChatRequest()
        request.roomID = id
        request.uid = uid
        request.userName = "User \(uid)"
        request.text = text
        return request
    }

    static func history(_ id: String, limit: UInt32 = 0, after: UInt64 = 0) -> RoomChatHistoryRequest {
        var request = RoomChatHistoryRequest()
        request.roomID = id
        request.limit = limit
        request.afterSequence = after
        return request
    }
}

extension RoomRegistry {
    /// Creates a room with a given id at `nowMs`, failing the test on error.
    @discardableResult
    mutating func mustCreate(
        _ id: String, owner: UInt32 = 7, channel: String = "", nowMs: Int64, file: StaticString = #filePath, line: UInt = #line
    ) -> RoomRoom {
        var generator = SeededGenerator(seed: 1)
        do {
            return try create(Requests.create(id: id, owner: owner, channel: channel), nowMs: nowMs, using: &generator).room
        } catch {
            XCTFail("create \(id): \(error)", file: file, line: line)
            return RoomRoom()
        }
    }
}

extension CoordinatorNode {
    /// Coordinator `c1` among `members`, started at `nowMs`, caught up (every catch-up ask
    /// answered) unless `catchUp` is false; its channels get relays past `relayThreshold` viewers.
    static func caughtUp(among members: [String] = ["c1"], relayThreshold: Int = 0, nowMs: Int64,
                         catchUp: Bool = true) -> CoordinatorNode {
        var node = CoordinatorNode(records: CoordinatorRecords(registry: RoomRegistry(),
                                                               directory: ChannelDirectory(placementExpiryMs: 60_000,
                                                                                           relayThreshold: relayThreshold)),
                                   selfID: "c1", startedAtMs: nowMs)
        _ = node.replicas.membersChanged(to: members)
        let ring = OwnerRing(.coordinator, memberIDs: Set(members))
        let asks = node.takeOver.membersChanged(to: ring, known: ring, nowMs: nowMs) ?? []
        if catchUp { for ask in asks { _ = node.takeOver.answered(ask, answered: true, more: false, last: "") } }
        return node
    }
}
