@testable import ShowroomKit  // Room and ChatMessage from the fake coordinators' messages
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// The room service against stand-in coordinators: request/answer mapping, error codes, retry on
/// the next coordinator, and the event stream.
final class RoomServiceTests: XCTestCase {
    private var coordinators: [FakeCoordinator] = []
    private var loop: EngineLoop?

    override func tearDown() async throws {
        await loop?.shutdown()
        for coordinator in coordinators { coordinator.stop() }
        coordinators = []
    }

    /// Coordinators that list each other in their status.
    private func start(_ ids: String...) throws -> [FakeCoordinator] {
        let started = try ids.map { try FakeCoordinator(id: $0) }
        for coordinator in started { coordinator.answerStatus(with: started.map(\.member)) }
        coordinators += started
        return started
    }

    private func service(seeds: [String], timeout: Duration = .seconds(2)) throws -> RoomService {
        let made = try EngineLoop(name: "rooms-test")
        loop = made
        return RoomService(seeds: seeds, loop: made, timeout: timeout)
    }

    private static func room(_ id: String, name: String = "Friday show", owner: UInt32 = 1, audience: UInt32 = 0, version: UInt64 = 1) -> RoomRoom {
        var room = RoomRoom()
        room.roomID = id
        room.name = name
        room.ownerUid = owner
        room.channel = id
        room.audienceCount = audience
        room.state = .open
        room.version = version
        return room
    }

    /// A coordinator's canned room registry: "r1" exists, anything else is not found.
    private static let registry: FakeCoordinator.Handler = { request in
        switch request.kind {
        case .roomCreate:
            guard let body = try? request.decodeBody(RoomCreateRoomRequest.self) else { return nil }
            var response = RoomCreateRoomResponse()
            response.room = room(body.roomID.isEmpty ? "made12345678" : body.roomID, name: body.name, owner: body.ownerUid)
            response.room.ownerName = body.ownerName
            return try? WireEnvelope(responseTo: request, body: response)
        case .roomList:
            guard let body = try? request.decodeBody(RoomListRoomsRequest.self) else { return nil }
            var response = RoomListRoomsResponse()
            response.rooms = [room("r2"), room("r1")]
            response.total = 3
            response.nextPageToken = "page-2-of-\(body.pageSize)-after-\(body.pageToken)"
            return try? WireEnvelope(responseTo: request, body: response)
        case .roomGet:
            guard let body = try? request.decodeBody(RoomGetRoomRequest.self) else { return nil }
            guard body.roomID == "r1" else {
                return WireEnvelope(responseTo: request, error: ShowroomError(.roomNotFound, "no room '\(body.roomID)'"))
            }
            var response = RoomGetRoomResponse()
            response.room = room("r1")
            return try? WireEnvelope(responseTo: request, body: response)
        case .roomJoin:
            guard let body = try? request.decodeBody(RoomJoinRoomRequest.self) else { return nil }
            var response = RoomJoinRoomResponse()
            response.room = room(body.roomID, audience: 1)
            response.room.audienceUids = [body.uid]
            return try? WireEnvelope(responseTo: request, body: response)
        case .roomLeave:
            guard let body = try? request.decodeBody(RoomLeaveRoomRequest.self) else { return nil }
            var response = RoomLeaveRoomResponse()
            response.room = room(body.roomID, audience: 0)
            return try? WireEnvelope(responseTo: request, body: response)
        case .roomClose:
            guard let body = try? request.decodeBody(RoomCloseRoomRequest.self) else { return nil }
            guard body.uid == 1 else {
                return WireEnvelope(responseTo: request, error: ShowroomError(.notRoomOwner, "uid \(body.uid) does not own the room"))
            }
            var response = RoomCloseRoomResponse()
            response.room = room(body.roomID)
            response.room.state = .closed
            response.room.closeReason = .ownerClosed
            return try? WireEnvelope(responseTo: request, body: response)
        case .roomChatSend:
            guard let body = try? request.decodeBody(RoomSendChatRequest.self) else { return nil }
            var response = RoomSendChatResponse()
            response.message.roomID = body.roomID
            response.message.sequence = 7
            response.message.uid = body.uid
            response.message.userName = body.userName
            response.message.text = body.text
            return try? WireEnvelope(responseTo: request, body: response)
        case .roomChatHistory:
            guard let body = try? request.decodeBody(RoomChatHistoryRequest.self) else { return nil }
            var response = RoomChatHistoryResponse()
            response.messages = (body.afterSequence + 1...body.afterSequence + UInt64(body.limit)).map { sequence in
                var message = RoomChatMessage()
                message.roomID = body.roomID
                message.sequence = sequence
                message.text = "message \(sequence)"
                return message
            }
            return try? WireEnvelope(responseTo: request, body: response)
        default:
            return WireEnvelope(responseTo: request, error: .unknownKind("\(request.kind)"))
        }
    }

