import Foundation
import Rooms
import Routing
import ShowroomWire
import SwiftProtobuf
import XCTest

/// Where a room request goes and what it comes to at the coordinator's machine
/// (``CoordinatorNode/route(_:roomID:forwarded:endpoint:)``, ``CoordinatorNode/serve(_:nowMs:using:checks:)``),
/// with plain values, fake checks and times the test chooses.
final class RoomRequestTests: XCTestCase {
    private let t0: Int64 = 1_700_000_000_000
    private var random = SeededGenerator(seed: 5)
    private let endpoints = ["c1": "tcp://c1", "c2": "tcp://c2"]

    /// Checks that pass, noting what they were asked.
    private final class Checks {
        var admin: [String] = []
        var members: [String] = []
        var refusal: ShowroomError?

        var checks: RoomRequestChecks {
            RoomRequestChecks(admin: { [self] _, action, target throws(ShowroomError) in
                admin.append("\(action) \(target)")
                if let refusal { throw refusal }
            }, member: { [self] _, uid, channel throws(ShowroomError) in
                members.append("\(uid) \(channel)")
                if let refusal { throw refusal }
            })
        }
    }

    private func envelope(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, forwarded: Bool = false) throws -> WireEnvelope {
        var envelope = try WireEnvelope(request: kind, id: 1, body: body)
        envelope.forwarded = forwarded
        return envelope
    }

    private func refusal(_ body: () throws -> Void) -> ShowroomError? {
        do {
            try body()
            return nil
        } catch {
            return error as? ShowroomError ?? .internal("\(error)")
        }
    }

    /// Room ids owned by c1 and by c2 when both are coordinators.
    private func rooms(of node: CoordinatorNode) throws -> (mine: String, theirs: String) {
        let ids = (0..<100).map { "room-\($0)" }
        return (try XCTUnwrap(ids.first { node.ownership.owns($0) }), try XCTUnwrap(ids.first { !node.ownership.owns($0) }))
    }

    // MARK: - Routing

    func testTheOwnerServesOthersForwardAndAForwardedWriteTheOwnerDisownsIsRefused() throws {
        let node = CoordinatorNode.caughtUp(among: ["c1", "c2"], nowMs: t0)
        let (mine, theirs) = try rooms(of: node)
        let route = { (kind: WireMessageKind, room: String, forwarded: Bool) in
            node.route(kind, roomID: room, forwarded: forwarded, endpoint: { self.endpoints[$0] })
        }
        XCTAssertEqual(route(.roomJoin, mine, false), .serve)
        XCTAssertEqual(route(.roomJoin, theirs, false), .forward(owner: "c2", endpoint: "tcp://c2"))
        XCTAssertEqual(route(.roomJoin, mine, true), .serve, "forwarded to its owner")
        XCTAssertEqual(route(.roomGet, theirs, true), .serve, "a read forwarded here is answered from the replica")
        XCTAssertEqual(route(.roomChatHistory, theirs, true), .serve)
        XCTAssertEqual(route(.roomJoin, theirs, true), .refuse(.unavailable(
            "coordinator c1 takes c2 for the owner of room \(theirs); the coordinators are settling, retry in a moment")),
                       "never written by a coordinator that does not take itself for the owner")
        XCTAssertEqual(node.route(.roomJoin, roomID: theirs, forwarded: false, endpoint: { _ in nil }), .serveWithoutOwner)
    }

    func testAnOwnerThatDoesNotAnswerLeavesReadsToTheReplicaAndRefusesWrites() {
        let silence = ShowroomError.deadlineExceeded("no answer")
        XCTAssertNil(CoordinatorNode.ownerDidNotAnswer(.roomGet, roomID: "r", owner: "c2", error: silence))
        XCTAssertNil(CoordinatorNode.ownerDidNotAnswer(.roomChatHistory, roomID: "r", owner: "c2", error: silence))
        XCTAssertEqual(CoordinatorNode.ownerDidNotAnswer(.roomChatSend, roomID: "r", owner: "c2", error: silence),
                       .unavailable("the coordinator owning room r (c2) did not answer (no answer); retry in a moment"))
        let node = CoordinatorNode.caughtUp(nowMs: t0)
        XCTAssertEqual(node.holdRefusal(of: "r", seesMostOfTheCluster: true),
                       .unavailable("coordinator c1 is taking over room r from the others; retry in a moment"))
        XCTAssertEqual(node.holdRefusal(of: "r", seesMostOfTheCluster: false).code, .unavailable)
    }

