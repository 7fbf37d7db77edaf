import XCTest

@testable import Membership

/// One or two ``Membership`` values driven by hand: the protocol steps one message at a time.
final class MembershipBehaviourTests: XCTestCase {
    private let settings = MembershipSettings.lan

    private func metadata(_ name: String) -> MemberMetadata {
        MemberMetadata(role: "edge", clusterEndpoint: "tcp://\(name):7100")
    }

    private func address(_ name: String) -> MemberAddress {
        MemberAddress(id: MemberID(name), endpoint: "tcp://\(name):7100")
    }

    private func alive(_ name: String, _ incarnation: UInt64 = 0) -> MemberUpdate {
        MemberUpdate(id: MemberID(name), state: .alive, incarnation: incarnation, metadata: metadata(name))
    }

    /// A member `a` that has learned `others` through a push-pull reply.
    private func member(_ name: String = "a", knowing others: [String], seed: UInt64 = 1) -> Membership {
        var membership = Membership(id: MemberID(name), metadata: metadata(name), settings: settings, now: .zero, randomSeed: seed)
        _ = membership.receive(
            .pushPull(.init(sender: address(others[0]), isReply: true, members: others.map { alive($0) })), now: .zero)
        return membership
    }

    /// Ticks every 10 ms from `start` up to `end`, collecting directives with their times.
    private func run(_ membership: inout Membership, from start: Duration, to end: Duration) -> [(Duration, MembershipDirective)] {
        var out: [(Duration, MembershipDirective)] = []
        var now = start
        while now <= end {
            out += membership.tick(now: now).map { (now, $0) }
            now += .milliseconds(10)
        }
        return out
    }

    private func sends(_ directives: [(Duration, MembershipDirective)]) -> [(at: Duration, message: GossipMessage, to: String)] {
        directives.compactMap { time, directive in
            if case .send(let message, let to) = directive { (time, message, to) } else { nil }
        }
    }

    func testUnansweredProbeSuspectsTheTargetAndSlowsAnUnhealthyMemberDown() throws {
        var a = member(knowing: ["b"])
        let out = run(&a, from: .zero, to: .seconds(2))
        let pings = sends(out).filter { $0.message.kind == .ping }
        XCTAssertEqual(pings.count, 3)
        XCTAssertTrue(pings.allSatisfy { $0.to == "tcp://b:7100" })
        // No one to ask for an indirect probe: each failed probe counts against us (+1), and the
        // next probe period is (LHM + 1) × 250 ms.
        XCTAssertEqual(pings[1].at - pings[0].at, .milliseconds(250))
        XCTAssertEqual(pings[2].at - pings[1].at, .milliseconds(500), "after one failure, LHM 1 doubles the period")
        // The third probe was abandoned when b was declared dead during it: no verdict, no penalty.
        XCTAssertEqual(a.statistics.failedProbes, 2)
        XCTAssertEqual(a.localHealth, 2)
        // Two members: nobody can confirm, so the suspicion lasts the minimum (1 s), then b is dead.
        let states = out.compactMap { time, directive -> (Duration, MemberState)? in
            if case .memberChanged(let change) = directive { (time, change.member.state) } else { nil }
        }
        XCTAssertEqual(states.map(\.1), [.suspect, .dead])
        XCTAssertEqual(states[1].0 - states[0].0, .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .dead)
        XCTAssertEqual(a.statistics.deathsDeclared, 1)
    }

