import ReplicatedOwnership
import Rooms
import Routing
import ShowroomWire
import XCTest

/// What the coordinator's shell publishes, replicates and asks, as the machine decides it, with
/// plain values and times the test chooses.
final class CoordinatorWritesTests: XCTestCase {
    private let t0: Int64 = 1_700_000_000_000

    func testAChatMessageIsShownOnlyOnceTheOtherHolderHasIt() {
        var room = RoomRoom()
        room.roomID = "r"
        let chat = RoomChange(room: room, message: RoomChatMessage.with { $0.text = "hi" }, notice: .messageAdded)
        let audience = RoomChange(room: room, notice: .userCountChanged)
        let silent = RoomChange(room: room)

        let written = RoomChange.notices(of: [chat, audience, silent], atMs: t0, withholdingChat: true)
        XCTAssertEqual(written.now.map(\.kind), [.userCountChanged], "a change nobody hears of makes no notice")
        XCTAssertEqual(written.onceReplicated.map(\.kind), [.messageAdded])
        XCTAssertEqual(written.onceReplicated.first?.message.text, "hi")
        XCTAssertEqual(written.now.first?.atMs, t0)

        let copied = RoomChange.notices(of: [chat, audience], atMs: t0, withholdingChat: false)
        XCTAssertEqual(copied.now.map(\.kind), [.messageAdded, .userCountChanged], "in order, at once")
        XCTAssertEqual(copied.onceReplicated, [])
    }

    func testARoomWriteOwesItsKeysAndTheTablesAreOwedAsOneKey() throws {
        var node = CoordinatorNode.caughtUp(among: ["c1", "c2"], nowMs: t0)
        var batch = RoomStateBatch()
        batch.rooms = [RoomRoom.with { $0.roomID = "r" }]
        let (_, effects) = node.write(["c2": batch], of: "r")
        XCTAssertEqual(effects.batches.map(\.member), ["c2"])
        XCTAssertEqual(effects.batches.first?.records, [batch])

        var bans = RoomStateBatch()
        bans.bans = [RoomBan.with { $0.uid = 9 }]
        let (_, tables) = node.write(["c2": bans], of: CoordinatorRecords.tablesKey)
        XCTAssertEqual(tables.batches.first?.records, [bans])
        XCTAssertEqual(node.write([:], of: "alone").effects.batches.count, 0, "nobody to send to")
    }

    func testACatchUpAsksForThePageAfterTheLastAndNamesTheMembers() {
        let node = CoordinatorNode.caughtUp(among: ["c1", "c2"], nowMs: t0)
        let request = node.catchUpRequest(for: CatchUp.Ask(member: "c2", round: 1, after: "room-9"))
        XCTAssertTrue(request.catchUp)
        XCTAssertEqual(request.afterRoomID, "room-9")
        XCTAssertEqual(request.members, ["c1", "c2"])
        XCTAssertEqual(request.from, "c1")
        let started = CoordinatorNode(records: CoordinatorRecords(registry: RoomRegistry(),
                                                                  directory: ChannelDirectory(placementExpiryMs: 1, relayThreshold: 0)),
                                      selfID: "c1", startedAtMs: t0)
        XCTAssertEqual(started.catchUpRequest(for: CatchUp.Ask(member: "c2", round: 1, after: "")).members, ["c1"],
                       "no ring seen yet: itself")
    }

    func testAForwardRunsOnlyWhenTheEdgeStartedItOrHadItAndTheRoomIsInAPK() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        node.records.registry.mustCreate("a", nowMs: t0)
        let forward = PKForward(edge: "edge-1", channel: "a", uid: 7, destination: "b")
        node.forwardAnswered(forward, for: "a", refusal: nil)
        XCTAssertTrue(node.edgeInstructions.forwards.isEmpty, "the room is not in a PK (any more)")

        var pk = try XCTUnwrap(node.records.registry.room("a"))
        pk.interaction = RoomRoomInteraction.with { $0.kind = .pk }
        _ = node.records.receive(RoomStateBatch.with { $0.rooms = [pk] }, nowMs: t0)
        XCTAssertEqual(node.records.registry.room("a")?.interaction.kind, .pk)
        node.forwardAnswered(forward, for: "a", refusal: .unavailable("the host has not joined"))
        XCTAssertTrue(node.edgeInstructions.forwards.isEmpty, "refused: tried again next tick")
        node.forwardAnswered(forward, for: "a", refusal: ShowroomError(.forwardAlreadyStarted, "running"))
        XCTAssertEqual(node.edgeInstructions.forwards["a"], forward, "already running there counts as started")
    }
}