    func testAChannelRequestGoesToTheChannelsOwnerOnce() throws {
        let node = CoordinatorNode.caughtUp(among: ["c1", "c2"], nowMs: t0)
        let (mine, theirs) = try rooms(of: node)
        XCTAssertNil(node.channelOwner(toAsk: mine, forwarded: false, endpoint: { self.endpoints[$0] }))
        XCTAssertEqual(node.channelOwner(toAsk: theirs, forwarded: false, endpoint: { self.endpoints[$0] })?.endpoint, "tcp://c2")
        XCTAssertNil(node.channelOwner(toAsk: theirs, forwarded: true, endpoint: { self.endpoints[$0] }), "passed on once")
        XCTAssertNil(node.channelOwner(toAsk: theirs, forwarded: false, endpoint: { _ in nil }), "an owner not known is not asked")
    }

    func testACreateWithoutAnIDIsGivenOneBeforeItIsRouted() throws {
        var request = try envelope(.roomCreate, Requests.create())
        let id = try CoordinatorNode.roomID(of: &request, using: &random)
        XCTAssertFalse(id.isEmpty)
        XCTAssertEqual(try request.decodeBody(RoomCreateRoomRequest.self).roomID, id, "the owner creates it under that id")
        var named = try envelope(.roomCreate, Requests.create(id: "mine"))
        XCTAssertEqual(try CoordinatorNode.roomID(of: &named, using: &random), "mine")
        var invite = try envelope(.roomPkInvite, RoomPkInviteRequest.with { $0.roomID = "a" })
        XCTAssertEqual(try CoordinatorNode.roomID(of: &invite, using: &random), "a")
        var update = try envelope(.roomPeerUpdate, RoomPeerUpdateRequest.with { $0.roomID = "b" })
        XCTAssertEqual(try CoordinatorNode.roomID(of: &update, using: &random), "b")
        var stranger = try envelope(.channelPlace, RoomPlaceChannelRequest())
        XCTAssertEqual(refusal { _ = try CoordinatorNode.roomID(of: &stranger, using: &random) }?.code, .unknownKind)
        var garbage = try envelope(.roomJoin, Requests.join("r", uid: 1))
        garbage.body = Data([0xff, 0xff, 0xff])
        XCTAssertNotNil(refusal { _ = try CoordinatorNode.roomID(of: &garbage, using: &random) })
    }