    func testAnAckEndsTheProbeAndImprovesHealth() throws {
        var a = member(knowing: ["b"])
        var now = Duration.zero
        var ignoredFirstPing = false
        var refuted: UInt64 = 0
        while now < .seconds(4) {
            for directive in a.tick(now: now) {
                switch directive {
                case .memberChanged(let change) where change.member.id == "b" && change.member.state == .suspect:
                    // b hears of it and refutes.
                    refuted = change.member.incarnation + 1
                    _ = a.receive(.broadcast(.init(sender: address("b"), updates: [alive("b", refuted)])), now: now)
                case .send(.ping(let ping), _):
                    if ignoredFirstPing {
                        _ = a.receive(.ack(.init(sender: address("b"), sequence: ping.sequence)), now: now + .milliseconds(2))
                    }
                    ignoredFirstPing = true
                default:
                    break
                }
            }
            now += .milliseconds(10)
        }
        XCTAssertEqual(refuted, 1)
        XCTAssertEqual(a.statistics.failedProbes, 1)
        XCTAssertGreaterThan(a.statistics.probes, 5)
        XCTAssertEqual(a.localHealth, 0, "successful probes bring local health back")
        XCTAssertEqual(a.member("b")?.state, .alive)
        XCTAssertEqual(a.member("b")?.incarnation, 1)
    }

    func testIndirectProbesAndNacksTellOwnSlownessFromTheTargets() throws {
        var a = member(knowing: ["b", "c", "d", "e"])
        var pingRequests: [(at: Duration, message: GossipMessage.PingRequest, to: String)] = []
        var target: MemberID?
        var now = Duration.zero
        while pingRequests.isEmpty, now < .seconds(2) {
            for directive in a.tick(now: now) {
                if case .send(.ping(let ping), _) = directive { target = ping.target }
                if case .send(.pingRequest(let request), let to) = directive { pingRequests.append((now, request, to)) }
            }
            now += .milliseconds(10)
        }
        XCTAssertEqual(pingRequests.count, 3, "k = 3 indirect probes")
        XCTAssertTrue(pingRequests.allSatisfy { $0.message.target.id == target && $0.message.wantsNack && $0.to != "tcp://\(target!):7100" })
        // Every intermediary answers with a nack: the target is unreachable, we are fine.
        for request in pingRequests {
            let helper = a.members.first { $0.metadata.clusterEndpoint == request.to }!
            _ = a.receive(.nack(.init(sender: MemberAddress(id: helper.id, endpoint: request.to), sequence: request.message.sequence)), now: now)
        }
        _ = run(&a, from: now, to: now + .milliseconds(250))
        XCTAssertEqual(a.member(target!)?.state, .suspect)
        XCTAssertEqual(a.localHealth, 0, "all nacks arrived: no penalty")
        XCTAssertEqual(a.statistics.nacksReceived, 3)
    }

    func testIntermediaryRelaysTheAckOrSendsANack() throws {
        var c = member("c", knowing: ["a", "b"])
        let request = GossipMessage.pingRequest(.init(sender: address("a"), sequence: 77, target: address("b"), wantsNack: true))
        let out = c.receive(request, now: .seconds(1))
        guard case .send(.ping(let ping), let to)? = out.first else { return XCTFail("no ping to the target: \(out)") }
        XCTAssertEqual(to, "tcp://b:7100")
        XCTAssertEqual(ping.target, "b")
        // b answers: the ack goes to a with a's sequence.
        let relayed = c.receive(.ack(.init(sender: address("b"), sequence: ping.sequence)), now: .seconds(1) + .milliseconds(5))
        guard case .send(.ack(let ack), let back)? = relayed.first else { return XCTFail("no relayed ack: \(relayed)") }
        XCTAssertEqual(back, "tcp://a:7100")
        XCTAssertEqual(ack.sequence, 77)

        // A second request that b never answers: a nack at 80% of the probe timeout (100 ms).
        _ = c.receive(.pingRequest(.init(sender: address("a"), sequence: 78, target: address("b"), wantsNack: true)), now: .seconds(2))
        XCTAssertTrue(sends(run(&c, from: .seconds(2), to: .seconds(2) + .milliseconds(90))).allSatisfy { $0.message.kind != .nack })
        let nacks = sends(run(&c, from: .seconds(2) + .milliseconds(100), to: .seconds(2) + .milliseconds(400)))
            .filter { $0.message.kind == .nack }
        XCTAssertEqual(nacks.count, 1)
        XCTAssertEqual(nacks.first?.message, .nack(.init(sender: address("c"), sequence: 78)))
        XCTAssertEqual(nacks.first?.to, "tcp://a:7100")
    }

