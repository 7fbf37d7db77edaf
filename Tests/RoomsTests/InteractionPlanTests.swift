import Rooms
import Routing
import ShowroomWire
import XCTest

/// A PK's flow between two rooms' owners as the coordinator's machine decides it
/// (``InteractionPlan``, ``CoordinatorNode/peerAnswered(_:result:nowMs:)``): the test plays the
/// shell, carrying each question to the other room's owner (here the same coordinator) or failing
/// it, with times it chooses.
final class InteractionPlanTests: XCTestCase {
    private let t0: Int64 = 1_700_000_000_000
    private var random = SeededGenerator(seed: 11)

    /// Coordinator `c1`, alone and caught up, owning rooms `a` (uid 7) and `b` (uid 8) with
    /// their owners present.
    private func coordinator() throws -> CoordinatorNode {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        for (id, owner) in [("a", UInt32(7)), ("b", 8)] {
            _ = try node.records.registry.create(Requests.create(id: id, owner: owner), nowMs: t0, using: &random)
            _ = node.records.registry.ownerPresence(channel: id, uid: owner, present: true, nowMs: t0)
        }
        return node
    }

    private let everything: (String) -> Bool = { _ in true }

    private func question(_ plan: InteractionPlan, file: StaticString = #filePath, line: UInt = #line) throws -> PeerQuestion {
        guard case .ask(let question) = plan.next else {
            XCTFail("no question: \(plan.next)", file: file, line: line)
            throw ShowroomError.internal("no question")
        }
        return question
    }

    private func events(_ plan: InteractionPlan) -> [RoomInteractionEventType] { plan.changes.compactMap { $0.event?.type } }

    /// Room `a` invites room `b`: the offer is asked of `b`'s owner before anything is announced.
    private func invite(_ node: inout CoordinatorNode, at nowMs: Int64) throws -> InteractionPlan {
        let request = RoomPkInviteRequest.with {
            $0.roomID = "a"
            $0.uid = 7
            $0.peerRoomID = "b"
        }
        return node.interact(in: "a") { registry throws(ShowroomError) in try registry.pkInvite(request, nowMs: nowMs, using: &random) }
    }

    func testAnInvitationIsOfferedToTheInvitedRoomAndAnnouncedOnceItHoldsIt() throws {
        var node = try coordinator()
        let invite = try invite(&node, at: t0 + 1_000)
        let offer = try question(invite)
        XCTAssertEqual(offer.step, .offer)
        XCTAssertEqual(offer.roomID, "a", "the inviting room's flow waits for the answer")
        XCTAssertEqual(offer.update.roomID, "b", "asked of the invited room's owner")
        XCTAssertEqual(events(invite), [], "stored, not announced yet")
        XCTAssertEqual(invite.changes.count, 1)
        let made = try XCTUnwrap(invite.request)

        let (held, answer) = try node.peerUpdate(offer.update, nowMs: t0 + 1_010)
        XCTAssertEqual(events(held), [.pkInvited])
        XCTAssertEqual(held.next, .done)
        let announced = node.peerAnswered(offer, result: .success(answer), nowMs: t0 + 1_020)
        XCTAssertEqual(events(announced), [.pkInvited])
        XCTAssertEqual(announced.next, .done)
        let reply = node.interactionAnswer(roomID: "a", made: made)
        XCTAssertEqual(reply.request.id, made.id)
        XCTAssertEqual(reply.request.toUid, 8, "the answer carries the invitation as the room holds it now")
        XCTAssertEqual(reply.room.roomID, "a")
    }

    func testAnOfferNotAnsweredDropsTheInvitationAndIsRefusedWithTheRoomWrittenAsItIsNow() throws {
        var node = try coordinator()
        let offer = try question(try invite(&node, at: t0 + 1_000))
        let refused = node.peerAnswered(offer, result: .failure(.unavailable("no answer")), nowMs: t0 + 3_000)
        guard case .refused(let error) = refused.next else { return XCTFail("refused: \(refused.next)") }
        XCTAssertEqual(error.code, .unavailable)
        XCTAssertEqual(refused.changes.map(\.room.roomID), ["a"], "the dropped invitation reaches the successor")
        XCTAssertEqual(refused.changes.first?.room.pending, [])
        XCTAssertEqual(refused.sends, [])

        // A refusal that changed nothing writes nothing.
        let stop = node.interact(in: "a") { registry throws(ShowroomError) in
            try registry.pkStop(RoomPkStopRequest.with {
                $0.roomID = "a"
                $0.uid = 7
                $0.pkID = "pk-none"
            }, nowMs: t0 + 3_100)
        }
        guard case .refused(let notFound) = stop.next else { return XCTFail("refused: \(stop.next)") }
        XCTAssertEqual(notFound.code, .interactionNotFound)
        XCTAssertEqual(stop.changes, [])
    }

