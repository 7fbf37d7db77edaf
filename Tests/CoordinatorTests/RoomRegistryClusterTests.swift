import Foundation
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// Rooms on two real coordinators: the SDK's room service, errors, every room reachable through
/// either coordinator, a restart that loses nothing, and one coordinator serving all after the
/// other is killed.
final class RoomRegistryClusterTests: XCTestCase {
    func testRoomsAcrossCoordinatorsSurviveRestartAndFailover() async throws {
        let cluster = try TestCluster(coordinators: 2, edges: 1)
        defer { cluster.down() }
        let first = try cluster.endpoint("coordinator-1")
        let second = try cluster.endpoint("coordinator-2")
        let loop = try EngineLoop(name: "rooms-test")
        var service = RoomService(seeds: [first, second], loop: loop)

        // Create through the SDK: some with ids of ours, some with the coordinator's.
        var created: [Room] = []
        for i in 0..<12 {
            let room = try await service.createRoom(name: "room \(i)", ownerUid: 500 + UInt32(i), ownerName: "owner \(i)",
                                                    roomID: i % 2 == 0 ? "test-room-\(i)" : "")
            XCTAssertEqual(room.name, "room \(i)")
            XCTAssertEqual(room.state, Room.State.open)
            XCTAssertFalse(room.roomID.isEmpty)
            created.append(room)
        }
        // Listing pages through all of them, newest first, with the total.
        var listed: [Room] = []
        var token = ""
        repeat {
            let page = try await service.listRooms(pageSize: 5, pageToken: token)
            XCTAssertEqual(page.total, 12)
            listed += page.rooms
            token = page.nextPageToken
        } while !token.isEmpty
        XCTAssertEqual(Set(listed.map(\.roomID)), Set(created.map(\.roomID)))
        XCTAssertEqual(listed.map(\.createdAtMs), listed.map(\.createdAtMs).sorted(by: >))

        // Every room is reachable through either coordinator (one forwards to the other).
        for room in created {
            var get = RoomGetRoomRequest()
            get.roomID = room.roomID
            for endpoint in [first, second] {
                let answer = try await request(.roomGet, get, to: endpoint, expecting: RoomGetRoomResponse.self)
                XCTAssertEqual(answer.room.roomID, room.roomID)
                XCTAssertEqual(answer.room.name, room.name)
            }
        }

        // The room's events reach the SDK from the coordinators' events endpoints.
        let watched = try await service.createRoom(name: "watched", ownerUid: 600)
        let seen = EventsSeen(service.events(for: watched.roomID))
        var watcher: UInt32 = 9100
        try await eventually("a user count change is seen") {
            // The subscription reaches the coordinators in the background: new audience members
            // join until a change is seen.
            watcher += 1
            _ = try await service.joinRoom(watched.roomID, uid: watcher, userName: "watcher")
            return seen.all.contains { if case .userCountChanged = $0 { true } else { false } }
        }
        _ = try await service.sendMessage(watched.roomID, uid: watcher, userName: "watcher", text: "seen?")
        _ = try await service.closeRoom(watched.roomID, uid: 600)
        try await eventually("the message and the room's end are seen") { seen.finished }
        XCTAssertTrue(seen.all.contains { if case .messageAdded(let m) = $0 { m.text == "seen?" } else { false } })
        guard case .roomDestroyed(let last) = seen.all.last else { return XCTFail("the stream ends with the room's end: \(seen.all)") }
        XCTAssertEqual(last.state, Room.State.closed)

        // The admin command line: rooms create / list / get as JSON.
        let created1 = try showroomctl(cluster, ["rooms", "create", "--seed", first, "--name", "from the CLI", "--owner", "5", "--json"])
        let cliRoom = try XCTUnwrap(created1["roomId"] as? String)
        let cliList = try showroomctl(cluster, ["rooms", "list", "--seed", second, "--page-size", "100", "--json"])
        let listedIDs = (cliList["rooms"] as? [[String: Any]] ?? []).compactMap { $0["roomId"] as? String }
        XCTAssertTrue(listedIDs.contains(cliRoom))
        XCTAssertEqual(try showroomctl(cluster, ["rooms", "get", cliRoom, "--seed", second, "--json"])["name"] as? String, "from the CLI")
        _ = try showroomctl(cluster, ["rooms", "close", cliRoom, "--seed", first, "--json"])  // as an administrator
        created.append(try await service.room(cliRoom))

        // Audience, chat and the clear errors.
        let target = created[0]
        let joined = try await service.joinRoom(target.roomID, uid: 9001, userName: "viewer")
        XCTAssertEqual(joined.audienceCount, 1)
        let message = try await service.sendMessage(target.roomID, uid: 9001, userName: "viewer", text: "hello")
        XCTAssertEqual(message.sequence, 1)
        await assertFails(.roomNotFound, "unknown room") { try await service.room("no-such-room") }
        await assertFails(.notRoomOwner, "closing someone else's room") { try await service.closeRoom(target.roomID, uid: 9001) }
        await assertFails(.chatMessageTooLarge, "oversize chat message") {
            try await service.sendMessage(target.roomID, uid: 9001, text: String(repeating: "x", count: 1025))
        }
        // A body that is not a create request.
        var garbage = WireEnvelope()
        garbage.kind = .roomCreate
        garbage.requestID = 7
        garbage.protocolVersion = WireEnvelope.currentProtocolVersion
        garbage.body = Data([0xff, 0xff, 0xff])
        let malformed = try await exchange([try garbage.serializedBytes()], to: first, requestID: 7)
        XCTAssertEqual(malformed.failure?.code, .malformedMessage)
        let closed = try await service.closeRoom(created[1].roomID, uid: created[1].ownerUid)
        XCTAssertEqual(closed.state, Room.State.closed)
        await assertFails(.roomClosed, "chat in a closed room") {
            try await service.sendMessage(created[1].roomID, uid: 9001, text: "late")
        }

        // Restart a coordinator: its database brings every room back.
        try cluster.restart("coordinator-1")
        // The restarted coordinator listens on a new port: the SDK is given both seeds again.
        await service.shutdown()
        service = RoomService(seeds: [try cluster.endpoint("coordinator-1"), second], loop: loop)
        try await eventually("all open rooms listed after the restart") {
            let page = try await service.listRooms(pageSize: 100)
            return Set(page.rooms.map(\.roomID)) == Set(created.filter { $0.state == .open }.map(\.roomID)).subtracting([created[1].roomID])
        }
        let after = try await service.room(target.roomID)
        XCTAssertEqual(after.audienceCount, 1)
        let history = try await service.messages(in: target.roomID)
        XCTAssertEqual(history.map(\.text), ["hello"])

        // Kill the other one: the survivor serves every room.
        try cluster.kill("coordinator-2")
        let survivor = try cluster.endpoint("coordinator-1")
        await service.shutdown()
        service = RoomService(seeds: [survivor], loop: loop)
        try await eventually("coordinator-1 serves every room alone", timeout: .seconds(20)) {
            for room in created {
                var get = RoomGetRoomRequest()
                get.roomID = room.roomID
                _ = try await request(.roomGet, get, to: survivor, expecting: RoomGetRoomResponse.self, timeout: .milliseconds(500))
            }
            return true
        }
        let page = try await service.listRooms(pageSize: 100)
        XCTAssertEqual(Set(page.rooms.map(\.roomID)),
                       Set(created.filter { $0.state == .open }.map(\.roomID)).subtracting([created[1].roomID]))
        let room = try await service.createRoom(name: "after failover", ownerUid: 77)
        let fetched = try await service.room(room.roomID)
        XCTAssertEqual(fetched.name, "after failover")

        await service.shutdown()
        await loop.shutdown()
    }
}

/// A room's events as they arrive.
final class EventsSeen: Sendable {
    private final class Store: Sendable {
        let events = Mutex<(all: [RoomEvent], finished: Bool)>(([], false))
    }
    private let store = Store()
    private let reader: Task<Void, Never>

    init(_ stream: AsyncStream<RoomEvent>) {
        let store = self.store
        reader = Task {
            for await event in stream { store.events.withLock { $0.all.append(event) } }
            store.events.withLock { $0.finished = true }
        }
    }

    deinit { reader.cancel() }

    var all: [RoomEvent] { store.events.withLock { $0.all } }
    var count: Int { all.count }
    var finished: Bool { store.events.withLock { $0.finished } }
}

/// Runs `showroomctl ARGS` against `cluster` (its run directory gives the app certificate that
/// admin commands sign with) and parses the JSON object it prints last.
func showroomctl(_ cluster: TestCluster, _ arguments: [String]) throws -> [String: Any] {
    let output = try cluster.showroomctl(arguments, timeout: .seconds(20))
    guard let line = output.split(separator: "\n").last,
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else {
        throw ShowroomTestingError("showroomctl \(arguments.joined(separator: " ")) printed no JSON object: \(output)")
    }
    return object
}