    func testAMemberRefutesASuspicionOfItself() throws {
        var b = member("b", knowing: ["a"])
        let suspicion = MemberUpdate(id: "b", state: .suspect, incarnation: 0, from: "a")
        let out = b.receive(.ping(.init(sender: address("a"), sequence: 5, target: "b", updates: [suspicion])), now: .seconds(1))
        XCTAssertEqual(b.localMember.incarnation, 1)
        XCTAssertEqual(b.localMember.state, .alive)
        XCTAssertEqual(b.statistics.refutations, 1)
        XCTAssertEqual(b.localHealth, 1, "having to refute counts against local health")
        // The ack to the suspicious prober already carries the refutation.
        guard case .send(.ack(let ack), _)? = out.first else { return XCTFail("no ack: \(out)") }
        XCTAssertTrue(ack.updates.contains { $0.id == "b" && $0.state == .alive && $0.incarnation == 1 })
        // An older suspicion is ignored; a death at the current incarnation is refuted too.
        _ = b.receive(.broadcast(.init(sender: address("a"), updates: [suspicion])), now: .seconds(2))
        XCTAssertEqual(b.localMember.incarnation, 1)
        _ = b.receive(.broadcast(.init(sender: address("a"), updates: [MemberUpdate(id: "b", state: .dead, incarnation: 1, from: "a")])), now: .seconds(3))
        XCTAssertEqual(b.localMember.incarnation, 2)
    }

    func testAliveAboutOthersNeedsAHigherIncarnationAndSuspectNeedsAtLeastTheCurrentOne() {
        var a = member(knowing: ["b", "c", "d"])
        _ = a.receive(.broadcast(.init(sender: address("c"), updates: [MemberUpdate(id: "b", state: .suspect, incarnation: 0, from: "c")])), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .suspect)
        _ = a.receive(.broadcast(.init(sender: address("c"), updates: [alive("b", 0)])), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .suspect, "alive at the same incarnation does not clear a suspicion")
        _ = a.receive(.broadcast(.init(sender: address("c"), updates: [alive("b", 1)])), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .alive)
        _ = a.receive(.broadcast(.init(sender: address("c"), updates: [MemberUpdate(id: "b", state: .suspect, incarnation: 0, from: "d")])), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .alive, "a suspicion of an older incarnation is stale")
    }

    func testSuspicionTimesOutIntoDeathAndConfirmationsShortenIt() {
        // Six members: k = suspicionMultiplier − 2 = 2 confirmations expected.
        let others = ["b", "c", "d", "e", "f"]
        var slow = member(knowing: others)
        var fast = slow
        let suspicion = MemberUpdate(id: "b", state: .suspect, incarnation: 0, from: "c")
        _ = slow.receive(.broadcast(.init(sender: address("c"), updates: [suspicion])), now: .zero)
        _ = fast.receive(.broadcast(.init(sender: address("c"), updates: [suspicion])), now: .zero)
        for confirmer in ["d", "e"] {
            var confirmation = suspicion
            confirmation.from = MemberID(confirmer)
            _ = fast.receive(.broadcast(.init(sender: address(confirmer), updates: [confirmation])), now: .milliseconds(100))
        }
        XCTAssertEqual(fast.statistics.suspicionConfirmations, 2)
        let minimum = settings.minSuspicionTimeout(members: 6)  // 1 s
        func deathTime(_ m: inout Membership) -> Duration? {
            var now = Duration.zero
            while now < .seconds(20) {
                now += .milliseconds(10)
                _ = m.tick(now: now)  // its own probes may fail too; only the time of b's death matters
                if m.member("b")?.state == .dead { return now }
            }
            return nil
        }
        let fastDeath = deathTime(&fast)
        let slowDeath = deathTime(&slow)
        XCTAssertNotNil(fastDeath)
        XCTAssertNotNil(slowDeath)
        XCTAssertLessThanOrEqual(fastDeath!, minimum + .milliseconds(10), "two confirmations: the minimum timeout")
        XCTAssertGreaterThan(slowDeath!, minimum * 2, "without confirmations it waits much longer")
    }

