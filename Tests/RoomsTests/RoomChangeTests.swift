import Rooms
import ShowroomWire
import XCTest

/// What a room's users hear of a change.
final class RoomChangeTests: XCTestCase {
    func testAChangeUsersHearOfBecomesANoticeWithTheRoomAsItIsNow() throws {
        var random = SeededGenerator(seed: 9)
        var registry = RoomRegistry()
        let created = try registry.create(Requests.create(id: "r1"), nowMs: 1_000, using: &random)
        let chat = try registry.sendChat(Requests.chat("r1", text: "hello"), nowMs: 2_000)
        let notice = try XCTUnwrap(chat.roomNotice(atMs: 2_500))
        XCTAssertEqual(notice.roomID, "r1")
        XCTAssertEqual(notice.kind, chat.notice)
        XCTAssertEqual(notice.room, chat.room)
        XCTAssertEqual(notice.message.text, "hello")
        XCTAssertFalse(notice.hasEvent)
        XCTAssertEqual(notice.atMs, 2_500)

        var quiet = created
        quiet.notice = nil
        XCTAssertNil(quiet.roomNotice(atMs: 3_000), "a change nobody hears of is published as nothing")
    }
}
