import Rooms
import ShowroomWire
import ShowroomTesting
import XCTest

/// Every field a client sends a room is bounded by the shared rules in ``Names``: the happy value
/// passes, the hostile one (NUL, control characters, over-long, a megabyte) is refused with
/// INVALID_ARGUMENT naming the field, and nothing is stored.
final class RoomInputBoundsTests: XCTestCase {
    private var registry = RoomRegistry()
    private var generator = SeededGenerator(seed: 3)
    private let megabyte = String(repeating: "x", count: 1 << 20)

    private func create(_ change: (inout RoomCreateRoomRequest) -> Void) throws(ShowroomError) -> RoomRoom {
        var request = Requests.create(id: "r1")
        change(&request)
        return try registry.create(request, nowMs: 0, using: &generator).room
    }

    private func refusal(_ field: String, _ change: (inout RoomCreateRoomRequest) -> Void, file: StaticString = #filePath, line: UInt = #line) {
        let error = assertThrows(.invalidArgument, { () throws(ShowroomError) in try create(change) }, file: file, line: line)
        XCTAssertTrue(error?.message.hasPrefix(field) == true, "\(String(describing: error))", file: file, line: line)
        XCTAssertLessThan(error?.message.utf8.count ?? 0, 400, "the value is not echoed", file: file, line: line)
        XCTAssertEqual(try? registry.list(Requests.list()).total, 0, file: file, line: line)
    }

    func testCreateBoundsEveryField() throws {
        refusal("name is 1048576 bytes") { $0.name = megabyte }
        refusal("name holds control character U+0000") { $0.name = "Friday\u{0}show" }
        refusal("name is 65 characters") { $0.name = String(repeating: "n", count: 65) }
        refusal("owner_name is 1048576 bytes") { $0.ownerName = megabyte }
        refusal("owner_name holds control character U+001B") { $0.ownerName = "Host\u{1B}[2J" }
        refusal("owner_avatar is 1048576 bytes") { $0.ownerAvatar = megabyte }
        refusal("owner_avatar is 513 bytes") { $0.ownerAvatar = String(repeating: "a", count: 513) }
        refusal("owner_avatar holds control character U+000A") { $0.ownerAvatar = "https://x/a.png\nSet-Cookie: y" }
        refusal("room_id is 1048576 bytes") { $0.roomID = megabyte }
        refusal("room_id holds byte 0x00 (NUL)") { $0.roomID = "r\u{0}" }
        refusal("channel is 1048576 bytes") { $0.channel = megabyte }
        refusal("channel holds byte 0x00 (NUL)") { $0.channel = "show\u{0}" }
        refusal("channel is 65 bytes") { $0.channel = String(repeating: "c", count: 65) }

        // The largest of each is accepted, as are names of any script.
        let room = try create {
            $0.name = String(repeating: "秀", count: 64)
            $0.ownerName = String(repeating: "🎤", count: 64)
            $0.ownerAvatar = String(repeating: "a", count: 512)
            $0.channel = String(repeating: "c", count: 64)
        }
        XCTAssertEqual(room.name, String(repeating: "秀", count: 64))
        XCTAssertEqual(room.channel, String(repeating: "c", count: 64))
    }

    func testJoinChatAndLookupsBoundTheirFields() throws {
        _ = try create { _ in }
        var join = Requests.join("r1", uid: 5)
        join.userName = megabyte
        XCTAssertTrue(assertThrows(.invalidArgument, { () throws(ShowroomError) in try registry.join(join, nowMs: 1) })?
            .message.hasPrefix("user_name is 1048576 bytes") == true)
        join.userName = "Eve\u{0}"
        assertThrows(.invalidArgument, { () throws(ShowroomError) in try registry.join(join, nowMs: 1) })
        join.userName = "Eve"
        XCTAssertEqual(try registry.join(join, nowMs: 1).room.audienceCount, 1)

        var chat = Requests.chat("r1", text: "hi")
        chat.userName = "Eve\u{7}"
        XCTAssertTrue(assertThrows(.invalidArgument, { () throws(ShowroomError) in try registry.sendChat(chat, nowMs: 2) })?
            .message.contains("U+0007") == true)
        chat.userName = "Eve"
        chat.text = megabyte
        assertThrows(.chatMessageTooLarge, { () throws(ShowroomError) in try registry.sendChat(chat, nowMs: 2) })

        // A hostile room id in a lookup is refused without being echoed, not "not found".
        let error = assertThrows(.invalidArgument, { () throws(ShowroomError) in try registry.get(Requests.get(megabyte)) })
        XCTAssertLessThan(error?.message.utf8.count ?? 0, 400)
        assertThrows(.invalidArgument, { () throws(ShowroomError) in try registry.join(Requests.join("r1\u{0}", uid: 5), nowMs: 3) })
        assertThrows(.roomNotFound, { () throws(ShowroomError) in try registry.get(Requests.get("nope")) })
    }
}
