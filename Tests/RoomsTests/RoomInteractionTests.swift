import Rooms
import ShowroomTesting
import ShowroomWire
import XCTest

/// A room shows its host's 1v1 call: set by the call's owner, cleared by the same call only.
final class RoomInteractionTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000

    func interaction(_ id: String, _ kind: RoomRoomInteractionKind, owner: UInt32 = 7, room: String = "show-1") -> RoomSetInteractionRequest {
        RoomSetInteractionRequest.with {
            $0.roomID = room
            $0.ownerUid = owner
            $0.kind = kind
            $0.id = id
        }
    }

    func registryWithARoom() throws -> RoomRegistry {
        var registry = RoomRegistry()
        var generator = SeededGenerator(seed: 1)
        _ = try registry.create(Requests.create(id: "show-1", owner: 7), nowMs: t0, using: &generator)
        return registry
    }

    func testACallShowsInTheRoomUntilThatCallEnds() throws {
        var registry = try registryWithARoom()
        let entered = try XCTUnwrap(try registry.setInteraction(interaction("7-a", .call), nowMs: t0 + 1_000))
        XCTAssertEqual(entered.notice, .interactionChanged)
        XCTAssertEqual(entered.room.interaction.kind, .call)
        XCTAssertEqual(entered.room.interaction.id, "7-a")
        XCTAssertEqual(entered.room.interaction.sinceMs, t0 + 1_000)
        XCTAssertEqual(entered.room.version, 2)
        XCTAssertNil(try registry.setInteraction(interaction("7-a", .call), nowMs: t0 + 2_000), "a repeat changes nothing")
        XCTAssertNil(try registry.setInteraction(interaction("7-old", .idle), nowMs: t0 + 3_000),
                     "a late clear of an older call changes nothing")
        XCTAssertEqual(registry.room("show-1")?.interaction.id, "7-a")
        let left = try XCTUnwrap(try registry.setInteraction(interaction("7-a", .idle), nowMs: t0 + 4_000))
        XCTAssertEqual(left.room.interaction, RoomRoomInteraction())
        XCTAssertNil(try registry.setInteraction(interaction("7-a", .idle), nowMs: t0 + 5_000))
    }

    func testOnlyTheOwnersOpenRoomTakesItsCall() throws {
        var registry = try registryWithARoom()
        XCTAssertThrowsError(try registry.setInteraction(interaction("8-a", .call, owner: 8), nowMs: t0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .notRoomOwner)
        }
        XCTAssertThrowsError(try registry.setInteraction(interaction("7-a", .call, room: "nowhere"), nowMs: t0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .roomNotFound)
        }
        XCTAssertThrowsError(try registry.setInteraction(interaction("", .call), nowMs: t0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try registry.setInteraction(interaction("7-a", .UNRECOGNIZED(9)), nowMs: t0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
        }
        _ = try registry.close(Requests.close("show-1", uid: 7), byAdmin: false, nowMs: t0)
        XCTAssertThrowsError(try registry.setInteraction(interaction("7-a", .call), nowMs: t0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .roomClosed)
        }
        XCTAssertEqual(registry.room("show-1")?.interaction, RoomRoomInteraction(), "nothing changed")
    }
}