    func testJoinRetriesTheSeedsUntilSomeMemberAnswers() throws {
        var a = Membership(id: "a", metadata: metadata("a"), settings: settings, now: .zero, randomSeed: 3)
        let first = a.join(seeds: ["tcp://a:7100", "tcp://s1:7100", "tcp://s2:7100", "tcp://s1:7100"], now: .zero)
        XCTAssertEqual(first.count, 2, "own endpoint and duplicates dropped: \(first)")
        XCTAssertTrue(a.isJoining)
        for directive in first {
            guard case .send(.pushPull(let pushPull), _) = directive else { return XCTFail("\(directive)") }
            XCTAssertTrue(pushPull.isJoin)
            XCTAssertFalse(pushPull.isReply)
            XCTAssertEqual(pushPull.members.map(\.id), ["a"])
        }
        var retries = sends(run(&a, from: .milliseconds(10), to: .milliseconds(2500))).filter { $0.message.kind == .pushPull }
        XCTAssertEqual(retries.map(\.at), [.seconds(1), .seconds(1), .seconds(2), .seconds(2)])
        XCTAssertEqual(a.statistics.joinAttempts, 3)
        // A seed answers: a knows it and stops retrying.
        let out = a.receive(.pushPull(.init(sender: address("s1"), isReply: true, members: [alive("s1"), alive("x")])), now: .milliseconds(2600))
        XCTAssertEqual(a.members.map(\.id), ["a", "s1", "x"])
        XCTAssertFalse(a.isJoining)
        XCTAssertEqual(out.count, 2, "two members learned, nothing to answer: \(out)")
        retries = sends(run(&a, from: .milliseconds(2610), to: .seconds(6))).filter { $0.message.kind == .pushPull && $0.message.sender.id == "a" }
        XCTAssertTrue(retries.allSatisfy { if case .pushPull(let p) = $0.message { !p.isJoin } else { true } }, "no more join attempts")
    }

    func testPushPullRequestIsAnsweredWithTheWholeTable() throws {
        var s = member("s", knowing: ["b", "c"])
        let out = s.receive(.pushPull(.init(sender: address("j"), isReply: false, isJoin: true, members: [alive("j")])), now: .seconds(1))
        let reply = out.compactMap { if case .send(.pushPull(let p), let to) = $0 { (p, to) } else { nil } }
        XCTAssertEqual(reply.count, 1)
        XCTAssertEqual(reply.first?.1, "tcp://j:7100")
        XCTAssertEqual(reply.first?.0.isReply, true)
        XCTAssertEqual(reply.first?.0.members.map(\.id), ["b", "c", "j", "s"])
        XCTAssertEqual(s.member("j")?.state, .alive, "the joiner is known at once")
    }

    func testAPingForAnotherProcessAtThisEndpointIsNotAnswered() {
        var a = member(knowing: ["b"])
        XCTAssertTrue(a.receive(.ping(.init(sender: address("b"), sequence: 1, target: "old-a")), now: .seconds(1)).isEmpty)
        let out = a.receive(.ping(.init(sender: address("b"), sequence: 2, target: "a")), now: .seconds(1))
        guard case .send(.ack(let ack), let to)? = out.first else { return XCTFail("no ack: \(out)") }
        XCTAssertEqual(to, "tcp://b:7100")
        XCTAssertEqual(ack.sequence, 2)
        XCTAssertEqual(ack.sender, address("a"))
    }