    func testRoomCallsMapToRequestsAndAnswers() async throws {
        let coordinator = try start("coord-a")[0]
        coordinator.answer(with: Self.registry)
        let rooms = try service(seeds: [coordinator.clusterEndpoint])

        let created = try await rooms.createRoom(name: "Late show", ownerUid: 9, ownerName: "Ana")
        XCTAssertEqual(created.roomID, "made12345678")
        XCTAssertEqual(created.name, "Late show")
        XCTAssertEqual(created.ownerUid, 9)
        XCTAssertEqual(created.ownerName, "Ana")
        let createRequest = try XCTUnwrap(coordinator.requests.last).decodeBody(RoomCreateRoomRequest.self)
        XCTAssertEqual(createRequest.roomID, "", "an empty id lets the coordinator make one")

        let page = try await rooms.listRooms(pageSize: 5, pageToken: "t1")
        XCTAssertEqual(page.rooms.map(\.roomID), ["r2", "r1"])
        XCTAssertEqual(page.total, 3)
        XCTAssertEqual(page.nextPageToken, "page-2-of-5-after-t1")

        let found = try await rooms.room("r1")
        XCTAssertEqual(found.roomID, "r1")
        do {
            _ = try await rooms.room("nope")
            XCTFail("found a room that does not exist")
        } catch {
            XCTAssertEqual(error.code, .roomNotFound)
            XCTAssertEqual(error.code.rawValue, 4000)
            XCTAssertEqual(error.message, "no room 'nope'")
        }

        let joined = try await rooms.joinRoom("r1", uid: 42, userName: "Bo")
        XCTAssertEqual(joined.audienceCount, 1)
        XCTAssertEqual(joined.audienceUids, [42])
        let left = try await rooms.leaveRoom("r1", uid: 42)
        XCTAssertEqual(left.audienceCount, 0)

        let message = try await rooms.sendMessage("r1", uid: 42, userName: "Bo", text: "hello")
        XCTAssertEqual(message.sequence, 7)
        XCTAssertEqual(message.text, "hello")
        XCTAssertEqual(message.userName, "Bo")
        let history = try await rooms.messages(in: "r1", limit: 3, after: 10)
        XCTAssertEqual(history.map(\.sequence), [11, 12, 13])

        do {
            _ = try await rooms.closeRoom("r1", uid: 42)
            XCTFail("closed by a non-owner")
        } catch {
            XCTAssertEqual(error.code, .notRoomOwner)
        }
        let closed = try await rooms.closeRoom("r1", uid: 1)
        XCTAssertEqual(closed.state, .closed)
        XCTAssertEqual(closed.closeReason, .ownerClosed)

        XCTAssertEqual(coordinator.requests.map(\.kind), [
            .roomCreate, .roomList, .roomGet, .roomGet, .roomJoin, .roomLeave, .roomChatSend, .roomChatHistory,
            .roomClose, .roomClose,
        ])
        await rooms.shutdown()
    }

