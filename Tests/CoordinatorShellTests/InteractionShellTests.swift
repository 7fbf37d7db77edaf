import NodeRuntime
import Rooms
import Routing
import ShowroomTesting
import ShowroomWire
import XCTest
@testable import Coordinator

/// PK and co-host through real coordinator shells on an in-process network: requests at any
/// coordinator, two rooms with different owners, tokens, the stage at the edges, and a PK that
/// outlives the coordinator owning one of its rooms.
final class InteractionShellTests: XCTestCase {
    let ids = ["coord-a", "coord-b", "coord-c"]

    func roomID(ownedBy owner: String, successor: String) -> String {
        let ring = OwnerRing(.coordinator, memberIDs: ids)
        for n in 0..<10_000 where ring.holders(of: "room-\(n)", count: 2) == [owner, successor] { return "room-\(n)" }
        preconditionFailure("no room id with owner \(owner)")
    }

    func token(_ channel: String, _ uid: UInt32) -> String { (try? TestApp.token(channel: channel, uid: uid)) ?? "" }

    func invite(_ cluster: CoordinatorHarness, from: String, to: String, uid: UInt32, at id: String,
                token: String? = nil) throws -> RoomInteractionResponse {
        try cluster.node(id).ask(.roomPkInvite, RoomPkInviteRequest.with {
            $0.roomID = from
            $0.uid = uid
            $0.token = token ?? self.token(from, uid)
            $0.peerRoomID = to
        }, as: RoomInteractionResponse.self)
    }

    func answer(_ cluster: CoordinatorHarness, room: String, uid: UInt32, invitation: String, at id: String) throws -> RoomInteractionResponse {
        try cluster.node(id).ask(.roomPkAnswer, RoomPkAnswerRequest.with {
            $0.roomID = room
            $0.uid = uid
            $0.token = token(room, uid)
            $0.invitationID = invitation
            $0.accept = true
        }, as: RoomInteractionResponse.self)
    }

    func stop(_ cluster: CoordinatorHarness, room: String, uid: UInt32, pk: String, at id: String) throws -> RoomInteractionResponse {
        try cluster.node(id).ask(.roomPkStop, RoomPkStopRequest.with {
            $0.roomID = room
            $0.uid = uid
            $0.token = token(room, uid)
            $0.pkID = pk
        }, as: RoomInteractionResponse.self)
    }

    func events(_ cluster: CoordinatorHarness, _ roomID: String) -> [RoomInteractionEventType] {
        cluster.sinks.values.flatMap(\.roomNotices).filter { $0.roomID == roomID && $0.kind == .interactionEvent }
            .sorted { $0.room.version < $1.room.version }.map(\.event.type)
    }

    func testAPKBetweenRoomsOfTwoCoordinatorsStartsAndStopsAndTheEdgesSeeTheStage() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        let a = roomID(ownedBy: "coord-a", successor: "coord-b")
        let b = roomID(ownedBy: "coord-b", successor: "coord-c")
        _ = try cluster.create(at: "coord-c", owner: 1, roomID: a)
        _ = try cluster.create(at: "coord-c", owner: 2, roomID: b)