    func testACommitNotAnsweredIsRefusedAskedAgainByTheTickAndStartsThePKOnceCommitted() throws {
        var node = try coordinator()
        let offer = try question(try invite(&node, at: t0))
        _ = node.peerAnswered(offer, result: .success(try node.peerUpdate(offer.update, nowMs: t0).answer), nowMs: t0)
        let accept = node.interact(in: "b") { registry throws(ShowroomError) in
            try registry.pkAnswer(RoomPkAnswerRequest.with {
                $0.roomID = "b"
                $0.uid = 8
                $0.invitationID = offer.update.request.id
                $0.accept = true
            }, nowMs: t0 + 100)
        }
        let commit = try question(accept)
        XCTAssertEqual(commit.step, .commit)
        XCTAssertEqual(commit.roomID, "b", "the accepting room coordinates")
        XCTAssertEqual(commit.update.roomID, "a")

        let lost = node.peerAnswered(commit, result: .failure(.deadlineExceeded("timed out")), nowMs: t0 + 2_100)
        guard case .refused(let error) = lost.next else { return XCTFail("refused: \(lost.next)") }
        XCTAssertEqual(error.code, .unavailable)
        XCTAssertTrue(error.message.contains("retried"), error.message)
        XCTAssertEqual(lost.changes, [], "the intent stays")

        XCTAssertEqual(node.pkIntentRetries(nowMs: t0 + 100 + CoordinatorNode.pkIntentRetryAfterMs - 1, writes: everything), [],
                       "a fresh intent's commit is on its way")
        let retries = node.pkIntentRetries(nowMs: t0 + 100 + CoordinatorNode.pkIntentRetryAfterMs, writes: everything)
        XCTAssertEqual(retries.count, 1)
        let again = try question(try XCTUnwrap(retries.first))
        XCTAssertEqual(again.step, .commit)
        XCTAssertEqual(again.roomID, "b")
        XCTAssertEqual(node.pkIntentRetries(nowMs: t0 + 5_000, writes: { $0 != "b" }), [], "only the rooms it writes")

        let (committed, answer) = try node.peerUpdate(again.update, nowMs: t0 + 2_200)
        XCTAssertTrue(answer.committed)
        XCTAssertEqual(events(committed), [.pkAccepted, .pkStarted])
        let started = node.peerAnswered(again, result: .success(answer), nowMs: t0 + 2_210)
        XCTAssertEqual(events(started), [.pkAccepted, .pkStarted])
        XCTAssertEqual(started.next, .done)
        XCTAssertEqual(node.records.registry.room("a")?.interaction.kind, .pk)
        XCTAssertEqual(node.records.registry.room("b")?.interaction.kind, .pk)

        // Checked at the peer every few seconds: a peer that is not in it any more ends this side.
        let checks = node.pkChecksDue(nowMs: t0 + 2_210 + CoordinatorNode.pkCheckEveryMs + 1, writes: everything)
        let asked = try checks.map { try question($0) }
        XCTAssertEqual(asked.map(\.step), [.check, .check])
        XCTAssertEqual(asked.map(\.roomID), ["a", "b"])
        let check = asked[0]
        XCTAssertEqual(node.peerAnswered(check, result: .failure(.unavailable("no answer")), nowMs: t0 + 8_000), InteractionPlan(),
                       "no answer: asked again next time")
        var inPK = RoomPeerUpdateResponse()
        inPK.committed = true
        XCTAssertEqual(events(node.peerAnswered(check, result: .success(inPK), nowMs: t0 + 8_000)), [])
        let ended = node.peerAnswered(check, result: .success(RoomPeerUpdateResponse()), nowMs: t0 + 8_000)
        XCTAssertEqual(events(ended), [.pkEnded])
        XCTAssertEqual(ended.sends, [], "the peer is told nothing: it is not in the PK")
        XCTAssertEqual(node.records.registry.room("a")?.interaction.kind, .idle)
    }

    func testAnOutcomesUpdatesAreDeliveredExceptAMatchQueueingAndAClosedRoomsGoFirstOnTheTick() throws {
        var outcome = InteractionOutcome()
        let enqueue = RoomPeerUpdateRequest.with { $0.op = .matchEnqueue }
        let withdraw = RoomPeerUpdateRequest.with { $0.op = .withdraw }
        outcome.peerUpdates = [enqueue, withdraw]
        outcome.offer = RoomPeerUpdateRequest.with { $0.op = .offer }
        outcome.commit = RoomPeerUpdateRequest.with { $0.op = .commit }
        let plan = InteractionPlan(outcome, roomID: "a")
        XCTAssertEqual(plan.sends, [.once(enqueue), .deliver(withdraw)])
        XCTAssertEqual(plan.next, .ask(PeerQuestion(step: .offer, roomID: "a", update: outcome.offer!)), "an offer goes first")

        var node = try coordinator()
        let offer = try question(try invite(&node, at: t0))
        _ = node.peerAnswered(offer, result: .success(try node.peerUpdate(offer.update, nowMs: t0).answer), nowMs: t0)
        _ = try node.records.registry.close(Requests.close("a", uid: 7), byAdmin: false, nowMs: t0 + 500)
        let tick = node.tickInteractions(nowMs: t0 + 1_000, writes: everything)
        XCTAssertEqual(tick.sends.map { send -> RoomPeerOp in
            guard case .deliver(let update) = send else { return .unspecified }
            return update.op
        }, [.withdraw], "the closed room's invitation is withdrawn at the invited room, until delivered")
        XCTAssertEqual(node.tickInteractions(nowMs: t0 + 1_000, writes: everything).sends, [], "once")
    }

    func testSeeingMostOfTheClusterTakesMoreThanHalfOfItsMembersAlive() throws {
        var node = try coordinator()
        XCTAssertTrue(node.seesMostOfTheCluster(alive: 2, known: 3))
        XCTAssertFalse(node.seesMostOfTheCluster(alive: 2, known: 4), "half is not most")
        XCTAssertFalse(node.seesMostOfTheCluster(alive: 1, known: 3))
        XCTAssertTrue(node.seesMostOfTheCluster(alive: 1, known: 1))
        node.writesWithoutMajority = true
        XCTAssertTrue(node.seesMostOfTheCluster(alive: 1, known: 3), "the deliberately broken rule")
    }
}
