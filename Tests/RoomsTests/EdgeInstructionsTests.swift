import Rooms
import ShowroomWire
import XCTest

/// What a coordinator tells the edges: stages when they change and on the refresh, PK forwards
/// started and stopped as PKs begin and end.
final class EdgeInstructionsTests: XCTestCase {
    private func room(_ id: String, owner: UInt32 = 7, state: RoomRoomState = .open,
                      pkWith peer: String? = nil) -> RoomRoom {
        RoomRoom.with {
            $0.roomID = id
            $0.channel = id
            $0.ownerUid = owner
            $0.state = state
            if let peer {
                $0.interaction.kind = .pk
                $0.interaction.mediaMode = .forward
                $0.interaction.peerChannel = peer
            }
        }
    }

    func testAStageGoesOutWhenItChangesAndEveryStageOnTheRefresh() {
        var instructions = EdgeInstructions(refreshTicks: 3)
        let mine = room("a")
        let theirs = room("b")
        let owns: (String) -> Bool = { $0 == "a" }
        XCTAssertEqual(instructions.stages(of: [mine, theirs], onlyChanged: true, owns: owns).map(\.channel), ["a"],
                       "only rooms owned here")
        XCTAssertEqual(instructions.stages(of: [mine], onlyChanged: true, owns: owns), [], "unchanged: not sent again")
        var closed = mine
        closed.state = .closed
        let removal = instructions.stages(of: [closed], onlyChanged: true, owns: owns)
        XCTAssertEqual(removal.map(\.removed), [true])
        XCTAssertEqual(instructions.stages(of: [closed], onlyChanged: false, owns: owns).count, 1, "the refresh sends all")
        XCTAssertEqual([instructions.tick(), instructions.tick(), instructions.tick(), instructions.tick()],
                       [false, false, true, false])
        instructions.forgetStage(of: "a")
        XCTAssertEqual(instructions.stagesSent, 0)
        XCTAssertEqual(instructions.stages(of: [closed], onlyChanged: true, owns: owns).count, 1, "a forgotten channel is new")
    }

    func testAForwardStartsWithAPKOnItsOriginAndStopsWhenThePKEnds() throws {
        var instructions = EdgeInstructions()
        let origins = ["a": "edge-1"]
        var rooms = [room("a", pkWith: "b"), room("c", pkWith: "d")]
        let wanted = EdgeInstructions.wantedForwards(of: rooms, owns: { _ in true }, origin: { origins[$0] })
        XCTAssertEqual(wanted.keys.sorted(), ["a"], "a room whose channel is on no edge forwards nothing yet")
        var (stop, start) = instructions.reconcile(wanted: wanted)
        XCTAssertEqual(stop, [])
        XCTAssertEqual(start.map(\.roomID), ["a"])
        let forward = try XCTUnwrap(start.first?.forward)
        XCTAssertEqual(forward, PKForward(edge: "edge-1", channel: "a", uid: 7, destination: "b"))
        XCTAssertEqual(instructions.reconcile(wanted: wanted).start.count, 1, "not started yet: asked again")
        instructions.started(forward, for: "a")
        (stop, start) = instructions.reconcile(wanted: wanted)
        XCTAssertEqual(stop, [])
        XCTAssertEqual(start.count, 0, "running: nothing to do")

        rooms[0].interaction = RoomRoomInteraction()
        (stop, start) = instructions.reconcile(wanted: EdgeInstructions.wantedForwards(
            of: rooms, owns: { _ in true }, origin: { origins[$0] }))
        XCTAssertEqual(stop, [forward], "the PK ended: the forward stops")
        XCTAssertEqual(start.count, 0)
        XCTAssertTrue(instructions.forwards.isEmpty)
    }
}