    func testTheFirstWriteOfARoomTakenOverBeginsANewTermOnce() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        let room = node.records.registry.mustCreate("r", nowMs: t0)
        XCTAssertNil(node.beginRoomTerm(of: "gone"), "no room, no term")
        let raised = try XCTUnwrap(node.beginRoomTerm(of: "r"))
        XCTAssertGreaterThan(raised.room.version, room.version)
        XCTAssertEqual(node.records.registry.room("r")?.version, raised.room.version)
        XCTAssertNil(node.beginRoomTerm(of: "r"), "once per term")
    }

    // MARK: - Serving

    func testWritesAreWrittenBeforeTheyAreAnsweredAndReadsAreAnsweredAtOnce() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        let checks = Checks()
        let created = try node.serve(try envelope(.roomCreate, Requests.create(id: "r")), nowMs: t0, using: &random, checks: checks.checks)
        XCTAssertEqual(created.plan.changes.map(\.room.roomID), ["r"])
        XCTAssertEqual(created.plan.next, .done)
        let answer = try node.answer(created.answer, after: .success(())).get() as? RoomCreateRoomResponse
        XCTAssertEqual(answer?.room.roomID, "r")

        let read = try node.serve(try envelope(.roomGet, Requests.get("r")), nowMs: t0, using: &random, checks: checks.checks)
        XCTAssertEqual(read.plan, InteractionPlan(), "a read writes nothing")
        XCTAssertEqual((try node.answer(read.answer, after: .success(())).get() as? RoomGetRoomResponse)?.room.roomID, "r")
        XCTAssertEqual(refusal {
            _ = try node.serve(try envelope(.roomGet, Requests.get("nope")), nowMs: t0, using: &random, checks: checks.checks)
        }?.code, .roomNotFound)
        XCTAssertEqual(checks.admin + checks.members, [], "nothing needed a secret")
    }

    func testAnAdminCloseIsCheckedBeforeAnythingChanges() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        node.records.registry.mustCreate("r", nowMs: t0)
        let checks = Checks()
        checks.refusal = ShowroomError(.adminUnauthorized, "forged")
        var close = Requests.close("r", uid: 0)
        close.admin = RoomAdminSignature.with { $0.signature = "00" }
        let request = try envelope(.roomClose, close)
        XCTAssertEqual(refusal {
            _ = try node.serve(request, nowMs: t0, using: &random, checks: checks.checks)
        }, ShowroomError(.adminUnauthorized, "forged"))
        XCTAssertEqual(checks.admin, ["close-room r"])
        XCTAssertEqual(node.records.registry.room("r")?.state, .open, "a forged close changes nothing")

        checks.refusal = nil
        let closed = try node.serve(request, nowMs: t0, using: &random, checks: checks.checks)
        XCTAssertEqual(closed.plan.changes.map(\.room.state), [.closed])
        XCTAssertEqual((try node.answer(closed.answer, after: .success(())).get() as? RoomCloseRoomResponse)?.room.state, .closed)
    }

    func testALeaveIsAnsweredWithTheRoomAsWrittenByTheWholePlan() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        node.records.registry.mustCreate("r", nowMs: t0)
        _ = try node.serve(try envelope(.roomJoin, Requests.join("r", uid: 11)), nowMs: t0, using: &random, checks: Checks().checks)
        let left = try node.serve(try envelope(.roomLeave, Requests.leave("r", uid: 11)), nowMs: t0 + 1, using: &random, checks: Checks().checks)
        XCTAssertEqual(left.plan.changes.first?.room.audienceCount, 0)
        // Changed again before the answer: the answer is the room as held then.
        _ = try node.serve(try envelope(.roomJoin, Requests.join("r", uid: 12)), nowMs: t0 + 2, using: &random, checks: Checks().checks)
        XCTAssertEqual((try node.answer(left.answer, after: .success(())).get() as? RoomLeaveRoomResponse)?.room.audienceCount, 1)
        let gone = CoordinatorNode.caughtUp(nowMs: t0)
        XCTAssertEqual((try gone.answer(left.answer, after: .success(())).get() as? RoomLeaveRoomResponse)?.room.audienceCount, 0,
                       "a room gone meanwhile is answered as written")
    }

    func testAPKRequestIsCheckedAgainstItsActorsTokenForTheRoomsChannel() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        node.records.registry.mustCreate("a", owner: 7, channel: "stage-a", nowMs: t0)
        let checks = Checks()
        let invite = { (uid: UInt32, room: String) in
            try self.envelope(.roomPkInvite, RoomPkInviteRequest.with {
                $0.roomID = room
                $0.uid = uid
                $0.token = "token"
                $0.peerRoomID = "b"
            })
        }
        XCTAssertEqual(refusal {
            _ = try node.serve(try invite(0, "a"), nowMs: t0, using: &random, checks: checks.checks)
        }?.code, .invalidArgument, "uid 0 acts for nobody")
        XCTAssertEqual(checks.members, [], "refused before any token is checked")

        checks.refusal = ShowroomError(.tokenChannelMismatch, "someone else's token")
        XCTAssertEqual(refusal {
            _ = try node.serve(try invite(7, "a"), nowMs: t0, using: &random, checks: checks.checks)
        }, ShowroomError(.tokenChannelMismatch, "someone else's token"))
        XCTAssertEqual(checks.members, ["7 stage-a"], "the room's channel, not its id")

        // An unknown room: no channel to check a token for; the registry refuses it as unknown.
        checks.members = []
        let unknown = try node.serve(try invite(7, "nowhere"), nowMs: t0, using: &random, checks: checks.checks)
        XCTAssertEqual(checks.members, [])
        guard case .refused(let error) = unknown.plan.next else { return XCTFail("not refused: \(unknown.plan.next)") }
        XCTAssertEqual(error.code, .roomNotFound)
        guard case .failure(let answered) = node.answer(unknown.answer, after: .failure(error)) else {
            return XCTFail("a refused flow is answered with its refusal")
        }
        XCTAssertEqual(answered, error)
    }

    func testARepeatedInteractionChangesNothingAndAnUnknownKindIsRefused() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        node.records.registry.mustCreate("r", nowMs: t0)
        let set = RoomSetInteractionRequest.with {
            $0.roomID = "r"
            $0.ownerUid = 7
            $0.kind = .idle
            $0.id = "call-1"
        }
        let repeated = try node.serve(try envelope(.roomInteraction, set), nowMs: t0, using: &random, checks: Checks().checks)
        XCTAssertEqual(repeated.plan.changes, [], "idle already: a late clear of a call")
        XCTAssertEqual((try node.answer(repeated.answer, after: .success(())).get() as? RoomSetInteractionResponse)?.room.roomID, "r")
        XCTAssertEqual(refusal {
            _ = try node.serve(try envelope(.channelPlace, RoomPlaceChannelRequest()), nowMs: t0, using: &random, checks: Checks().checks)
        }?.code, .unknownKind)
    }

    // MARK: - Listing

    func testAGatheringCoordinatorAsksTheOthersForOneRoomMoreThanItsClient() throws {
        var registry = RoomRegistry()
        for index in 0..<3 { registry.mustCreate("r\(index)", nowMs: t0 + Int64(index)) }
        let everything: (RoomRoom) -> Bool = { _ in true }

        let (page, ask) = try registry.listing(Requests.list(pageSize: 2), forwarded: false, where: everything)
        XCTAssertEqual(ask?.pageSize, 3)
        XCTAssertEqual(page.rooms.count, 3, "this coordinator's own share is as large")
        XCTAssertEqual(try registry.listing(Requests.list(), forwarded: false, where: everything).ask?.pageSize,
                       UInt32(RoomRegistry.defaultPageSize + 1), "0 means the default")

        let forwarded = try registry.listing(Requests.list(pageSize: UInt32(RoomRegistry.maxPageSize + 1)), forwarded: true, where: everything)
        XCTAssertNil(forwarded.ask, "a coordinator asked by another asks nobody")
        XCTAssertEqual(forwarded.page.rooms.count, 3)
        XCTAssertEqual(refusal {
            _ = try registry.listing(Requests.list(pageSize: UInt32(RoomRegistry.maxPageSize + 1)), forwarded: false, where: everything)
        }?.code, .invalidArgument, "a client asks for at most the largest page")
        XCTAssertEqual(refusal {
            _ = try registry.listing(Requests.list(pageSize: UInt32(RoomRegistry.maxPageSize + 2)), forwarded: true, where: everything)
        }?.code, .invalidArgument)
        XCTAssertEqual(refusal {
            _ = try registry.listing(Requests.list(token: "not-a-token"), forwarded: false, where: everything)
        }?.code, .invalidArgument)

        let bad = ShowroomError.invalidArgument("bad token")
        XCTAssertEqual(RoomRegistry.gatheringFailed(bad), bad)
        XCTAssertEqual(RoomRegistry.gatheringFailed(.deadlineExceeded("c2 silent")),
                       .unavailable("listing rooms needs every coordinator: c2 silent; retry in a moment"))
    }

    // MARK: - Recordings

    func testARecordingStartOrStopIsTheChangeToReplicateAndAReadChangesNothing() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        let start = RoomRecordingRequest.with {
            $0.channel = "show"
            $0.action = .start(RoomRecordingStart())
        }
        let started = try node.serveRecording(start, nowMs: t0, using: &random)
        let recording = try XCTUnwrap(started.changed)
        XCTAssertTrue(recording.id.hasPrefix("rec-"))
        XCTAssertEqual(started.answer.recordings.map(\.id), [recording.id])

        let get = RoomRecordingRequest.with {
            $0.channel = "show"
            $0.action = .get(recording.id)
        }
        XCTAssertNil(try node.serveRecording(get, nowMs: t0 + 1, using: &random).changed)
        let stop = RoomRecordingRequest.with {
            $0.channel = "show"
            $0.action = .stop(recording.id)
        }
        XCTAssertEqual(try node.serveRecording(stop, nowMs: t0 + 2, using: &random).changed?.stoppedMs, t0 + 2)
        XCTAssertEqual(refusal {
            _ = try node.serveRecording(RoomRecordingRequest.with { $0.channel = "show" }, nowMs: t0, using: &random)
        }?.code, .invalidArgument, "a request naming no action")
        XCTAssertNotNil(refusal {
            _ = try node.serveRecording(RoomRecordingRequest.with {
                $0.channel = "show"
                $0.action = .get("rec-unknown")
            }, nowMs: t0, using: &random)
        })
    }

    // MARK: - Members

    func testTheRingsComeFromTheAliveCoordinatorsAndThisOneCountsWhateverItsState() {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        let look: [CoordinatorNode.MemberLook] = [
            .init(nodeID: "c2", nodeRole: .coordinator, state: .alive),
            .init(nodeID: "c3", nodeRole: .coordinator, state: .suspect),
            .init(nodeID: "c4", nodeRole: .coordinator, state: .left),
            .init(nodeID: "x1", nodeRole: nil, state: .alive),
            .init(nodeID: "", nodeRole: .coordinator, state: .alive),
            .init(nodeID: "e1", nodeRole: .edge, state: .alive),
        ]
        let taken = node.membersChanged(look, nowMs: t0 + 1)
        XCTAssertEqual(node.takeOver.ring?.members, ["c1", "c2"], "this coordinator, absent from the look, is a member all the same")
        XCTAssertEqual(node.ownership.ring.members, ["c1", "c2"])
        XCTAssertEqual(taken.asks?.map(\.member), ["c2"], "the new member is asked for what this one holds")
        XCTAssertNil(node.membersChanged(look, nowMs: t0 + 2).asks, "the same members again: no new catch-up")
    }

    func testMostOfTheClusterCountsEveryRoleAndNotThoseThatLeft() {
        let node = CoordinatorNode.caughtUp(nowMs: t0)
        let member = { (id: String, state: CoordinatorNode.MemberLook.State) in
            CoordinatorNode.MemberLook(nodeID: id, nodeRole: .edge, state: state)
        }
        XCTAssertTrue(node.seesMostOfTheCluster(in: [member("c1", .alive), member("e1", .alive), member("e2", .dead)]))
        XCTAssertFalse(node.seesMostOfTheCluster(in: [member("c1", .alive), member("e1", .suspect)]), "half is not most")
        XCTAssertTrue(node.seesMostOfTheCluster(in: [member("c1", .alive), member("e1", .left), member("e2", .left)]),
                      "members that left are not counted")
    }

    func testOnlyAnEdgeThatLeftOrWhoseProcessDiedHasItsRunGone() {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        for edge in ["e1", "e2", "e3", "e4"] {
            node.records.directory.edgeReported(edge, run: "\(edge)/1", draining: false, channels: [], edgeAlive: true, nowMs: t0)
        }
        node.edgesDied(in: [
            .init(nodeID: "e1", nodeRole: .edge, state: .dead, linkBroken: true),
            .init(nodeID: "e2", nodeRole: .edge, state: .dead, linkBroken: false),
            .init(nodeID: "e3", nodeRole: .edge, state: .left),
            .init(nodeID: "e4", nodeRole: .coordinator, state: .left),
        ])
        let gone = ["e1", "e2", "e3", "e4"].filter { node.records.directory.isGone(edge: $0, run: "\($0)/1", nowMs: t0) }
        XCTAssertEqual(gone, ["e1", "e3"], "one only cut off keeps its run; a member of another role is no edge")
    }
}