        XCTAssertThrowsError(try invite(cluster, from: a, to: b, uid: 1, at: "coord-c", token: token(a, 9))) {
            XCTAssertTrue((2000..<3000).contains(($0 as? ShowroomError)?.code.rawValue ?? 0), "a token of another uid is refused: \($0)")
        }
        XCTAssertThrowsError(try invite(cluster, from: a, to: b, uid: 1, at: "coord-c", token: "")) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .tokenMalformed)
        }
        let invited = try invite(cluster, from: a, to: b, uid: 1, at: "coord-c")
        XCTAssertEqual(invited.request.toUid, 2)
        XCTAssertEqual(cluster.room(b, at: "coord-b")?.pending.first?.id, invited.request.id, "the invited room holds it")
        let started = try answer(cluster, room: b, uid: 2, invitation: invited.request.id, at: "coord-a")
        XCTAssertEqual(started.room.interaction.kind, .pk)
        XCTAssertEqual(cluster.room(a, at: "coord-a")?.interaction.id, invited.request.id)
        XCTAssertEqual(cluster.room(a, at: "coord-b")?.interaction.id, invited.request.id, "replicated to A's successor")
        XCTAssertEqual(events(cluster, a), [.pkInvited, .pkAccepted, .pkStarted])
        XCTAssertEqual(events(cluster, b), [.pkInvited, .pkAccepted, .pkStarted])
        let stageOfA = try XCTUnwrap(cluster.edgeStages["edge-1"]?.last { $0.channel == a })
        XCTAssertEqual(stageOfA.uids, [1, 2], "A's channel: its host and the forwarded peer host")

        _ = try stop(cluster, room: a, uid: 1, pk: invited.request.id, at: "coord-c")
        XCTAssertEqual(cluster.room(b, at: "coord-b")?.interaction.kind, .idle)
        XCTAssertEqual(events(cluster, b).last, .pkEnded)
        XCTAssertEqual(cluster.edgeStages["edge-1"]?.last { $0.channel == a }?.uids, [1])
        XCTAssertThrowsError(try stop(cluster, room: b, uid: 2, pk: invited.request.id, at: "coord-a")) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .interactionNotFound)
        }
    }

    func testAPKOutlivesTheCoordinatorOwningOneOfItsRoomsAndStopsNormally() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        let a = roomID(ownedBy: "coord-a", successor: "coord-b")
        let b = roomID(ownedBy: "coord-c", successor: "coord-a")
        _ = try cluster.create(at: "coord-b", owner: 1, roomID: a)
        _ = try cluster.create(at: "coord-b", owner: 2, roomID: b)
        let invited = try invite(cluster, from: a, to: b, uid: 1, at: "coord-b")
        _ = try answer(cluster, room: b, uid: 2, invitation: invited.request.id, at: "coord-b")

        cluster.kill("coord-a")
        XCTAssertEqual(cluster.room(a, at: "coord-b")?.interaction.id, invited.request.id, "the successor serves room A in its PK")
        cluster.network.advance(by: .seconds(6))
        XCTAssertEqual(cluster.edgeStages["edge-1"]?.last { $0.channel == a }?.uids, [1, 2],
                       "the new owner keeps the stage at the edges")
        _ = try stop(cluster, room: b, uid: 2, pk: invited.request.id, at: "coord-c")
        XCTAssertEqual(cluster.room(a, at: "coord-b")?.interaction.kind, .idle, "the stop reaches room A at its new owner")
        XCTAssertEqual(cluster.room(b, at: "coord-c")?.interaction.kind, .idle)
    }

    func testACoHostIsSeatedByTheOwnerOnlyAndTheEdgesHearOfTheSeat() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1", "edge-2"])
        let room = try cluster.create(at: "coord-a", owner: 1)
        _ = try cluster.join(room.roomID, uid: 5, at: "coord-b")
        let applied = try cluster.node("coord-c").ask(.roomCohostApply, RoomCoHostApplyRequest.with {
            $0.roomID = room.roomID
            $0.uid = 5
            $0.token = token(room.channel, 5)
        }, as: RoomInteractionResponse.self)
        let selfPromotion = RoomCoHostAnswerRequest.with {
            $0.roomID = room.roomID
            $0.uid = 5
            $0.token = token(room.channel, 5)
            $0.requestID = applied.request.id
            $0.accept = true
        }
        XCTAssertThrowsError(try cluster.node("coord-c").ask(.roomCohostAnswer, selfPromotion, as: RoomInteractionResponse.self)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .interactionNotAllowed, "a viewer cannot seat itself")
        }
        var forged = selfPromotion
        forged.uid = 1
        XCTAssertThrowsError(try cluster.node("coord-c").ask(.roomCohostAnswer, forged, as: RoomInteractionResponse.self),
                             "claiming the owner's uid with the viewer's token is refused")
        var byOwner = forged
        byOwner.token = token(room.channel, 1)
        let seated = try cluster.node("coord-c").ask(.roomCohostAnswer, byOwner, as: RoomInteractionResponse.self)
        XCTAssertEqual(seated.room.interaction.seats.map(\.uid), [5])
        for edge in ["edge-1", "edge-2"] {
            XCTAssertEqual(cluster.edgeStages[edge]?.last { $0.channel == room.channel }?.uids, [1, 5], "edge \(edge) hears of the seat")
        }
        _ = try cluster.leave(room.roomID, uid: 5, at: "coord-b")
        XCTAssertEqual(cluster.room(room.roomID, at: cluster.holders(of: room.roomID)[0])?.interaction.kind, .idle,
                       "leaving the room ends the seat")
        XCTAssertEqual(cluster.edgeStages["edge-1"]?.last { $0.channel == room.channel }?.uids, [1])
    }

    func testTwoRoomsAskingForARandomMatchArePairedThroughTheMatcher() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        let a = roomID(ownedBy: "coord-a", successor: "coord-b")
        let b = roomID(ownedBy: "coord-c", successor: "coord-a")
        _ = try cluster.create(at: "coord-b", owner: 1, roomID: a)
        _ = try cluster.create(at: "coord-b", owner: 2, roomID: b)
        func match(_ room: String, _ uid: UInt32) throws -> RoomRoom {
            try cluster.node("coord-b").ask(.roomPkMatch, RoomPkMatchRequest.with {
                $0.roomID = room
                $0.uid = uid
                $0.token = token(room, uid)
            }, as: RoomInteractionResponse.self).room
        }
        XCTAssertGreaterThan(try match(a, 1).matchWaitingUntilMs, 0)
        _ = try match(b, 2)
        cluster.network.advance(by: .seconds(2))
        let roomA = try XCTUnwrap(cluster.room(a, at: "coord-a"))
        XCTAssertEqual(roomA.interaction.kind, .pk, "paired by the matcher, started by the lower room's owner")
        XCTAssertEqual(roomA.interaction.peerRoomID, b)
        XCTAssertEqual(cluster.room(b, at: "coord-c")?.interaction.id, roomA.interaction.id)
    }
}
