import Rooms
import ShowroomWire
import ShowroomTesting
import XCTest

final class RoomRegistryTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000

    // MARK: create

    func testCreateFillsTheRecord() throws {
        var registry = RoomRegistry()
        var generator = SeededGenerator(seed: 42)
        let change = try registry.create(Requests.create("  Evening show \n", owner: 7), nowMs: t0, using: &generator)
        let room = change.room
        XCTAssertEqual(room.roomID.count, 12)
        XCTAssertTrue(room.roomID.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }, room.roomID)
        XCTAssertEqual(room.name, "Evening show", "the name is stored trimmed")
        XCTAssertEqual(room.ownerUid, 7)
        XCTAssertEqual(room.ownerName, "Host 7")
        XCTAssertEqual(room.channel, room.roomID, "the channel defaults to the room id")
        XCTAssertEqual(room.createdAtMs, t0)
        XCTAssertEqual(room.expiresAtMs, t0 + 20 * 60_000)
        XCTAssertEqual(room.ownerOfflineSinceMs, t0, "the owner's grace runs from creation")
        XCTAssertEqual(room.state, .open)
        XCTAssertEqual(room.version, 1)
        XCTAssertEqual(room.updatedAtMs, t0)
        XCTAssertNil(change.notice)
        XCTAssertFalse(change.purged)
        XCTAssertEqual(registry.room(room.roomID), room)
    }

    func testGeneratedIDsDependOnlyOnTheGenerator() throws {
        var first = RoomRegistry()
        var second = RoomRegistry()
        var a = SeededGenerator(seed: 9)
        var b = SeededGenerator(seed: 9)
        let one = try first.create(Requests.create(), nowMs: t0, using: &a).room.roomID
        let two = try second.create(Requests.create(), nowMs: t0, using: &b).room.roomID
        XCTAssertEqual(one, two)
        let three = try first.create(Requests.create(), nowMs: t0, using: &a).room.roomID
        XCTAssertNotEqual(one, three)
    }

    func testCreateWithGivenIDAndChannel() throws {
        var registry = RoomRegistry()
        let room = registry.mustCreate("Show_1-a", channel: "stage one", nowMs: t0)
        XCTAssertEqual(room.roomID, "Show_1-a")
        XCTAssertEqual(room.channel, "stage one")
    }

    func testCreateRefusals() {
        var registry = RoomRegistry()
        var generator = SeededGenerator(seed: 1)
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.create(Requests.create("   "), nowMs: t0, using: &generator) }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try registry.create(Requests.create(String(repeating: "x", count: 65)), nowMs: t0, using: &generator)
        }
        XCTAssertNoThrow(try registry.create(Requests.create(String(repeating: "é", count: 64)), nowMs: t0, using: &generator),
                         "64 characters are allowed, whatever their byte size")
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.create(Requests.create(owner: 0), nowMs: t0, using: &generator) }
        for bad in ["has space", "dot.ted", "slash/ed", String(repeating: "a", count: 65), "ümlaut"] {
            assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.create(Requests.create(id: bad), nowMs: t0, using: &generator) }
        }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try registry.create(Requests.create(id: "ok", channel: String(repeating: "c", count: 65)), nowMs: t0, using: &generator)
        }
        XCTAssertNil(registry.room("ok"), "a refused create leaves nothing behind")
    }

    func testCreateExistingIDIsRoomExists() {
        var registry = RoomRegistry()
        registry.mustCreate("taken", nowMs: t0)
        var generator = SeededGenerator(seed: 1)
        let error = assertThrows(.roomExists) { () throws(ShowroomError) in
            try registry.create(Requests.create(id: "taken"), nowMs: t0 + 1, using: &generator)
        }
        XCTAssertTrue(error?.message.contains("taken") == true)
    }

    // MARK: list

    func testListNewestFirstWithDefaultPageAndTotal() throws {
        var registry = RoomRegistry()
        for index in 0..<25 { registry.mustCreate("room\(index < 10 ? "0" : "")\(index)", nowMs: t0 + Int64(index)) }
        let page = try registry.list(Requests.list())
        XCTAssertEqual(page.rooms.count, 20, "page size 0 means 20")
        XCTAssertEqual(page.rooms.first?.roomID, "room24")
        XCTAssertEqual(page.rooms.last?.roomID, "room05")
        XCTAssertEqual(page.total, 25)
        XCTAssertFalse(page.nextPageToken.isEmpty)
        let rest = try registry.list(Requests.list(token: page.nextPageToken))
        XCTAssertEqual(rest.rooms.map(\.roomID), ["room04", "room03", "room02", "room01", "room00"])
        XCTAssertTrue(rest.nextPageToken.isEmpty, "the last page has no next token")
    }

    func testListPagingIsStableWhileRoomsAreCreatedAndOrdersTiesByID() throws {
        var registry = RoomRegistry()
        // Three rooms share a creation time: the id orders them.
        for id in ["c", "a", "b"] { registry.mustCreate(id, nowMs: t0) }
        registry.mustCreate("older", nowMs: t0 - 10)
        registry.mustCreate("oldest", nowMs: t0 - 20)

        var seen: [String] = []
        var page = try registry.list(Requests.list(pageSize: 2))
        seen += page.rooms.map(\.roomID)
        XCTAssertEqual(seen, ["a", "b"])
        // New rooms arrive between pages: they are newer, so they do not shift the pages after.
        registry.mustCreate("new1", nowMs: t0 + 100)
        registry.mustCreate("new2", nowMs: t0 + 200)
        while !page.nextPageToken.isEmpty {
            page = try registry.list(Requests.list(pageSize: 2, token: page.nextPageToken))
            seen += page.rooms.map(\.roomID)
        }
        XCTAssertEqual(seen, ["a", "b", "c", "older", "oldest"], "no room skipped or repeated")
        XCTAssertEqual(page.total, 7)
    }

    func testListShowsOpenRoomsOnly() throws {
        var registry = RoomRegistry()
        registry.mustCreate("open", nowMs: t0)
        registry.mustCreate("shut", owner: 3, nowMs: t0 + 1)
        _ = try registry.close(Requests.close("shut", uid: 3), byAdmin: false, nowMs: t0 + 2)
        let page = try registry.list(Requests.list())
        XCTAssertEqual(page.rooms.map(\.roomID), ["open"])
        XCTAssertEqual(page.total, 1)
    }

    func testListRefusals() {
        var registry = RoomRegistry()
        registry.mustCreate("a", nowMs: t0)
        XCTAssertNoThrow(try registry.list(Requests.list(pageSize: 100)))
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.list(Requests.list(pageSize: 101)) }
        for bad in ["garbage", ":a", "12:", "x:a", "1.5:a"] {
            assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.list(Requests.list(token: bad)) }
        }
    }

    // MARK: get

    func testGetUnknownAndEmpty() {
        let registry = RoomRegistry()
        let error = assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.get(Requests.get("nope")) }
        XCTAssertEqual(error?.message, "no room nope: it was never created or has been closed and purged")
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.get(Requests.get("")) }
    }

    func testGetAnswersClosedRooms() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        _ = try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + 5)
        let room = try registry.get(Requests.get("r"))
        XCTAssertEqual(room.state, .closed)
    }

    // MARK: join / leave

    func testJoinAndLeaveAreIdempotentPerUidAndCount() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", owner: 7, nowMs: t0)

        let first = try registry.join(Requests.join("r", uid: 20), nowMs: t0 + 1)
        XCTAssertEqual(first.notice, .userCountChanged)
        XCTAssertEqual(first.room.audienceCount, 1)
        XCTAssertEqual(first.room.version, 2)
        XCTAssertEqual(first.room.updatedAtMs, t0 + 1)

        let again = try registry.join(Requests.join("r", uid: 20), nowMs: t0 + 2)
        XCTAssertNil(again.notice, "a repeated join changes nothing")
        XCTAssertEqual(again.room, first.room, "no version bump without a change")

        let second = try registry.join(Requests.join("r", uid: 10), nowMs: t0 + 3)
        XCTAssertEqual(second.room.audienceCount, 2)
        XCTAssertEqual(second.room.audienceUids, [10, 20])

        let owner = try registry.join(Requests.join("r", uid: 7), nowMs: t0 + 4)
        XCTAssertNil(owner.notice, "the owner is not counted as audience")
        XCTAssertEqual(owner.room.audienceCount, 2)

        let left = try registry.leave(Requests.leave("r", uid: 20), nowMs: t0 + 5)
        XCTAssertEqual(left.notice, .userCountChanged)
        XCTAssertEqual(left.room.audienceUids, [10])
        XCTAssertEqual(left.room.audienceCount, 1)
        XCTAssertEqual(left.room.version, 4)

        let leftAgain = try registry.leave(Requests.leave("r", uid: 20), nowMs: t0 + 6)
        XCTAssertNil(leftAgain.notice)
        XCTAssertEqual(leftAgain.room.version, 4)
        XCTAssertEqual(registry.room("r")?.audienceCount, 1)
    }

    func testJoinAndLeaveRefusals() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.join(Requests.join("r", uid: 0), nowMs: t0) }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.leave(Requests.leave("r", uid: 0), nowMs: t0) }
        assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.join(Requests.join("x", uid: 1), nowMs: t0) }
        assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.leave(Requests.leave("x", uid: 1), nowMs: t0) }
        _ = try registry.join(Requests.join("r", uid: 1), nowMs: t0)
        _ = try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + 1)
        let error = assertThrows(.roomClosed) { () throws(ShowroomError) in try registry.join(Requests.join("r", uid: 2), nowMs: t0 + 2) }
        XCTAssertTrue(error?.message.contains("owner closed it") == true, error?.message ?? "")
        assertThrows(.roomClosed) { () throws(ShowroomError) in try registry.leave(Requests.leave("r", uid: 1), nowMs: t0 + 2) }
    }

    // MARK: update

    func testTheOwnerOrAnAdministratorRenamesARoomAndSetsItsMetadata() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", owner: 7, nowMs: t0)
        let renamed = try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.uid = 7; $0.name = " Late show " }, byAdmin: false, nowMs: t0 + 1)
        XCTAssertEqual(renamed.notice, .roomUpdated)
        XCTAssertEqual(renamed.room.name, "Late show")
        XCTAssertEqual(renamed.room.version, 2)
        let tagged = try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.metadata = #"{"cover":"c.png"}"# }, byAdmin: true, nowMs: t0 + 2)
        XCTAssertEqual(tagged.room.metadata, #"{"cover":"c.png"}"#)
        XCTAssertEqual(tagged.room.name, "Late show", "a name not given is kept")
        XCTAssertEqual(registry.room("r"), tagged.room)
        let cleared = try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.uid = 7; $0.metadata = "" }, byAdmin: false, nowMs: t0 + 3)
        XCTAssertEqual(cleared.room.metadata, "", "metadata given empty clears it")
        // Refused: someone else, nothing to change, a bad name, too much metadata, an unknown or closed room.
        assertThrows(.notRoomOwner) { () throws(ShowroomError) in
            try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.uid = 8; $0.name = "mine" }, byAdmin: false, nowMs: t0 + 4)
        }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.uid = 7 }, byAdmin: false, nowMs: t0 + 4)
        }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.uid = 7; $0.name = "bad\u{0}name" }, byAdmin: false, nowMs: t0 + 4)
        }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.uid = 7; $0.metadata = String(repeating: "m", count: 4097) }, byAdmin: false, nowMs: t0 + 4)
        }
        assertThrows(.roomNotFound) { () throws(ShowroomError) in
            try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "x"; $0.uid = 7; $0.name = "x" }, byAdmin: true, nowMs: t0 + 4)
        }
        XCTAssertEqual(registry.room("r")?.version, 4, "nothing refused changed the room")
        _ = try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + 5)
        assertThrows(.roomClosed) { () throws(ShowroomError) in
            try registry.update(RoomUpdateRoomRequest.with { $0.roomID = "r"; $0.uid = 7; $0.name = "again" }, byAdmin: false, nowMs: t0 + 6)
        }
    }

    // MARK: close

    func testOwnerCloses() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", owner: 7, nowMs: t0)
        let change = try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + 60)
        XCTAssertEqual(change.notice, .roomDestroyed)
        XCTAssertEqual(change.room.state, .closed)
        XCTAssertEqual(change.room.closeReason, .ownerClosed)
        XCTAssertEqual(change.room.closedAtMs, t0 + 60)
        XCTAssertEqual(change.room.version, 2)
        XCTAssertEqual(registry.room("r"), change.room)
        assertThrows(.roomClosed) { () throws(ShowroomError) in try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + 61) }
    }

    func testNonOwnerIsRefusedNamingTheOwner() {
        var registry = RoomRegistry()
        registry.mustCreate("r", owner: 7, nowMs: t0)
        let error = assertThrows(.notRoomOwner) { () throws(ShowroomError) in
            try registry.close(Requests.close("r", uid: 8), byAdmin: false, nowMs: t0 + 1)
        }
        XCTAssertTrue(error?.message.contains("uid 7") == true, error?.message ?? "")
        XCTAssertEqual(registry.room("r")?.state, .open)
        assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.close(Requests.close("x", uid: 7), byAdmin: false, nowMs: t0) }
    }

    func testAdminCloses() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", owner: 7, nowMs: t0)
        let change = try registry.close(Requests.close("r", uid: 0), byAdmin: true, nowMs: t0 + 1)
        XCTAssertEqual(change.room.closeReason, .adminClosed)
        XCTAssertEqual(change.notice, .roomDestroyed)
    }
}
