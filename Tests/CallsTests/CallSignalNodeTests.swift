import Calls
import Membership
import ReplicatedOwnership
import XCTest

/// The call-signal node's machine with plain values and a clock that is a number; notices are
/// strings here.
final class CallSignalNodeTests: XCTestCase {
    typealias Node = CallSignalNode<String, SeededRandom>
    let t0: Int64 = 1_000_000
    let caller: UInt32 = 2001
    let callee: UInt32 = 1001

    func makeNode(_ id: String = "n1", seed: UInt64 = 7, members: [String]? = nil) -> Node {
        var node = Node(selfID: id, random: SeededRandom(seed: seed))
        _ = node.membersChanged(alive: members ?? [id], gone: [], nowMs: t0)
        return node
    }

    func login(_ node: inout Node, _ uid: UInt32, at now: Int64? = nil) throws -> String {
        try node.login(uid: uid, tokenExpiresAtMs: t0 + 3_600_000, nowMs: now ?? t0).session
    }

    func refusal(_ body: () throws(Node.Refusal) -> Void) -> Node.Refusal? {
        do { try body() } catch { return error }
        return nil
    }

    /// The polls the directives answer, with their notices.
    func answered(_ directives: [Node.Directive]) -> [UInt64: [String]] {
        var answers: [UInt64: [String]] = [:]
        for case .answerPoll(let poll, let notices, _) in directives { answers[poll] = notices }
        return answers
    }

    func ring(_ node: inout Node, _ plan: Node.DialPlan, at now: Int64? = nil) throws -> (call: Call, directives: [Node.Directive]) {
        try node.ring(Node.Ring(callID: plan.callID, channel: "call-\(callee)-\(plan.channelSecret)", caller: caller,
                                callee: callee, type: .video), nowMs: now ?? t0)
    }

    // MARK: - Dialling