    func testLeaveTellsEveryLiveMemberAndStopsProbing() throws {
        var a = member(knowing: ["b", "c", "d"])
        _ = a.receive(.broadcast(.init(sender: address("b"), updates: [MemberUpdate(id: "d", state: .dead, incarnation: 0, from: "b")])), now: .zero)
        let out = a.leave(now: .seconds(1))
        let targets = sends(out.map { (.seconds(1), $0) }).map(\.to)
        XCTAssertEqual(Set(targets), ["tcp://b:7100", "tcp://c:7100"], "every live member, not the dead one")
        XCTAssertEqual(a.localMember.state, .left)
        XCTAssertEqual(a.liveMemberCount, 2)
        let later = sends(run(&a, from: .seconds(1), to: .seconds(5)))
        XCTAssertFalse(later.contains { $0.message.kind == .ping || $0.message.kind == .pushPull })
        XCTAssertTrue(a.leave(now: .seconds(6)).isEmpty, "leaving twice does nothing")
        // Others record it as left, which a later suspicion or death does not change.
        var b = member("b", knowing: ["a", "c"])
        for case .send(let message, "tcp://b:7100") in out { _ = b.receive(message, now: .seconds(1)) }
        XCTAssertEqual(b.member("a")?.state, .left)
        _ = b.receive(.broadcast(.init(sender: address("c"), updates: [MemberUpdate(id: "a", state: .dead, incarnation: 0, from: "c")])), now: .seconds(2))
        XCTAssertEqual(b.member("a")?.state, .left)
    }

    func testDeadMemberComesBackOnlyWithAHigherIncarnation() {
        var a = member(knowing: ["b", "c"])
        _ = a.receive(.broadcast(.init(sender: address("c"), updates: [MemberUpdate(id: "b", state: .dead, incarnation: 4, from: "c")])), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .dead)
        _ = a.receive(.broadcast(.init(sender: address("c"), updates: [alive("b", 4)])), now: .seconds(2))
        XCTAssertEqual(a.member("b")?.state, .dead, "the tombstone holds against its own incarnation")
        let out = a.receive(.broadcast(.init(sender: address("c"), updates: [alive("b", 5)])), now: .seconds(3))
        XCTAssertEqual(a.member("b")?.state, .alive)
        XCTAssertEqual(out, [.memberChanged(MemberChange(member: a.member("b")!, previousState: .dead))])
    }

    func testMetadataUpdateRaisesTheIncarnationOnlyWhenSomethingChanged() {
        var a = member(knowing: ["b"])
        var changed = a.localMember.metadata
        changed.load = MemberLoad(channels: 2, connections: 9, cpuPercent: 3.5)
        let out = a.updateMetadata(changed, now: .seconds(1))
        XCTAssertEqual(a.localMember.incarnation, 1)
        XCTAssertEqual(out, [.memberChanged(MemberChange(member: a.localMember, previousState: .alive, metadataChanged: true))])
        XCTAssertTrue(a.updateMetadata(changed, now: .seconds(2)).isEmpty)
        XCTAssertEqual(a.localMember.incarnation, 1, "same metadata: nothing to publish")
        // The next message out carries it.
        let ack = a.receive(.ping(.init(sender: address("b"), sequence: 1, target: "a")), now: .seconds(3))
        guard case .send(.ack(let message), _)? = ack.first else { return XCTFail("\(ack)") }
        XCTAssertTrue(message.updates.contains { $0.id == "a" && $0.incarnation == 1 && $0.metadata == changed })
    }

    func testNextDeadlineIsTheEarliestTimer() {
        var a = member(knowing: ["b"])
        let deadline = a.nextDeadline!
        XCTAssertGreaterThan(deadline, .zero)
        XCTAssertTrue(a.tick(now: deadline - .milliseconds(1)).isEmpty || deadline == .zero)
        XCTAssertFalse(a.tick(now: deadline).isEmpty && a.nextDeadline == deadline, "the deadline moved on")
    }
}
