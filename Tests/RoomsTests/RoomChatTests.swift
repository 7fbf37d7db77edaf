import Rooms
import ShowroomWire
import ShowroomTesting
import XCTest

final class RoomChatTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000

    func testSendChatNumbersMessagesAndBumpsTheRoom() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        let first = try registry.sendChat(Requests.chat("r", uid: 11, text: "hello"), nowMs: t0 + 1)
        XCTAssertEqual(first.notice, .messageAdded)
        XCTAssertEqual(first.message?.sequence, 1)
        XCTAssertEqual(first.message?.roomID, "r")
        XCTAssertEqual(first.message?.uid, 11)
        XCTAssertEqual(first.message?.userName, "User 11")
        XCTAssertEqual(first.message?.text, "hello")
        XCTAssertEqual(first.message?.sentAtMs, t0 + 1)
        XCTAssertEqual(first.room.lastChatSequence, 1)
        XCTAssertEqual(first.room.version, 2)
        XCTAssertEqual(first.room.updatedAtMs, t0 + 1)
        let second = try registry.sendChat(Requests.chat("r", uid: 12, text: "hi"), nowMs: t0 + 2)
        XCTAssertEqual(second.message?.sequence, 2)
        XCTAssertEqual(registry.messages(in: "r").map(\.sequence), [1, 2])
    }

    func testAReplicaMissingAnEarlierMessageFindsTheGapAndOneHoldingThemAllDoesNot() throws {
        var owner = RoomRegistry()
        owner.mustCreate("r", nowMs: t0)
        var replica = RoomRegistry()
        _ = replica.merge(rooms: [try XCTUnwrap(owner.room("r"))], messages: [])
        let first = try XCTUnwrap(owner.sendChat(Requests.chat("r", text: "one"), nowMs: t0 + 1).message)
        let second = try XCTUnwrap(owner.sendChat(Requests.chat("r", text: "two"), nowMs: t0 + 2).message)

        // The replica missed the write of #1: #2 alone would leave its chat skipping a number.
        XCTAssertEqual(replica.chatGap(before: [second]), "r")
        XCTAssertNil(replica.chatGap(before: [first]))
        XCTAssertNil(replica.chatGap(before: [first, second]))
        XCTAssertNil(RoomRegistry().chatGap(before: [first]), "a room not held yet starts at #1")
        XCTAssertEqual(RoomRegistry().chatGap(before: [second]), "r")
        _ = replica.merge(rooms: [try XCTUnwrap(owner.room("r"))], messages: [first, second])
        XCTAssertNil(replica.chatGap(before: [second]), "a message held again is no gap")
        // A peer's number at the top of the range does not trap.
        var hostile = second
        hostile.sequence = .max
        XCTAssertEqual(replica.chatGap(before: [hostile]), "r")
    }

    func testChatSizeLimitAtTheExactBoundary() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        XCTAssertNoThrow(try registry.sendChat(Requests.chat("r", text: String(repeating: "a", count: 1024)), nowMs: t0))
        let error = assertThrows(.chatMessageTooLarge) { () throws(ShowroomError) in
            try registry.sendChat(Requests.chat("r", text: String(repeating: "a", count: 1025)), nowMs: t0)
        }
        XCTAssertTrue(error?.message.contains("1025") == true && error?.message.contains("1024") == true, error?.message ?? "")
        // Bytes, not characters: 342 three-byte characters are 1026 bytes.
        assertThrows(.chatMessageTooLarge) { () throws(ShowroomError) in
            try registry.sendChat(Requests.chat("r", text: String(repeating: "€", count: 342)), nowMs: t0)
        }
        XCTAssertEqual(registry.messages(in: "r").count, 1, "refused messages are not kept")
    }

    func testChatRefusals() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.sendChat(Requests.chat("r", text: ""), nowMs: t0) }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.sendChat(Requests.chat("r", text: " \n "), nowMs: t0) }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.sendChat(Requests.chat("r", uid: 0, text: "x"), nowMs: t0) }
        assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.sendChat(Requests.chat("x", text: "x"), nowMs: t0) }
        _ = try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0)
        assertThrows(.roomClosed) { () throws(ShowroomError) in try registry.sendChat(Requests.chat("r", text: "x"), nowMs: t0) }
    }

    func testHistoryKeepsTheNewestAndReportsTrimmedMessages() throws {
        var registry = RoomRegistry(settings: RoomSettings(chatHistoryKept: 3))
        registry.mustCreate("r", nowMs: t0)
        var changes: [RoomChange] = []
        for index in 1...5 { changes.append(try registry.sendChat(Requests.chat("r", text: "m\(index)"), nowMs: t0 + Int64(index))) }
        XCTAssertEqual(changes.map(\.droppedMessageSequences), [[], [], [], [1], [2]])
        XCTAssertEqual(registry.messages(in: "r").map(\.sequence), [3, 4, 5])
        XCTAssertEqual(registry.room("r")?.lastChatSequence, 5)
    }

    func testHistoryWindows() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        for index in 1...120 { _ = try registry.sendChat(Requests.chat("r", text: "m\(index)"), nowMs: t0 + Int64(index)) }

        let latest = try registry.history(Requests.history("r"))
        XCTAssertEqual(latest.messages.count, 50, "limit 0 means 50")
        XCTAssertEqual(latest.messages.first?.sequence, 71, "the most recent 50, oldest first")
        XCTAssertEqual(latest.messages.last?.sequence, 120)

        let hundred = try registry.history(Requests.history("r", limit: 100))
        XCTAssertEqual(hundred.messages.map(\.sequence), Array(21...120))

        let after = try registry.history(Requests.history("r", limit: 5, after: 110))
        XCTAssertEqual(after.messages.map(\.sequence), [116, 117, 118, 119, 120])

        let few = try registry.history(Requests.history("r", limit: 10, after: 117))
        XCTAssertEqual(few.messages.map(\.sequence), [118, 119, 120])

        let none = try registry.history(Requests.history("r", after: 120))
        XCTAssertTrue(none.messages.isEmpty)

        assertThrows(.invalidArgument) { () throws(ShowroomError) in try registry.history(Requests.history("r", limit: 101)) }
        assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.history(Requests.history("x")) }
    }

    func testHistoryOfAClosedRoomUntilPurged() throws {
        var registry = RoomRegistry()
        registry.mustCreate("r", nowMs: t0)
        _ = try registry.sendChat(Requests.chat("r", text: "bye"), nowMs: t0)
        _ = try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + 1)
        XCTAssertEqual(try registry.history(Requests.history("r")).messages.map(\.text), ["bye"])
        _ = registry.tick(nowMs: t0 + 1 + 10 * 60_000)
        assertThrows(.roomNotFound) { () throws(ShowroomError) in try registry.history(Requests.history("r")) }
        XCTAssertTrue(registry.messages(in: "r").isEmpty)
    }
}