    func testBadArgumentsAreRefusedBeforeSending() async throws {
        let coordinator = try start("coord-a")[0]
        coordinator.answer(with: Self.registry)
        let rooms = try service(seeds: [coordinator.clusterEndpoint])
        do {
            _ = try await rooms.listRooms(pageSize: 0)
            XCTFail("listed zero rooms per page")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        do {
            _ = try await rooms.sendMessage("r1", uid: 1, text: String(repeating: "x", count: 1025))
            XCTFail("sent an oversized message")
        } catch {
            XCTAssertEqual(error.code, .chatMessageTooLarge)
        }
        XCTAssertEqual(coordinator.requests.count, 0)
        await rooms.shutdown()
    }

    func testAnUnavailableCoordinatorIsSkippedAndNoneAliveIsNoCoordinator() async throws {
        let pair = try start("coord-a", "coord-b")
        let roomID = key(ownedBy: "coord-a", among: ["coord-a", "coord-b"], prefix: "room")
        pair[0].answer(with: { WireEnvelope(responseTo: $0, error: .unavailable("coord-a is draining")) })
        pair[1].answer(with: { request in
            var response = RoomGetRoomResponse()
            response.room = RoomServiceTests.room(roomID)
            return try? WireEnvelope(responseTo: request, body: response)
        })
        let rooms = try service(seeds: [pair[0].clusterEndpoint])
        let room = try await rooms.room(roomID)
        XCTAssertEqual(room.roomID, roomID)
        XCTAssertEqual(pair[0].requests.count, 1, "the room's owner first")
        XCTAssertEqual(pair[1].requests.count, 1, "then the next one")
        await rooms.shutdown()

        // A cluster whose members include no coordinator.
        let plain = try start("edge-node")[0]
        plain.answerStatus(with: [member(id: "edge-a", role: "edge", client: "tcp://127.0.0.1:7001")])
        let lonely = try service(seeds: [plain.clusterEndpoint])
        do {
            _ = try await lonely.room("r1")
            XCTFail("answered without a coordinator")
        } catch {
            XCTAssertEqual(error.code, .noCoordinator)
            XCTAssertEqual(error.code.rawValue, 4007)
        }
        await lonely.shutdown()
    }

    func testEventsComeFromEveryCoordinatorOnceAndEndWithTheRoom() async throws {
        let pair = try start("coord-a", "coord-b")
        let rooms = try service(seeds: [pair[0].clusterEndpoint])
        let events = rooms.events(for: "r1")
        let other = rooms.events(for: "r")  // a prefix of "room/r1": must not get r1's notices
        let collected = Mutex<[RoomEvent]>([])
        let reader = Task {
            for await event in events { collected.withLock { $0.append(event) } }
        }
        let otherReader = Task { () -> Int in
            var count = 0
            for await _ in other { count += 1 }
            return count
        }
        try await eventually("both coordinators have the subscription") {
            pair.allSatisfy { $0.subscriptions.contains("room/r1") }
        }

        func notice(_ kind: RoomRoomNoticeKind, version: UInt64, audience: UInt32 = 0, sequence: UInt64 = 0) -> RoomRoomNotice {
            var notice = RoomRoomNotice()
            notice.roomID = "r1"
            notice.kind = kind
            notice.room = Self.room("r1", audience: audience, version: version)
            if kind == .messageAdded {
                notice.message.roomID = "r1"
                notice.message.sequence = sequence
                notice.message.text = "hi \(sequence)"
            }
            return notice
        }
        // Both publish the same notices, as around a failover; b has one more.
        for coordinator in pair {
            coordinator.publish(notice(.userCountChanged, version: 2, audience: 1))
            coordinator.publish(notice(.messageAdded, version: 3, sequence: 1))
        }
        pair[1].publish(notice(.userCountChanged, version: 4, audience: 2))
        // b's notices arrive in order: once its last is in, its duplicates have been seen.
        try await eventually("the third notice") { collected.withLock { $0.count } >= 3 }
        pair[0].publish(notice(.roomDestroyed, version: 5))
        await reader.value  // the stream finishes by itself after the room ends

        let seen = collected.withLock { $0 }
        XCTAssertEqual(seen, [
            .userCountChanged(Room(Self.room("r1", audience: 1, version: 2))),
            .messageAdded(ChatMessage(notice(.messageAdded, version: 3, sequence: 1).message)),
            .userCountChanged(Room(Self.room("r1", audience: 2, version: 4))),
            .roomDestroyed(Room(Self.room("r1", version: 5))),
        ])
        await rooms.shutdown()
        let otherCount = await otherReader.value
        XCTAssertEqual(otherCount, 0, "notices of r1 reached the stream of r")
    }
}
