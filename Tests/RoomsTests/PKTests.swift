import Rooms
import ShowroomWire
import XCTest

/// PK between rooms held by different coordinators: every rule, with the steps between the two
/// owners interleaved as a network could.
final class PKTests: XCTestCase {
    func world() throws -> PKWorld {
        var world = PKWorld(coordinators: 2)
        try world.createRoom("room-a", owner: 1, on: 0)
        try world.createRoom("room-b", owner: 2, on: 1)
        try world.createRoom("room-c", owner: 3, on: 1)
        return world
    }

    func code(_ body: () throws -> Void) -> ShowroomError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? ShowroomError)?.code
        }
    }

    func testInviteAcceptStartsOnePKInBothRoomsAndEitherOwnerStopsIt() throws {
        var world = try world()
        let invitation = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1, durationS: 0))
        XCTAssertEqual(world.types("room-a"), [.pkInvited])
        XCTAssertEqual(world.types("room-b"), [.pkInvited])
        XCTAssertEqual(world.room("room-b")?.pending.first?.toUid, 2)
        XCTAssertEqual(world.room("room-a")?.pending.first?.toChannel, "room-b", "the inviter learns the peer's channel")

        try world.answer("room-b", uid: 2, invitation: invitation.id)
        for (roomID, peer, peerUid) in [("room-a", "room-b", UInt32(2)), ("room-b", "room-a", UInt32(1))] {
            let room = try XCTUnwrap(world.room(roomID))
            XCTAssertEqual(room.interaction.kind, .pk)
            XCTAssertEqual(room.interaction.id, invitation.id, "one PK id in both rooms")
            XCTAssertEqual(room.interaction.peerRoomID, peer)
            XCTAssertEqual(room.interaction.peerUid, peerUid)
            XCTAssertTrue(room.pending.isEmpty)
            XCTAssertFalse(room.hasPkIntent)
            XCTAssertEqual(world.types(roomID).suffix(2), [.pkAccepted, .pkStarted])
            XCTAssertEqual(RoomRegistry.stage(of: room), [1, 2].sorted(), "forwarded PK: the peer host is on the stage")
        }

        XCTAssertEqual(code { try world.stop("room-a", uid: 1, pk: "pk-stale") }, .interactionNotFound, "a stale id stops nothing")
        XCTAssertEqual(code { try world.stop("room-a", uid: 2, pk: invitation.id) }, .notRoomOwner)
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .pk)
        try world.stop("room-b", uid: 2, pk: invitation.id)
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .idle)
        XCTAssertEqual(world.room("room-b")?.interaction.kind, .idle)
        let ended = try XCTUnwrap(world.events["room-a"]?.last)
        XCTAssertEqual(ended.type, .pkEnded)
        XCTAssertEqual(ended.reason, .stopped)
        XCTAssertEqual(ended.byUid, 2, "room A hears who stopped it")
        XCTAssertEqual(world.room("room-a").map(RoomRegistry.stage(of:)), [1])
    }

    func testARoomWhosePeersEndWasLostEndsItsSideWhenTheCheckSaysThePeerIsNotInThePK() throws {
        var world = try world()
        let invitation = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1))
        try world.answer("room-b", uid: 2, invitation: invitation.id)
        world.advance(ms: 10_000)
        // Both in the PK: the check says so, and nothing changes.
        let checks = world.coordinators[0].pkChecks(begunBefore: world.nowMs) { $0 == "room-a" }
        XCTAssertEqual(checks.map(\.roomID), ["room-a"])
        XCTAssertEqual(checks.first?.check.roomID, "room-b")
        let check = try XCTUnwrap(checks.first?.check)
        XCTAssertTrue(try world.deliver(check).committed)
        XCTAssertTrue(world.coordinators[0].pkCheckAnswered(roomID: "room-a", pkID: invitation.id, inPK: true, nowMs: world.nowMs).changes.isEmpty)
        XCTAssertTrue(world.coordinators[0].pkChecks(begunBefore: world.nowMs - 20_000) { _ in true }.isEmpty, "a PK just begun is not checked yet")

        // room-b stops it, and the END for room-a is lost with its coordinator.
        world.holdPeerUpdates = true
        try world.stop("room-b", uid: 2, pk: invitation.id)
        world.held = []
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .pk)
        XCTAssertFalse(try world.deliver(check).committed)
        let outcome = world.coordinators[0].pkCheckAnswered(roomID: "room-a", pkID: invitation.id, inPK: false, nowMs: world.nowMs)
        world.record(outcome)
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .idle)
        XCTAssertEqual(world.events["room-a"]?.last?.type, .pkEnded)
        XCTAssertTrue(outcome.peerUpdates.isEmpty, "the peer ended first: it is told nothing")
        // A stale answer about another PK changes nothing.
        XCTAssertTrue(world.coordinators[0].pkCheckAnswered(roomID: "room-a", pkID: "pk-other", inPK: false, nowMs: world.nowMs).changes.isEmpty)

        // Hostile checks: an empty id, a room not held, are answered no and change nothing.
        var empty = check
        empty.interaction.id = ""
        XCTAssertFalse(try world.deliver(empty).committed)
        var unknown = check
        unknown.roomID = "room-z"
        let (nothing, answer) = try world.coordinators[1].peerUpdate(unknown, nowMs: world.nowMs)
        XCTAssertFalse(answer.committed)
        XCTAssertTrue(nothing.changes.isEmpty)
    }

    func testRejectAndCancelReachTheOtherSide() throws {
        var world = try world()
        let first = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1))
        try world.answer("room-b", uid: 2, invitation: first.id, accept: false)
        XCTAssertEqual(world.types("room-a").last, .pkRejected, "the inviter hears the reject")
        XCTAssertEqual(world.room("room-a")?.pending, [])

        let second = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1))
        XCTAssertEqual(code { try world.answer("room-b", uid: 2, invitation: second.id, cancel: true) }, .interactionNotAllowed,
                       "the invited room rejects, it does not cancel")
        XCTAssertEqual(code { try world.answer("room-a", uid: 1, invitation: second.id) }, .interactionNotAllowed,
                       "nobody accepts their own invitation")
        try world.answer("room-a", uid: 1, invitation: second.id, cancel: true)
        XCTAssertEqual(world.types("room-b").last, .pkCancelled)
        XCTAssertEqual(world.room("room-b")?.pending, [])
        XCTAssertEqual(code { try world.answer("room-b", uid: 2, invitation: second.id) }, .interactionNotFound,
                       "a late accept of a cancelled invitation fails")
    }

    func testInviteToABusyOrClosedRoomAndASecondInvitationAreRefused() throws {
        var world = try world()
        let ab = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1))
        XCTAssertEqual(code { try world.invite("room-a", "room-c", uid: 1) }, .requestPending, "one outgoing invitation per room")
        try world.answer("room-b", uid: 2, invitation: ab.id)
        XCTAssertEqual(code { try world.invite("room-c", "room-b", uid: 3) }, .roomBusy, "room B is in a PK")
        XCTAssertEqual(world.room("room-c")?.pending, [], "a refused offer leaves nothing behind")
        XCTAssertEqual(code { try world.invite("room-a", "room-c", uid: 1) }, .roomBusy, "room A is in a PK")
        XCTAssertEqual(code { try world.invite("room-c", "room-c", uid: 3) }, .invalidArgument)
        XCTAssertEqual(code { try world.invite("room-c", "nowhere", uid: 3) }, .roomNotFound)
        XCTAssertEqual(code { try world.invite("room-c", "room-a", uid: 9) }, .notRoomOwner, "nobody invites for another room")
        XCTAssertEqual(code { try world.invite("room-c", "room-a", uid: 3, durationS: 3601) }, .invalidArgument)
        try world.createRoom("room-d", owner: 4, on: 0)
        try world.close("room-d", uid: 4)
        XCTAssertEqual(code { try world.invite("room-c", "room-d", uid: 3) }, .roomClosed)
    }

    func testInvitationsExpireOnTheServerAndBothSidesHearIt() throws {
        var world = try world()
        let invitation = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1))
        world.advance(ms: 14_000)
        XCTAssertEqual(world.room("room-b")?.pending.count, 1)
        world.advance(ms: 1_000)
        XCTAssertEqual(world.types("room-a").last, .pkExpired)
        XCTAssertEqual(world.types("room-b").last, .pkExpired)
        XCTAssertEqual(code { try world.answer("room-b", uid: 2, invitation: invitation.id) }, .interactionNotFound,
                       "a late accept fails")
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .idle)
    }

    func testGlareYieldsOnePK() throws {
        for lowerAnswersFirst in [true, false] {
            var world = try world()
            // A and B invite each other at the same time: both store their invitation, then both
            // offers cross, then both answers come back.
            let fromA = try world.beginInvite("room-a", "room-b", uid: 1)
            let fromB = try world.beginInvite("room-b", "room-a", uid: 2)
            let offerA = try XCTUnwrap(fromA.offer)
            let offerB = try XCTUnwrap(fromB.offer)
            let answerToA = try world.deliver(offerA)
            let answerToB = try world.deliver(offerB)
            XCTAssertTrue(answerToA.glare && answerToB.glare)
            func answerA(_ world: inout PKWorld) throws {
                let outcome = try world.coordinators[0].pkOfferAnswered(roomID: "room-a", invitationID: offerA.request.id,
                                                                        result: .success(answerToA), nowMs: world.nowMs)
                world.record(outcome)
                try world.finishCommit(try XCTUnwrap(outcome.commit, "the lower room id starts the PK"), at: "room-a")
            }
            func answerB(_ world: inout PKWorld) throws {
                let outcome = try world.coordinators[1].pkOfferAnswered(roomID: "room-b", invitationID: offerB.request.id,
                                                                        result: .success(answerToB), nowMs: world.nowMs)
                world.record(outcome)
                XCTAssertNil(outcome.commit, "the higher room id waits for the lower one's commit")
            }
            if lowerAnswersFirst {
                try answerA(&world)
                try answerB(&world)
            } else {
                try answerB(&world)
                try answerA(&world)
            }
            let a = try XCTUnwrap(world.room("room-a"))
            let b = try XCTUnwrap(world.room("room-b"))
            XCTAssertEqual(a.interaction.kind, .pk)
            XCTAssertEqual(b.interaction.kind, .pk)
            XCTAssertEqual(a.interaction.id, b.interaction.id, "one PK, never two")
            XCTAssertEqual(a.interaction.id, offerA.request.id, "the lower room id's invitation wins")
            XCTAssertTrue(a.pending.isEmpty && b.pending.isEmpty)
        }

        // Inviting a room that invited you already accepts its invitation.
        var later = try world()
        let fromC = try XCTUnwrap(try later.invite("room-c", "room-a", uid: 3))
        try later.invite("room-a", "room-c", uid: 1)
        XCTAssertEqual(later.room("room-a")?.interaction.id, fromC.id)
        XCTAssertEqual(later.room("room-c")?.interaction.id, fromC.id)
    }

    func testConcurrentAcceptsTheFirstWinsTheOthersAreBusyAndItsOtherInvitationsGo() throws {
        var world = PKWorld(coordinators: 3)
        try world.createRoom("room-a", owner: 1, on: 0)
        try world.createRoom("room-b", owner: 2, on: 1)
        try world.createRoom("room-c", owner: 3, on: 2)
        try world.createRoom("room-d", owner: 4, on: 2)
        // B and C both invite A; A invites D.
        let fromB = try XCTUnwrap(try world.invite("room-b", "room-a", uid: 2))
        let fromC = try XCTUnwrap(try world.invite("room-c", "room-a", uid: 3))
        let toD = try XCTUnwrap(try world.invite("room-a", "room-d", uid: 1))
        // D accepts A's invitation while A accepts B's: A's intent is written first, so D's commit
        // at A is refused as busy, and A's PK with B goes ahead.
        let acceptB = try world.beginAnswer("room-a", uid: 1, invitation: fromB.id)
        let acceptD = try world.beginAnswer("room-d", uid: 4, invitation: toD.id)
        XCTAssertEqual(code { _ = try world.finish(acceptD, at: "room-d") }, .roomBusy)
        _ = try world.finish(acceptB, at: "room-a")
        XCTAssertEqual(world.room("room-a")?.interaction.peerRoomID, "room-b")
        XCTAssertEqual(world.room("room-b")?.interaction.peerRoomID, "room-a")
        XCTAssertEqual(world.room("room-d")?.interaction.kind, .idle)
        XCTAssertFalse(world.room("room-d")?.hasPkIntent ?? true, "the refused start leaves no intent")
        // Accepting cancelled A's other invitations, on both sides.
        XCTAssertEqual(world.room("room-a")?.pending, [])
        XCTAssertEqual(world.room("room-c")?.pending, [], "room C's invitation to A was withdrawn")
        XCTAssertEqual(world.types("room-c").last, .pkCancelled)
        XCTAssertEqual(code { try world.answer("room-a", uid: 1, invitation: fromC.id) }, .interactionNotFound)
    }

    func testALostCommitAnswerIsAbortedAtExpiryAndTheOtherRoomEndsIdle() throws {
        var world = try world()
        let invitation = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1))
        let accept = try world.beginAnswer("room-b", uid: 2, invitation: invitation.id)
        let commit = try XCTUnwrap(accept.commit)
        XCTAssertTrue(world.room("room-b")?.hasPkIntent ?? false, "the intent is written before anyone is asked")
        // The commit reaches A (A starts) but its answer is lost.
        _ = try world.deliver(commit)
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .pk)
        XCTAssertEqual(code { try world.invite("room-b", "room-c", uid: 2) }, .roomBusy, "B is busy while starting")
        world.advance(ms: 5_000)
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .idle, "the abort ended the committed side")
        XCTAssertFalse(world.room("room-b")?.hasPkIntent ?? true)
        // Asking again (a successor finding the intent) answers the same: commit is idempotent.
        var again = try self.world()
        let second = try XCTUnwrap(try again.invite("room-a", "room-b", uid: 1))
        let secondAccept = try again.beginAnswer("room-b", uid: 2, invitation: second.id)
        let intents = again.coordinators[1].pkIntents { $0 == "room-b" }
        XCTAssertEqual(intents.count, 1)
        _ = try again.deliver(try XCTUnwrap(secondAccept.commit))
        try again.finishCommit(intents[0], at: "room-b")
        XCTAssertEqual(again.room("room-b")?.interaction.id, second.id)
        XCTAssertEqual(again.room("room-a")?.interaction.id, second.id)
    }

    func testDurationClosingAndOwnerOfflineEndThePKOnBothSides() throws {
        var world = try world()
        let timed = try XCTUnwrap(try world.invite("room-a", "room-b", uid: 1, durationS: 60))
        try world.answer("room-b", uid: 2, invitation: timed.id)
        XCTAssertEqual(world.room("room-a")?.interaction.endsAtMs, world.room("room-b")?.interaction.endsAtMs)
        world.advance(ms: 59_000)
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .pk)
        world.advance(ms: 1_000)
        XCTAssertEqual(world.events["room-a"]?.last?.reason, .durationEnded)
        XCTAssertEqual(world.events["room-b"]?.last?.reason, .durationEnded)

        let untilStopped = try XCTUnwrap(try world.invite("room-b", "room-a", uid: 2))
        try world.answer("room-a", uid: 1, invitation: untilStopped.id)
        try world.close("room-a", uid: 1)
        XCTAssertEqual(world.room("room-b")?.interaction.kind, .idle, "closing a room ends its PK at once")
        XCTAssertEqual(world.events["room-b"]?.last?.type, .pkEnded)
        XCTAssertEqual(world.events["room-b"]?.last?.reason, .peerRoomClosed)

        // The owner of C goes offline in a PK with B: after the owner grace, C closes and B's PK ends.
        let withC = try XCTUnwrap(try world.invite("room-c", "room-b", uid: 3))
        try world.answer("room-b", uid: 2, invitation: withC.id)
        _ = world.coordinators[1].ownerPresence(channel: "room-c", uid: 3, present: false, nowMs: world.nowMs)
        world.advance(ms: RoomSettings().ownerGraceMs - 1)
        XCTAssertEqual(world.room("room-b")?.interaction.kind, .pk)
        world.advance(ms: 1)
        XCTAssertEqual(world.room("room-c")?.state, .closed)
        XCTAssertEqual(world.room("room-b")?.interaction.kind, .idle)
        XCTAssertEqual(world.events["room-b"]?.last?.reason, .peerRoomClosed)
    }

    func testHostilePeerUpdatesChangeNothing() throws {
        var world = try world()
        var bogus = RoomPeerUpdateRequest()
        bogus.op = .commit
        bogus.roomID = "room-b"
        bogus.interaction.kind = .pk
        bogus.interaction.id = "pk-forged"
        bogus.interaction.peerRoomID = "room-a"
        let answer = try world.deliver(bogus)
        XCTAssertFalse(answer.committed, "a commit without an invitation is refused")
        XCTAssertEqual(answer.refusalCode, UInt32(ShowroomError.Code.interactionNotFound.rawValue))
        XCTAssertEqual(world.room("room-b")?.interaction.kind, .idle)
        bogus.op = .UNRECOGNIZED(99)
        XCTAssertEqual(code { try world.deliver(bogus) }, .invalidArgument)
        bogus.op = .offer
        bogus.request.kind = .pkInvitation
        bogus.request.id = "pk-x"
        bogus.request.toRoomID = "room-c"
        bogus.request.fromRoomID = "room-a"
        XCTAssertEqual(code { try world.deliver(bogus) }, .invalidArgument, "an offer for another room than the one it is sent to")
        bogus.roomID = String(repeating: "x", count: 5000)
        let nowMs = world.nowMs
        XCTAssertEqual(code { _ = try world.coordinators[1].peerUpdate(bogus, nowMs: nowMs) }, .invalidArgument)
        bogus.op = .end
        bogus.roomID = "room-b"
        bogus.interaction.id = "pk-forged"
        try world.deliver(bogus)
        XCTAssertTrue(world.events["room-b", default: []].isEmpty)
    }

    func testRandomMatchPairsTwoWaitingRoomsIntoOnePKAndWaitingExpires() throws {
        var world = try world()
        try world.match("room-b", uid: 2, durationS: 60)
        XCTAssertEqual(world.types("room-b"), [.pkMatchWaiting])
        XCTAssertEqual(world.room("room-b")?.interaction.kind, .idle, "alone, it waits")
        XCTAssertEqual(code { try world.match("room-b", uid: 9) }, .notRoomOwner)
        try world.match("room-a", uid: 1)
        let a = try XCTUnwrap(world.room("room-a"))
        let b = try XCTUnwrap(world.room("room-b"))
        XCTAssertEqual(a.interaction.kind, .pk, "the second waiting room is paired with the first")
        XCTAssertEqual(a.interaction.id, b.interaction.id)
        XCTAssertEqual(a.interaction.peerRoomID, "room-b")
        XCTAssertEqual(b.interaction.peerUid, 1)
        XCTAssertEqual(a.matchWaitingUntilMs, 0)
        XCTAssertEqual(b.matchWaitingUntilMs, 0)
        XCTAssertEqual(world.types("room-a").last, .pkStarted)
        XCTAssertEqual(world.types("room-b").last, .pkStarted)
        XCTAssertEqual(code { try world.match("room-a", uid: 1) }, .roomBusy, "a room in a PK does not wait")

        // Waiting alone expires on the server; cancelling ends a wait.
        try world.match("room-c", uid: 3)
        world.advance(ms: RoomSettings().matchWaitMs)
        XCTAssertEqual(world.types("room-c").last, .pkMatchExpired)
        XCTAssertEqual(world.room("room-c")?.matchWaitingUntilMs, 0)
        try world.match("room-c", uid: 3)
        try world.match("room-c", uid: 3, cancel: true)
        XCTAssertEqual(world.types("room-c").last, .pkMatchCancelled)
        XCTAssertEqual(code { try world.match("room-c", uid: 3, cancel: true) }, .interactionNotFound)
    }

    func testAMatchWithARoomThatStoppedWaitingStartsNothingAndTheOtherWaitsOn() throws {
        var world = try world()
        try world.match("room-a", uid: 1)
        // Room B is queued but gets into a PK with C before the pairing reaches it.
        try world.match("room-b", uid: 2)
        XCTAssertEqual(world.room("room-a")?.interaction.kind, .pk)
        var other = try self.world()
        try other.match("room-c", uid: 3)
        let invitation = try XCTUnwrap(try other.invite("room-b", "room-a", uid: 2))
        try other.answer("room-a", uid: 1, invitation: invitation.id)
        // Room C's queue entry pairs with nothing busy: a hostile MATCHED for a busy room starts nothing.
        let matched = RoomPeerUpdateRequest.with {
            $0.op = .matched
            $0.roomID = "room-a"
            $0.request.id = "pk-forged"
            $0.request.fromRoomID = "room-a"
            $0.request.toRoomID = "room-c"
        }
        let (outcome, _) = try other.coordinators[0].peerUpdate(matched, nowMs: other.nowMs)
        XCTAssertNil(outcome.commit, "room A is in a PK and not waiting")
        XCTAssertGreaterThan(other.room("room-c")?.matchWaitingUntilMs ?? 0, other.nowMs, "room C still waits")
    }
}