    func testADialReservesTheCallerAndAFailedOrBusyRingDropsTheReservation() throws {
        var node = makeNode()
        _ = try login(&node, caller)
        let plan = try node.dial(callee, caller: caller, nowMs: t0)
        XCTAssertEqual(plan.owner, "n1")
        XCTAssertTrue(plan.callID.hasPrefix("\(callee)-"))
        XCTAssertEqual(plan.callID.count, "\(callee)-".count + 24)
        XCTAssertEqual(plan.channelSecret.count, 32)
        XCTAssertEqual(node.callOf[caller]?.callID, plan.callID, "reserved while the ring is on its way")
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.dial(3003, caller: caller, nowMs: t0) }?.code, .callerInCall)

        node.ringAnswered(caller: caller, callID: plan.callID, .failed)
        XCTAssertNil(node.callOf[caller], "the ring failed: the reservation is dropped")

        let second = try node.dial(callee, caller: caller, nowMs: t0 + 1)
        XCTAssertNotEqual(second.callID, plan.callID)
        node.ringAnswered(caller: caller, callID: plan.callID, .failed)
        XCTAssertEqual(node.callOf[caller]?.callID, second.callID, "a late answer to the old ring keeps the new reservation")
        node.ringAnswered(caller: caller, callID: second.callID, .rung)
        XCTAssertEqual(node.callOf[caller]?.callID, second.callID, "a call that rings keeps it")
        node.ringAnswered(caller: caller, callID: second.callID, .busy)
        XCTAssertNil(node.callOf[caller], "a busy call ended at once")
    }

    func testARingLeftUnansweredKeepsTheReservationUntilTheCallsOwnerSays() throws {
        let members = ["n1", "n2"]
        let dialler = uid(ownedBy: "n1", among: members)
        let called = uid(ownedBy: "n2", among: members)
        var node = makeNode("n1", members: members)
        _ = try login(&node, dialler)
        let plan = try node.dial(called, caller: dialler, nowMs: t0)
        XCTAssertEqual(plan.owner, "n2")
        // The call rang at n2 and its notice reached the caller; only the ring's answer was lost.
        _ = node.deliver("ringing", to: dialler, callID: plan.callID, state: .calling, owner: "n2", sequence: 1)
        let asked = node.ringAnswered(caller: dialler, callID: plan.callID, .noAnswer)
        XCTAssertEqual(node.callOf[dialler]?.callID, plan.callID, "the call may ring: the caller stays in it")
        guard case .checkCall(dialler, let entry, "n2")? = asked.first, asked.count == 1 else {
            return XCTFail("the call's owner is asked at once: \(asked)")
        }
        XCTAssertEqual(entry.callID, plan.callID)
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.dial(called, caller: dialler, nowMs: t0 + 1) }?.code,
                       .callerInCall)
        XCTAssertTrue(node.callChecked(uid: dialler, callID: plan.callID, owner: "n2", .holds).isEmpty)
        XCTAssertEqual(node.callOf[dialler]?.callID, plan.callID, "its owner holds it: the caller is in it")

        // A ring that never arrived: the owner knows no such call, and the caller is freed.
        _ = node.deliver("over", to: dialler, callID: plan.callID, state: .prepared, owner: "n2", sequence: 2)
        let lost = try node.dial(called, caller: dialler, nowMs: t0 + 2)
        XCTAssertEqual(node.ringAnswered(caller: dialler, callID: lost.callID, .noAnswer).count, 1)
        XCTAssertEqual(node.callOf[dialler]?.callID, lost.callID)
        XCTAssertEqual(node.callChecked(uid: dialler, callID: lost.callID, owner: "n2", .lost).count, 1)
        XCTAssertNil(node.callOf[dialler])
    }

    func testDialsThatCannotBeCallsAreRefusedAndALoopIsSlowedDown() throws {
        var node = makeNode()
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.dial(0, caller: caller, nowMs: t0) }?.code, .invalidArgument)
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.dial(caller, caller: caller, nowMs: t0) }?.code, .invalidArgument)
        for i in 0..<10 {
            let plan = try node.dial(callee, caller: caller, nowMs: t0 + Int64(i))
            node.ringAnswered(caller: caller, callID: plan.callID, .failed)
        }
        let limited = refusal { () throws(Node.Refusal) in _ = try node.dial(callee, caller: caller, nowMs: t0 + 10) }
        XCTAssertEqual(limited?.code, .callRateLimited)
        XCTAssertNil(node.callOf[caller], "a refused dial reserves nothing")
        XCTAssertNoThrow(try node.dial(callee, caller: 4004, nowMs: t0 + 10), "nobody else is slowed down")
    }

    func testTheSameSeedMintsTheSameIDsAndAnotherSeedOthers() throws {
        func ids(seed: UInt64) throws -> [String] {
            var node = makeNode(seed: seed)
            let session = try login(&node, caller)
            let plan = try node.dial(callee, caller: caller, nowMs: t0)
            return [session, plan.callID, plan.channelSecret]
        }
        XCTAssertEqual(try ids(seed: 1), try ids(seed: 1))
        XCTAssertNotEqual(try ids(seed: 1), try ids(seed: 2))
    }

    // MARK: - At the call's owner

    func testARingTheCalleeHearsAndAHostileOrRepeatedOneChangesNothing() throws {
        var node = makeNode()
        _ = try login(&node, callee)
        let plan = try node.dial(callee, caller: caller, nowMs: t0)
        let made = try ring(&node, plan)
        XCTAssertEqual(made.call.phase, .ringing)
        let notified = made.directives.compactMap { directive -> UInt32? in
            guard case .call(.notify(let notice)) = directive else { return nil }
            return notice.to
        }
        XCTAssertEqual(notified, [caller, callee])

        let again = try ring(&node, plan, at: t0 + 5)
        XCTAssertEqual(again.call.id, plan.callID, "a repeated ring is the same call")
        XCTAssertTrue(again.directives.isEmpty, "and tells nobody again")

        let foreign = Node.Ring(callID: "999-abc", channel: "call-\(callee)-x", caller: caller, callee: callee, type: .audio)
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.ring(foreign, nowMs: t0) }?.code, .invalidArgument,
                       "a call id naming another callee")
        let huge = Node.Ring(callID: "\(callee)-" + String(repeating: "f", count: 10_000), channel: "call-\(callee)-x",
                             caller: caller, callee: callee, type: .audio)
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.ring(huge, nowMs: t0) }?.code, .invalidArgument)
        let padded = Node.Ring(callID: "0\(callee)-ab", channel: "call-\(callee)-x", caller: caller, callee: callee, type: .audio)
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.ring(padded, nowMs: t0) }?.code, .invalidArgument)
        XCTAssertEqual(node.book.calls.count, 1, "nothing refused was booked")
    }

    func testRequestsForUnknownMalformedOrHugeCallIDsAreRefusedClearly() {
        var node = makeNode()
        for (id, code) in [("\(callee)-nosuchcall", Node.Refusal.Code.unknownCall), ("not-a-call", .unknownCall),
                           ("", .unknownCall), (String(repeating: "9", count: 100_000) + "-x", .unknownCall),
                           ("0-abc", .unknownCall)] {
            let refused = refusal { () throws(Node.Refusal) in _ = try node.act(.hangup(reason: ""), by: caller, callID: id, nowMs: t0) }
            XCTAssertEqual(refused?.code, code, "call id of \(id.utf8.count) bytes")
            XCTAssertLessThan(refused?.message.utf8.count ?? 0, 200, "the message quotes at most a prefix of the id")
        }
        for id in ["", "abc", "0-abc", String(repeating: "1", count: 5_000) + "-x"] {
            let refused = refusal { () throws(Node.Refusal) in _ = try Node.uid(ofSession: id) }
            XCTAssertEqual(refused?.code, .notLoggedIn)
            XCTAssertLessThan(refused?.message.utf8.count ?? 0, 200)
        }
        XCTAssertEqual(try? Node.uid(ofSession: "42-secret"), 42)
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.login(uid: 0, tokenExpiresAtMs: t0, nowMs: t0) }?.code,
                       .invalidArgument)
        XCTAssertTrue(node.channelActivity(channel: "call-1-nosuch", uid: caller, joined: true, nowMs: t0).isEmpty)
    }

    func testOnlyTheCalleesOwnerSaysACallIsUnknown() {
        let members = ["n1", "n2"]
        let called = uid(ownedBy: "n1", among: members)
        let id = "\(called)-abc"
        func code(_ node: inout Node) -> Node.Refusal.Code? {
            refusal { () throws(Node.Refusal) in _ = try node.act(.token, by: caller, callID: id, nowMs: t0) }?.code
        }
        var other = makeNode("n2", seed: 9, members: members)
        XCTAssertEqual(code(&other), .notOwner, "it may not have taken the call over yet: asked again, nobody is freed")
        var owner = makeNode("n1", members: members)
        XCTAssertEqual(code(&owner), .unknownCall)
        _ = other.membersChanged(alive: ["n2"], gone: ["n1"], nowMs: t0)
        XCTAssertEqual(code(&other), .unknownCall, "the owner now: it would hold the call")
    }

    // MARK: - Mailboxes

    func testAParkedPollIsAnsweredByANoticeByANewerPollOrByTheClock() throws {
        var node = makeNode()
        let session = try login(&node, callee)
        XCTAssertTrue(try node.poll(session, poll: 1, waitMs: 20_000, nowMs: t0).isEmpty, "nothing waits: parked")
        XCTAssertEqual(answered(node.deliver("ring", to: callee, callID: "\(callee)-a", state: .calling, owner: "n1")), [1: ["ring"]])
        XCTAssertEqual(node.callOf[callee]?.callID, "\(callee)-a", "the callee is in the call it was told of")

        XCTAssertEqual(answered(try node.poll(session, poll: 2, waitMs: 20_000, nowMs: t0)), [2: ["ring"]],
                       "carried again by the next answer: the first may not have reached the client")
        XCTAssertTrue(try node.poll(session, poll: 3, waitMs: 20_000, nowMs: t0).isEmpty, "carried twice: done")
        XCTAssertEqual(answered(try node.poll(session, poll: 4, waitMs: 20_000, nowMs: t0 + 10)), [3: []],
                       "a newer poll ends the parked one, empty")
        XCTAssertEqual(answered(node.tick(nowMs: t0 + 10 + 19_999, gone: [])), [:])
        XCTAssertEqual(answered(node.tick(nowMs: t0 + 10 + 20_000, gone: [])), [4: []], "the clock ends it")

        _ = node.deliver("ended", to: callee, callID: "\(callee)-a", state: .prepared, owner: "n1")
        XCTAssertNil(node.callOf[callee], "a terminal notice frees the callee")
        XCTAssertEqual(answered(try node.poll(session, poll: 5, waitMs: 20_000, nowMs: t0 + 30_000)), [5: ["ended"]],
                       "a notice waiting is answered at once")
        XCTAssertEqual(refusal { () throws(Node.Refusal) in _ = try node.poll("\(callee)-forged", poll: 6, waitMs: 0, nowMs: t0) }?.code,
                       .notLoggedIn)
    }

    func testAnEndInAnAnswerTheClientNeverTookComesWithItsNextPoll() throws {
        // A poll passed on by another node arrives twice (the path duplicated it). The second copy
        // ends the first, parked, empty, and parks in its place; the end of the caller's call then
        // goes in the second copy's answer, which the node that passed the poll on drops: it has
        // relayed the first answer already. The client, told nothing, polls again.
        var node = makeNode()
        let session = try login(&node, caller)
        _ = try node.poll(session, poll: 1, waitMs: 0, nowMs: t0)
        XCTAssertTrue(try node.poll(session, poll: 2, waitMs: 5_000, nowMs: t0).isEmpty, "parked")
        XCTAssertEqual(answered(try node.poll(session, poll: 3, waitMs: 5_000, nowMs: t0 + 4)), [2: []],
                       "the copy ends the parked poll, empty: the answer the client gets")
        XCTAssertEqual(answered(node.deliver("ended", to: caller, callID: "\(callee)-a", state: .prepared, owner: "n2", sequence: 9)),
                       [3: ["ended"]], "the answer nobody takes")
        XCTAssertEqual(answered(try node.poll(session, poll: 4, waitMs: 5_000, nowMs: t0 + 100)), [4: ["ended"]],
                       "the client's next poll carries the end again")
        XCTAssertTrue(try node.poll(session, poll: 5, waitMs: 5_000, nowMs: t0 + 150).isEmpty, "carried twice: the next poll waits")
    }

    func testANoticeDeliveredAgainOrOvertakenNeverTakesAUserBackIntoAnEndedCall() throws {
        // Notices for another node's users are sent until taken: one may arrive twice, or after a
        // later one. The call ended (notice 5) stays ended for the user whatever comes late.
        var node = makeNode()
        let session = try login(&node, caller)
        let call = "\(callee)-a"
        _ = node.deliver("connecting", to: caller, callID: call, state: .connecting, owner: "n2", sequence: 3)
        XCTAssertEqual(node.callOf[caller]?.callID, call)
        _ = node.deliver("ended", to: caller, callID: call, state: .prepared, owner: "n2", sequence: 5)
        XCTAssertNil(node.callOf[caller])
        XCTAssertTrue(node.deliver("connected", to: caller, callID: call, state: .connected, owner: "n2", sequence: 4).isEmpty)
        XCTAssertTrue(node.deliver("ended", to: caller, callID: call, state: .prepared, owner: "n2", sequence: 5).isEmpty)
        XCTAssertNil(node.callOf[caller], "an overtaken notice does not put the caller back in the call")
        XCTAssertEqual(answered(try node.poll(session, poll: 1, waitMs: 0, nowMs: t0))[1], ["connecting", "ended"],
                       "each notice reaches the app once, in order")

        // A later call starts afresh; the marks kept per user stay bounded.
        _ = node.deliver("ring", to: caller, callID: "\(callee)-b", state: .calling, owner: "n2", sequence: 1)
        XCTAssertEqual(node.callOf[caller]?.callID, "\(callee)-b")
        for i in 0..<20 { _ = node.deliver("x", to: caller, callID: "\(callee)-x\(i)", state: .prepared, owner: "n2", sequence: 1) }
        XCTAssertEqual(node.deliveredNotices[caller]?.count, Node.deliveredCallsLimit)
    }

    func testAMailboxKeepsTheNewestNoticesUpToItsLimit() throws {
        var node = makeNode()
        let session = try login(&node, callee)
        for i in 0..<(Node.mailboxLimit + 44) {
            _ = node.deliver("n\(i)", to: callee, callID: "\(callee)-a", state: .calling, owner: "n1")
        }
        let notices = answered(try node.poll(session, poll: 1, waitMs: 0, nowMs: t0))[1] ?? []
        XCTAssertEqual(notices.count, Node.mailboxLimit)
        XCTAssertEqual(notices.first, "n44", "the oldest went first")
        XCTAssertEqual(notices.last, "n\(Node.mailboxLimit + 43)")
        XCTAssertTrue(node.deliver("lost", to: 5005, callID: "\(callee)-a", state: .calling, owner: "n1").isEmpty,
                      "no session: nothing queued")
        XCTAssertNil(node.mailboxes.values.first { $0.notices.contains("lost") })
    }

    func testASessionThatEndsRefusesItsParkedPollAndTellsItsCall() throws {
        var node = makeNode()
        let session = try login(&node, callee)
        _ = node.deliver("ring", to: callee, callID: "\(callee)-a", state: .calling, owner: "n1")
        _ = try node.poll(session, poll: 1, waitMs: 0, nowMs: t0)
        _ = try node.poll(session, poll: 2, waitMs: 0, nowMs: t0)
        _ = try node.poll(session, poll: 3, waitMs: 20_000, nowMs: t0)
        let directives = try node.logout(session, nowMs: t0 + 1)
        XCTAssertTrue(directives.contains { if case .refusePoll(3, .loggedOut) = $0 { true } else { false } })
        XCTAssertTrue(directives.contains {
            if case .signal(.lost, callee, "\(callee)-a", "n1") = $0 { true } else { false }
        }, "the call's owner learns its party lost signaling")
    }

    // MARK: - Call tokens

    func testAMintedTokenIsReusedForAQuarterOfItsLifeAndForgottenWithItsCall() throws {
        var node = makeNode()
        _ = try login(&node, callee)
        let plan = try node.dial(callee, caller: caller, nowMs: t0)
        _ = try ring(&node, plan)
        node.tokenMinted("tok", callID: plan.callID, uid: caller, nowMs: t0)
        XCTAssertEqual(node.cachedToken(callID: plan.callID, uid: caller, nowMs: t0 + 29_999), "tok")
        XCTAssertNil(node.cachedToken(callID: plan.callID, uid: caller, nowMs: t0 + 30_000), "a quarter of 120 s is gone")
        XCTAssertNil(node.cachedToken(callID: plan.callID, uid: callee, nowMs: t0), "each party has its own")
        node.tokenMinted("stray", callID: "\(callee)-nosuch", uid: caller, nowMs: t0)
        XCTAssertNil(node.mintedTokens["\(callee)-nosuch"], "no token is kept for a call not held")

        _ = try node.act(.cancel, by: caller, callID: plan.callID, nowMs: t0 + 100)
        _ = node.tick(nowMs: t0 + 2_000, gone: [])
        XCTAssertTrue(node.mintedTokens.isEmpty, "the ended call's tokens are forgotten")
    }

    // MARK: - Replication

    /// A uid `owner` owns among `members`.
    func uid(ownedBy owner: String, among members: [String]) -> UInt32 {
        let node = makeNode(owner, members: members)
        return (1...1_000).first { node.owner(of: $0) == owner }!
    }

    func testAChangeIsDueForReplicationOnceAndTheDeletionsTombstoneIsDroppedAfterItsTime() throws {
        let members = ["n1", "n2"]
        let user = uid(ownedBy: "n1", among: members)
        var node = makeNode("n1", members: members)
        XCTAssertTrue(node.flush().isEmpty, "nothing changed")

        let session = try login(&node, user)
        let sent = node.flush()
        guard case .replicate(let batch) = sent.first, sent.count == 1 else { return XCTFail("one batch: \(sent)") }
        XCTAssertEqual(batch.member, "n2")
        XCTAssertEqual(batch.records.map(\.value?.session?.id), [session])
        XCTAssertEqual(batch.writes.count, 1)
        XCTAssertTrue(node.flush().isEmpty, "flushed once")
        XCTAssertFalse(node.records.replication.pendingWrites.isEmpty)
        node.replicaBatchAnswered(batch, held: true)
        XCTAssertTrue(node.records.replication.pendingWrites.isEmpty, "the successor holds it")

        _ = try node.renew(session, tokenExpiresAtMs: t0 + 7_200_000, nowMs: t0 + 1)
        guard case .replicate(let renewed) = node.flush().first else { return XCTFail("the renewal is due") }
        XCTAssertEqual(renewed.records.first?.value?.session?.tokenExpiresAtMs, t0 + 7_200_000)

        _ = try node.logout(session, nowMs: t0 + 2)
        guard case .replicate(let deleted) = node.flush().first else { return XCTFail("the deletion is due") }
        XCTAssertNil(deleted.records.first?.value)
        XCTAssertEqual(node.records.tombstoneCount, 1)
        _ = node.tick(nowMs: t0 + 10_000, gone: [])
        _ = node.tick(nowMs: t0 + 10_000 + Node.tombstoneLifetimeMs - 1_000, gone: [])
        XCTAssertEqual(node.records.tombstoneCount, 1, "kept while a late copy may be on its way")
        _ = node.tick(nowMs: t0 + 10_000 + Node.tombstoneLifetimeMs, gone: [])
        XCTAssertEqual(node.records.tombstoneCount, 0)
        XCTAssertNil(node.records.entries[UserRecord.key(of: user)])
    }

    func testASuccessorTakesOverAUserAndItsCallAndTheFormerOwnerGivesThemUp() throws {
        let members = ["n1", "n2"]
        let user = uid(ownedBy: "n1", among: members)
        var owner = makeNode("n1", members: members)
        var successor = makeNode("n2", seed: 9, members: members)
        let session = try login(&owner, user)
        _ = try owner.poll(session, poll: 1, waitMs: 0, nowMs: t0)
        _ = try owner.poll(session, poll: 2, waitMs: 20_000, nowMs: t0)
        for case .replicate(let batch) in owner.flush() { _ = successor.receive(batch.records, nowMs: t0) }
        XCTAssertFalse(successor.presence.isOnline(user), "a replica only, while the owner lives")

        _ = successor.membersChanged(alive: ["n2"], gone: ["n1"], nowMs: t0 + 100)
        XCTAssertTrue(successor.presence.isOnline(user), "the session goes on at the successor")
        XCTAssertNoThrow(try successor.session(session, nowMs: t0 + 100))

        // The owner, cut off, comes back to a cluster where the newcomer owns the user.
        let newcomer = "n0"
        let moved = uid(ownedBy: newcomer, among: ["n1", newcomer])
        var former = makeNode("n1", members: ["n1"])
        let movedSession = try login(&former, moved)
        _ = try former.poll(movedSession, poll: 1, waitMs: 0, nowMs: t0)
        _ = try former.poll(movedSession, poll: 2, waitMs: 20_000, nowMs: t0)
        let handOver = former.membersChanged(alive: ["n1", newcomer], gone: [], nowMs: t0 + 1)
        XCTAssertEqual(answered(handOver), [2: []], "its parked poll ends, so the next one goes to the new owner")
        XCTAssertFalse(former.presence.isOnline(moved))
        XCTAssertTrue(handOver.contains { if case .replicate(let batch) = $0 { batch.member == newcomer } else { false } },
                      "the newcomer is handed the record")
        XCTAssertTrue(former.membersChanged(alive: ["n1", newcomer], gone: [], nowMs: t0 + 2).isEmpty,
                      "the same members again change nothing")
    }

    /// The catch-up asks among `directives`, as `member@after`.
    func catchUps(_ directives: [Node.Directive]) -> [String] {
        directives.compactMap { if case .catchUp(let member, let after) = $0 { "\(member)@\(after)" } else { nil } }
    }

    /// An owner of `user` (among n1, n2) whose user is logged in and dialled a callee owned by n2,
    /// with its record replicated to `successor`.
    func ownerWithACall(_ user: UInt32, successor: inout Node) throws -> (owner: Node, callID: String) {
        var owner = makeNode("n1", members: ["n1", "n2"])
        _ = try login(&owner, user)
        let plan = try owner.dial(uid(ownedBy: "n2", among: ["n1", "n2"]), caller: user, nowMs: t0)
        for case .replicate(let batch) in owner.flush() {
            _ = successor.replicaBatch(batch.records, nowMs: t0)
            owner.replicaBatchAnswered(batch, held: true)
        }
        XCTAssertEqual(successor.records[UserRecord.key(of: user)]?.inCall?.callID, plan.callID)
        return (owner, plan.callID)
    }

    func testANodeRestartedFasterThanTheOthersNoticedCatchesUpOnItsUsers() throws {
        let members = ["n1", "n2"]
        let user = uid(ownedBy: "n1", among: members)
        var successor = makeNode("n2", seed: 9, members: members)
        let (_, callID) = try ownerWithACall(user, successor: &successor)

        // n1 starts again with nothing; n2 saw no change of members, so it hands over nothing.
        var restarted = Node(selfID: "n1", random: SeededRandom(seed: 11))
        XCTAssertEqual(catchUps(restarted.membersChanged(alive: ["n1"], gone: [], nowMs: t0 + 500)), [])
        let asks = restarted.membersChanged(alive: members, gone: [], nowMs: t0 + 600)
        XCTAssertEqual(catchUps(asks), ["n2@"], "it asks the member it sees join")
        XCTAssertTrue(successor.membersChanged(alive: members, gone: [], nowMs: t0 + 600).isEmpty)

        // The answer is lost: asked again on the clock, once.
        XCTAssertTrue(restarted.caughtUp(from: "n2", after: "", nil, more: false, nowMs: t0 + 700).isEmpty)
        XCTAssertEqual(catchUps(restarted.tick(nowMs: t0 + 1_700, gone: [])), ["n2@"])
        XCTAssertEqual(catchUps(restarted.tick(nowMs: t0 + 2_700, gone: [])), [], "one ask in flight at a time")

        let page = successor.catchUpPage(for: "n1", after: "", limit: 100)
        XCTAssertEqual(page.entries.map(\.key), [UserRecord.key(of: user)])
        XCTAssertFalse(page.more)
        _ = restarted.caughtUp(from: "n2", after: "", page.entries, more: page.more, nowMs: t0 + 2_800)
        XCTAssertTrue(restarted.presence.isOnline(user), "the session goes on")
        XCTAssertEqual(restarted.callOf[user]?.callID, callID, "the user is still in its call here")
        XCTAssertTrue(restarted.catchingUp.isEmpty)
        XCTAssertTrue(restarted.flush().isEmpty, "what it holds is what its successor holds")
    }

    func testAWriterBehindItsReplicaLearnsTheNewerRecordAndWritesPastIt() throws {
        let members = ["n1", "n2"]
        let user = uid(ownedBy: "n1", among: members)
        var successor = makeNode("n2", seed: 9, members: members)
        let (_, callID) = try ownerWithACall(user, successor: &successor)

        // n1 starts again, its catch-up not answered yet, and the user logs in anew: its record
        // is written from version 1, behind the successor's.
        var restarted = makeNode("n1", seed: 11, members: members)
        _ = try login(&restarted, user, at: t0 + 1_000)
        let written = restarted.flush()
        guard case .replicate(let batch)? = written.first, written.count == 1 else { return XCTFail("one batch: \(written)") }
        let (newer, _) = successor.replicaBatch(batch.records, nowMs: t0 + 1_000)
        XCTAssertEqual(newer.map(\.version), [successor.records.entries[UserRecord.key(of: user)]!.version],
                       "the replica answers with what it holds newer")
        _ = restarted.replicaBatchAnswered(batch, held: true, newer: newer, nowMs: t0 + 1_000)
        XCTAssertEqual(restarted.callOf[user]?.callID, callID, "the owner learns the call its user is in")

        for case .replicate(let again) in restarted.flush() {
            XCTAssertTrue(successor.replicaBatch(again.records, nowMs: t0 + 1_001).newer.isEmpty, "written past it")
        }
        XCTAssertEqual(successor.records[UserRecord.key(of: user)]?.inCall?.callID, callID)
        XCTAssertEqual(successor.records[UserRecord.key(of: user)]?.session?.id, restarted.presence.sessionOf[user])
    }

    func testAnEndNoPollTookMovesWithTheUserToItsNewOwnerAndFreesItOnlyFromThatCall() throws {
        let newcomer = "n0"
        let members = ["n1", newcomer]
        let moved = uid(ownedBy: newcomer, among: members)
        var node = makeNode("n1", members: ["n1"])
        let session = try login(&node, moved)
        _ = try node.poll(session, poll: 1, waitMs: 0, nowMs: t0)
        // A call rings and ends while the user's poll is on its way elsewhere: both wait here.
        _ = node.deliver("ringing", to: moved, callID: "77-abc", state: .calling, owner: "n1", sequence: 1)
        _ = node.deliver("over", to: moved, callID: "77-abc", state: .prepared, owner: "n1", sequence: 2)
        let handOver = node.membersChanged(alive: members, gone: [], nowMs: t0 + 1)
        let sent = handOver.compactMap { if case .handOver(moved, let notices) = $0 { notices } else { nil } }
        XCTAssertEqual(sent, [["over"]], "the end goes to the new owner; the ring, stale there, stays behind")
        XCTAssertTrue(node.mailboxes.isEmpty)

        // At the new owner, the end frees the user from the call it ended, and from no other.
        var owner = makeNode(newcomer, members: members)
        _ = try login(&owner, moved)
        _ = owner.deliver("ringing", to: moved, callID: "77-abc", state: .calling, owner: newcomer, sequence: 1)
        for notice in sent.joined() { _ = owner.deliver(notice, to: moved, callID: "77-abc", state: .prepared, owner: "n1", sequence: 2) }
        XCTAssertNil(owner.callOf[moved])
        _ = owner.deliver("ringing", to: moved, callID: "88-def", state: .calling, owner: newcomer, sequence: 1)
        for notice in sent.joined() { _ = owner.deliver(notice, to: moved, callID: "77-abc", state: .prepared, owner: "n1", sequence: 3) }
        XCTAssertEqual(owner.callOf[moved]?.callID, "88-def")
    }

    /// Members n1 and n2; n1 owns `dialler` and `called` (both logged in there) and holds the call
    /// `dialler` rang `called` in.
    func callRungAtItsOwner() throws -> (owner: Node, other: Node, dialler: UInt32, called: UInt32, callID: String) {
        let members = ["n1", "n2"]
        let owned = (1...1_000).map(UInt32.init).filter { makeNode("n1", members: members).owner(of: $0) == "n1" }
        let (dialler, called) = (owned[0], owned[1])
        var owner = makeNode("n1", members: members)
        _ = try login(&owner, dialler)
        _ = try login(&owner, called)
        let plan = try owner.dial(called, caller: dialler, nowMs: t0)
        _ = try owner.ring(Node.Ring(callID: plan.callID, channel: "call-\(called)-\(plan.channelSecret)", caller: dialler,
                                     callee: called, type: .video), nowMs: t0)
        return (owner, makeNode("n2", seed: 9, members: members), dialler, called, plan.callID)
    }

    /// The records `node` hands back to n1 and n2 once it sees them both again.
    func handOver(healing node: inout Node) -> [ReplicatedEntry<UserRecord>] {
        var records: [ReplicatedEntry<UserRecord>] = []
        for case .replicate(let batch) in node.membersChanged(alive: ["n1", "n2"], gone: [], nowMs: t0 + 1_000) {
            records += batch.records
        }
        return records
    }

    func testACallEndedOnOneSideOfAPartitionEndsTheOtherSidesCopyWhateverTheVersions() throws {
        var (owner, other, dialler, called, callID) = try callRungAtItsOwner()
        func replicate(_ from: inout Node, to: inout Node) {
            for case .replicate(let batch) in from.flush() {
                let answer = to.replicaBatch(batch.records, nowMs: t0)
                from.replicaBatchAnswered(batch, held: true, newer: answer.newer, nowMs: t0)
            }
        }
        _ = try owner.act(.accept(liveRoom: ""), by: called, callID: callID, nowMs: t0 + 10)
        replicate(&owner, to: &other)

        // Cut off from each other: the other side takes the call over and it is hung up there.
        _ = other.membersChanged(alive: ["n2"], gone: ["n1"], nowMs: t0 + 100)
        XCTAssertEqual(other.book.call(of: called)?.id, callID)
        _ = try other.act(.hangup(reason: ""), by: dialler, callID: callID, nowMs: t0 + 200)
        _ = other.flush()
        // The owner, not hearing of it, writes the user's record more often (a higher version).
        for step in 0..<3 {
            _ = try owner.act(.firstFrame, by: step == 0 ? dialler : called, callID: callID, nowMs: t0 + 300 + Int64(step))
            _ = owner.deliver("n\(step)", to: called, callID: callID, state: .connecting, owner: "n1")
            _ = owner.flush()
        }
        let key = UserRecord.key(of: called)
        XCTAssertGreaterThan(owner.records.entries[key]!.version, other.records.entries[key]!.version)
        XCTAssertEqual(owner.book.calls[callID]?.isActive, true)
        let live = owner.records.entries[key]!

        let endedThere = try XCTUnwrap(other.book.calls[callID])
        // Healed: what the other side held comes back to the owner (its hand-over); the end wins.
        let handOver = handOver(healing: &other)
        XCTAssertEqual(handOver.first { $0.key == key }?.value?.ownedCall?.phase, .ended, "the other side's record keeps the end")
        let directives = owner.receive(handOver, nowMs: t0 + 1_000)
        XCTAssertEqual(owner.book.calls[callID]?.phase, .ended, "the owner's copy ends too")
        XCTAssertEqual(owner.book.calls[callID]?.end?.reason, .hungUp)
        XCTAssertNil(owner.book.call(of: called))
        XCTAssertNil(owner.book.call(of: dialler))
        let told = directives.compactMap { if case .call(.notify(let notice)) = $0 { notice } else { nil } }
        XCTAssertEqual(Set(told.map(\.to)), [dialler, called], "both parties are told it is over")
        XCTAssertTrue(told.allSatisfy { $0.state == .prepared && $0.sequence > endedThere.sequence })

        // An active copy that arrives later (a replica's stale write) does not bring it back.
        var stale = live
        stale.version += 100
        _ = owner.receive([stale], nowMs: t0 + 2_000)
        XCTAssertEqual(owner.book.calls[callID]?.isActive, false)
        XCTAssertEqual(owner.records[key]?.ownedCall?.phase, .ended)
    }

    func testACallBothSidesOfAPartitionHeldNumbersItsNoticesAboveTheOtherSidesWhateverTheVersions() throws {
        var (owner, other, dialler, called, callID) = try callRungAtItsOwner()
        for case .replicate(let batch) in owner.flush() { _ = other.replicaBatch(batch.records, nowMs: t0) }

        // Cut off one way: the other side takes the ringing call over and tells a party of it, with
        // numbers 1 000 above the owner's, while the owner holds the call on.
        _ = other.membersChanged(alive: ["n2"], gone: ["n1"], nowMs: t0 + 100)
        let returned = try other.act(.signaling(.returned), by: called, callID: callID, nowMs: t0 + 200).directives
        let toldThere = returned.compactMap { if case .call(.notify(let notice)) = $0 { notice.sequence } else { nil } }
        let highest = try XCTUnwrap(toldThere.max())
        XCTAssertGreaterThan(highest, CallBook.adoptedSequenceGap)
        _ = other.flush()
        // The owner writes the callee's record more often meanwhile (a higher version).
        for step in 0..<4 {
            _ = try owner.act(.signaling(step.isMultiple(of: 2) ? .lost : .returned), by: called, callID: callID,
                              nowMs: t0 + 300 + Int64(step))
            _ = owner.flush()
        }
        let key = UserRecord.key(of: called)
        XCTAssertGreaterThan(owner.records.entries[key]!.version, other.records.entries[key]!.version)
        XCTAssertLessThan(try XCTUnwrap(owner.book.calls[callID]).sequence, highest)

        // Healed: the other side's record comes back to the owner (its hand-over) and loses the merge.
        let handOver = handOver(healing: &other)
        XCTAssertEqual(handOver.first { $0.key == key }?.value?.ownedCall?.sequence, highest)
        _ = owner.receive(handOver, nowMs: t0 + 1_000)
        XCTAssertEqual(owner.book.calls[callID]?.phase, .ringing, "the owner's copy goes on")
        _ = owner.flush()
        XCTAssertEqual(owner.records[key]?.ownedCall?.sequence, highest, "its record carries the numbers on")

        // The call ends at the owner: every party hears it, numbered above what the other side told.
        let rejected = try owner.act(.reject(reason: ""), by: called, callID: callID, nowMs: t0 + 2_000).directives
        let ends = rejected.compactMap { if case .call(.notify(let notice)) = $0 { notice } else { nil } }
        XCTAssertEqual(Set(ends.map(\.to)), [dialler, called])
        XCTAssertTrue(ends.allSatisfy { $0.state == .prepared && $0.sequence > highest })
    }

    func testACallWhoseOwnerIsGoneIsCheckedAndALostOneFreesTheParty() throws {
        let members = ["n1", "n2", "n3"]
        let user = uid(ownedBy: "n1", among: members)
        var node = makeNode("n1", members: members)
        _ = try login(&node, user)
        let callID = "77-abc"
        _ = node.deliver("ring", to: user, callID: callID, state: .calling, owner: "n3")
        XCTAssertTrue(node.tick(nowMs: t0 + 5_000, gone: []).allSatisfy { if case .checkCall = $0 { false } else { true } })

        let directives = node.membersChanged(alive: ["n1", "n2"], gone: ["n3"], nowMs: t0 + 6_000)
        let owner = node.owner(of: 77)
        if owner == "n1" {
            XCTAssertTrue(directives.contains { if case .callLost(user, _) = $0 { true } else { false } },
                          "this node owns the call now and does not hold it: lost")
        } else {
            XCTAssertTrue(directives.contains { if case .checkCall(user, _, owner) = $0 { true } else { false } })
            XCTAssertTrue(node.callChecked(uid: user, callID: "other", owner: owner, .lost).isEmpty, "another call's answer is ignored")
            XCTAssertTrue(node.callChecked(uid: user, callID: callID, owner: owner, .noAnswer).isEmpty)
            XCTAssertEqual(node.callOf[user]?.owner, "n3", "no answer: asked again later")
            XCTAssertEqual(node.callChecked(uid: user, callID: callID, owner: owner, .lost).count, 1)
        }
        XCTAssertNil(node.callOf[user], "the party is free")
    }

    func testAPartysCallIsConfirmedWithItsOwnerOnceNotedLongEnoughAndAgainLater() throws {
        let members = ["n1", "n2", "n3"]
        let user = uid(ownedBy: "n1", among: members)
        var node = makeNode("n1", members: members)
        _ = try login(&node, user)
        let callID = "77-abc"
        _ = node.deliver("ring", to: user, callID: callID, state: .calling, owner: "n3")
        func checks(_ directives: [Node.Directive]) -> [String] {
            directives.compactMap { if case .checkCall(user, let entry, let owner) = $0 { "\(entry.callID)@\(owner)" } else { nil } }
        }
        let owner = node.owner(of: 77)
        var now = t0 + 1_000
        XCTAssertEqual(checks(node.tick(nowMs: now, gone: [])), [], "noted now: a dial's ring may still be on its way")
        now += Node.callRecheckMs - 1_000
        XCTAssertEqual(checks(node.tick(nowMs: now, gone: [])), [], "not yet")
        now += 1_000
        let first = node.tick(nowMs: now, gone: [])
        if owner == "n1" {
            XCTAssertTrue(first.contains { if case .callLost(user, _) = $0 { true } else { false } },
                          "this node owns the call and does not hold it: the party is freed")
            XCTAssertNil(node.callOf[user])
            return
        }
        XCTAssertEqual(checks(first), ["\(callID)@\(owner)"])
        XCTAssertTrue(node.callChecked(uid: user, callID: callID, owner: owner, .holds).isEmpty)
        now += 1_000
        XCTAssertEqual(checks(node.tick(nowMs: now, gone: [])), [], "held: asked again only after as long")
        now += Node.callRecheckMs
        XCTAssertEqual(checks(node.tick(nowMs: now, gone: [])), ["\(callID)@\(owner)"])
        XCTAssertEqual(node.callChecked(uid: user, callID: callID, owner: owner, .lost).count, 1)
        XCTAssertNil(node.callOf[user], "a call its owner no longer holds frees the party")
    }

    func testALossDecidedElsewhereIsConfirmedWithTheCallsOwnerBeforeThePartyIsTold() throws {
        let members = ["n1", "n2", "n3"]
        let user = uid(ownedBy: "n1", among: members)
        let callee = uid(ownedBy: "n3", among: members)
        var node = makeNode("n1", members: members)
        let session = try login(&node, user)
        _ = try node.poll(session, poll: 1, waitMs: 0, nowMs: t0)
        let callID = "\(callee)-abc"
        _ = node.deliver("ring", to: user, callID: callID, state: .calling, owner: "n3", sequence: 1)
        _ = try node.poll(session, poll: 2, waitMs: 0, nowMs: t0)
        _ = try node.poll(session, poll: 3, waitMs: 0, nowMs: t0)
        _ = try node.poll(session, poll: 4, waitMs: 5_000, nowMs: t0)

        // Another node (cut off from n3 for a while) decided the call was lost with it.
        let lost = node.deliver("lost", to: user, callID: callID, state: .failed, owner: "n3", sequence: 1 << 62, lost: true)
        XCTAssertTrue(lost.contains { if case .checkCall(user, _, "n3") = $0 { true } else { false } }, "the owner is asked")
        XCTAssertTrue(answered(lost).isEmpty, "the party is not told yet")
        XCTAssertEqual(node.callOf[user]?.callID, callID)
        XCTAssertTrue(node.callChecked(uid: user, callID: callID, owner: "n3", .holds).isEmpty)
        XCTAssertEqual(node.callOf[user]?.callID, callID, "the owner holds the call: the party stays in it")

        // Confirmed lost: the party is freed and told, once.
        _ = node.deliver("lost", to: user, callID: callID, state: .failed, owner: "n3", sequence: 1 << 62, lost: true)
        XCTAssertEqual(node.callChecked(uid: user, callID: callID, owner: "n3", .lost).map { if case .callLost(user, _) = $0 { true } else { false } }, [true])
        XCTAssertNil(node.callOf[user])
        XCTAssertEqual(answered(node.deliver("lost", to: user, callID: callID, state: .failed, owner: "n3", sequence: 1 << 62, lost: true)),
                       [4: ["lost"]], "the node's own loss notice reaches the party")

        // A loss of a call the party is not noted in here is delivered as it is.
        _ = try node.poll(session, poll: 5, waitMs: 0, nowMs: t0)
        _ = try node.poll(session, poll: 6, waitMs: 5_000, nowMs: t0)
        XCTAssertEqual(answered(node.deliver("lost", to: user, callID: "\(callee)-def", state: .failed, owner: "n3", sequence: 1 << 62, lost: true)),
                       [6: ["lost"]])
    }

    // MARK: - The call's owner checks its parties' owners

    /// Answers every catch-up ask `node` has in flight with an empty page: it is caught up.
    func caughtUp(_ node: inout Node, from members: [String]) {
        for member in members where member != node.selfID {
            _ = node.caughtUp(from: member, after: "", [], more: false, nowMs: t0)
        }
    }

    /// Hands each notice among `directives` to its party's owner among `nodes`, as the shells do.
    func carry(_ directives: [Node.Directive], to nodes: inout [String: Node]) {
        for case .call(.notify(let notice)) in directives {
            let owner = nodes.values.first!.owner(of: notice.to)
            _ = nodes[owner]?.deliver("\(notice.state)", to: notice.to, callID: notice.callID, state: notice.state,
                                      owner: "n1", sequence: notice.sequence)
        }
    }

    /// The party checks among `directives`, as `uid@owner`.
    func partyChecks(_ directives: [Node.Directive]) -> [String] {
        directives.compactMap { if case .checkParty(let uid, _, let owner) = $0 { "\(uid)@\(owner)" } else { nil } }
    }

    /// Nodes n1 and n2, caught up, and a connected call owned by n1 from `viewer` (owned by n2)
    /// to `host` (owned by n1).
    func connectedCall() throws -> (nodes: [String: Node], viewer: UInt32, host: UInt32, callID: String) {
        let members = ["n1", "n2"]
        let host = uid(ownedBy: "n1", among: members)
        let viewer = uid(ownedBy: "n2", among: members)
        var nodes = ["n1": makeNode("n1", members: members), "n2": makeNode("n2", seed: 9, members: members)]
        caughtUp(&nodes["n1"]!, from: members)
        caughtUp(&nodes["n2"]!, from: members)
        _ = try login(&nodes["n1"]!, host)
        _ = try login(&nodes["n2"]!, viewer)
        let plan = try nodes["n2"]!.dial(host, caller: viewer, nowMs: t0)
        XCTAssertEqual(plan.owner, "n1")
        let rung = try nodes["n1"]!.ring(Node.Ring(callID: plan.callID, channel: "call-\(host)-\(plan.channelSecret)",
                                                   caller: viewer, callee: host, type: .video), nowMs: t0)
        carry(rung.directives, to: &nodes)
        nodes["n2"]!.ringAnswered(caller: viewer, callID: plan.callID, .rung)
        for (request, party) in [(Node.PartyRequest.accept(liveRoom: ""), host), (.firstFrame, host), (.firstFrame, viewer)] {
            carry(try nodes["n1"]!.act(request, by: party, callID: plan.callID, nowMs: t0 + 500).directives, to: &nodes)
        }
        XCTAssertEqual(nodes["n1"]!.book.calls[plan.callID]?.phase, .connected)
        XCTAssertEqual(nodes["n1"]!.callOf[host]?.callID, plan.callID)
        XCTAssertEqual(nodes["n2"]!.callOf[viewer]?.callID, plan.callID)
        return (nodes, viewer, host, plan.callID)
    }

    func testACallWhosePartyItsOwnerFreedWhileCutOffEndsForBothOnceTheCallsOwnerChecks() throws {
        let made = try connectedCall()
        var nodes = made.nodes
        let (viewer, host, callID) = (made.viewer, made.host, made.callID)
        let members = ["n1", "n2"]

        // n2 hears nobody for a while: alone, it takes itself for the host's owner, holds no copy
        // of the call (the host's record had not reached it), and frees the viewer. The partition
        // heals; the call went on at n1 all along.
        let cut = nodes["n2"]!.membersChanged(alive: ["n2"], gone: ["n1"], nowMs: t0 + 1_000)
        XCTAssertTrue(cut.contains { if case .callLost(viewer, _) = $0 { true } else { false } })
        _ = nodes["n2"]!.membersChanged(alive: members, gone: [], nowMs: t0 + 2_000)
        XCTAssertEqual(try nodes["n2"]!.partyNote(uid: viewer, callID: callID), .unsure, "catching up: it cannot say yet")
        caughtUp(&nodes["n2"]!, from: members)
        XCTAssertNil(nodes["n2"]!.callOf[viewer], "free at its owner")
        XCTAssertEqual(nodes["n1"]!.book.calls[callID]?.isActive, true, "while the call goes on")
        XCTAssertEqual(try nodes["n2"]!.partyNote(uid: viewer, callID: callID), .free)
        XCTAssertEqual(try nodes["n2"]!.partyNote(uid: host, callID: callID), .unsure, "n2 does not own the host")

        // The call's owner asks the viewer's owner once it has held the call a while, and checks
        // the host, owned here, itself.
        var now = t0 + 2_000
        XCTAssertEqual(partyChecks(nodes["n1"]!.tick(nowMs: now, gone: [])), [], "seen now: not yet")
        now += Node.callRecheckMs - 1_000
        XCTAssertEqual(partyChecks(nodes["n1"]!.tick(nowMs: now, gone: [])), [])
        now += 1_000
        XCTAssertEqual(partyChecks(nodes["n1"]!.tick(nowMs: now, gone: [])), ["\(viewer)@n2"])
        XCTAssertEqual(nodes["n1"]!.book.calls[callID]?.isActive, true, "the host is in the call at its owner")

        XCTAssertTrue(nodes["n1"]!.partyChecked(uid: viewer, callID: callID, .unsure, nowMs: now).isEmpty)
        XCTAssertTrue(nodes["n1"]!.partyChecked(uid: viewer, callID: callID, .inCall, nowMs: now).isEmpty)
        let note = try nodes["n2"]!.partyNote(uid: viewer, callID: callID)
        let ended = nodes["n1"]!.partyChecked(uid: viewer, callID: callID, note, nowMs: now)
        let call = try XCTUnwrap(nodes["n1"]!.book.calls[callID])
        XCTAssertEqual(call.phase, .ended)
        XCTAssertEqual(call.end?.reason, .partyLeft)
        XCTAssertEqual(call.end?.by, viewer)
        let told = ended.compactMap { if case .call(.notify(let notice)) = $0 { notice } else { nil } }
        XCTAssertEqual(Set(told.map(\.to)), [viewer, host], "both parties hear the end")
        XCTAssertTrue(told.allSatisfy { $0.state == .prepared })
        carry(ended, to: &nodes)
        XCTAssertNil(nodes["n1"]!.callOf[host], "the host is free to be called again")
        XCTAssertNil(nodes["n2"]!.callOf[viewer])
        XCTAssertTrue(nodes["n1"]!.partyChecked(uid: viewer, callID: callID, .free, nowMs: now + 1).isEmpty,
                      "a repeated answer ends nothing twice")
    }

    func testAPartyInAnotherCallAtItsOwnerEndsTheCallItLeftAndACallBothNoteGoesOn() throws {
        let made = try connectedCall()
        var nodes = made.nodes
        let (viewer, host, callID) = (made.viewer, made.host, made.callID)

        // Both note the call: checked every callRecheckMs, it goes on.
        var now = t0 + 1_000
        _ = nodes["n1"]!.tick(nowMs: now, gone: [])
        for _ in 0..<3 {
            now += Node.callRecheckMs
            let asked = nodes["n1"]!.tick(nowMs: now, gone: [])
            XCTAssertEqual(partyChecks(asked), ["\(viewer)@n2"])
            XCTAssertEqual(try nodes["n2"]!.partyNote(uid: viewer, callID: callID), .inCall)
            XCTAssertTrue(nodes["n1"]!.partyChecked(uid: viewer, callID: callID, .inCall, nowMs: now).isEmpty)
        }
        XCTAssertEqual(nodes["n1"]!.book.calls[callID]?.phase, .connected)

        // The viewer's owner lost the call and had the viewer ring into another one meanwhile.
        _ = nodes["n2"]!.callChecked(uid: viewer, callID: callID, owner: "n1", .lost)
        let other = "\(host + 1_000)-abc"
        _ = nodes["n2"]!.deliver("ring", to: viewer, callID: other, state: .calling, owner: "n2", sequence: 1)
        let note = try nodes["n2"]!.partyNote(uid: viewer, callID: callID)
        XCTAssertEqual(note, .inOtherCall(other))
        _ = nodes["n1"]!.partyChecked(uid: viewer, callID: callID, note, nowMs: now)
        XCTAssertEqual(nodes["n1"]!.book.calls[callID]?.end?.reason, .partyLeft, "one call per user: the one it left ends")
        XCTAssertEqual(nodes["n1"]!.book.calls[callID]?.end?.message.contains(other), true)
        XCTAssertEqual(nodes["n2"]!.callOf[viewer]?.callID, other, "and the viewer stays in the one its owner notes")
    }

    func testACallJustRungIsNotCheckedUntilItWasHeldAWhile() throws {
        let members = ["n1", "n2"]
        let host = uid(ownedBy: "n1", among: members)
        let viewer = uid(ownedBy: "n2", among: members)
        var nodes = ["n1": makeNode("n1", members: members)]
        caughtUp(&nodes["n1"]!, from: members)
        _ = try login(&nodes["n1"]!, host)
        _ = nodes["n1"]!.tick(nowMs: t0, gone: [])
        // Rung, its notice for the viewer still on its way to the viewer's owner.
        let callID = "\(host)-0123456789abcdef01234567"
        let rung = try nodes["n1"]!.ring(Node.Ring(callID: callID, channel: "call-\(host)-x", caller: viewer, callee: host,
                                                   type: .video, timeoutMs: 60_000), nowMs: t0 + 500)
        carry(rung.directives, to: &nodes)
        var now = t0 + 500
        while now < t0 + 500 + Node.callRecheckMs {
            now += 500
            XCTAssertEqual(partyChecks(nodes["n1"]!.tick(nowMs: now, gone: [])), [], "at \(now - t0 - 500) ms")
        }
        now += 1_000
        XCTAssertEqual(partyChecks(nodes["n1"]!.tick(nowMs: now, gone: [])), ["\(viewer)@n2"])
        XCTAssertEqual(nodes["n1"]!.book.calls[callID]?.phase, .ringing, "the host, owned here, is in it")
    }

    func testAPartyCheckThatIsMalformedHugeOrAboutNoCallHereIsRefusedOrChangesNothing() throws {
        let made = try connectedCall()
        let nodes = made.nodes
        let (viewer, host, callID) = (made.viewer, made.host, made.callID)

        // At a party's owner: a malformed ask is refused, with a short message, and traps nothing.
        let n2 = nodes["n2"]!
        for (uid, id) in [(UInt32(0), callID), (viewer, ""), (viewer, "abc"), (viewer, "0-abc"), (viewer, "-abc"),
                          (viewer, String(repeating: "9", count: 100_000) + "-x"), (viewer, "\(host)-" + String(repeating: "f", count: 100_000))] {
            let refused = refusal { () throws(Node.Refusal) in _ = try n2.partyNote(uid: uid, callID: id) }
            XCTAssertEqual(refused?.code, .invalidArgument, "uid \(uid), call id of \(id.utf8.count) bytes")
            XCTAssertLessThan(refused?.message.utf8.count ?? 0, 300, "the message quotes at most a prefix of the id")
        }
        XCTAssertEqual(try n2.partyNote(uid: viewer, callID: "\(host)-nosuchcall"), .inOtherCall(callID),
                       "a call it never heard of: it says what it notes")
        XCTAssertEqual(try n2.partyNote(uid: UInt32.max, callID: callID), n2.owner(of: .max) == "n2" ? .free : .unsure)

        // At the call's owner: an answer about a call not held, a uid of no party, or a call
        // over changes nothing.
        var n1 = nodes["n1"]!
        for (uid, id) in [(viewer, "\(host)-nosuchcall"), (viewer, ""), (UInt32(0), callID), (UInt32(77), callID),
                          (viewer, String(repeating: "9", count: 100_000))] {
            XCTAssertTrue(n1.partyChecked(uid: uid, callID: id, .free, nowMs: t0 + 1_000).isEmpty)
        }
        XCTAssertEqual(n1.book.calls[callID]?.phase, .connected)
        // A huge id in an answer is not copied whole into the call's end.
        _ = n1.partyChecked(uid: viewer, callID: callID, .inOtherCall(String(repeating: "7", count: 100_000)), nowMs: t0 + 1_000)
        XCTAssertEqual(n1.book.calls[callID]?.phase, .ended)
        XCTAssertLessThan(n1.book.calls[callID]?.end?.message.utf8.count ?? .max, 200)
        XCTAssertTrue(n1.partyChecked(uid: viewer, callID: callID, .free, nowMs: t0 + 2_000).isEmpty, "over: nothing more")
    }
}
