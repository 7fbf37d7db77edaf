import XCTest

@testable import Membership

/// SWIM + Lifeguard in a simulated network of 50 members (fake clock, fixed seeds): convergence,
/// failure detection, slow and wrongly suspected members, leave and restart, metadata,
/// tombstones. Figures are fake time, printed for the record.
final class ClusterSimulationTests: XCTestCase {
    static let size = 50

    /// 50 members joined through member 0, one every 10 ms, run until converged; built once and
    /// copied by each test (the simulator is a value type).
    static let fifty = SimulatedNetwork.converged(count: size, seed: 42)

    private var settings: MembershipSettings { .lan }

    func testFiftyMembersConvergeAfterJoiningThroughOneSeed() throws {
        let (network, convergedAfter) = Self.fifty
        let after = try XCTUnwrap(convergedAfter, "50 members did not converge within 30 s")
        XCTAssertTrue(network.isConverged)
        for observer in network.nodes.indices {
            XCTAssertEqual(network.nodes[observer].membership.members.count, Self.size)
        }
        // Nobody was suspected, let alone declared dead, while joining.
        let bad = network.changes.filter { $0.change.member.state != .alive }
        XCTAssertTrue(bad.isEmpty, "unexpected changes while joining: \(bad.prefix(5).map(describe))")

        // How long until every other member knew each joiner.
        var joinTimes: [Duration] = []
        for subject in 1..<Self.size {
            let joinedAt = try XCTUnwrap(network.nodes[subject].joinedAt)
            let learned = network.changes.filter { $0.change.member.id == network.nodes[subject].id && $0.change.previousState == nil }
            XCTAssertEqual(learned.count, Self.size - 1, "not everyone learned \(network.nodes[subject].id)")
            joinTimes.append(learned.map(\.at).max()! - joinedAt)
        }
        joinTimes.sort()
        let p50 = joinTimes[joinTimes.count / 2]
        print("membership simulation: \(Self.size) members joined through one seed (one every 10 ms): "
              + "every member knows a joiner after p50 \(ms(p50)), max \(ms(joinTimes.last!)); "
              + "all converged \(ms(after)) after the last join")
        XCTAssertLessThanOrEqual(p50, .seconds(1), "join dissemination p50 over the 1 s goal")
    }

    func testCrashedMemberIsDeclaredDeadByEveryMember() throws {
        var network = Self.fifty.network
        network.clearChanges()
        let victims = [7, 23, 41]
        var allDead: [Duration] = []
        for victim in victims {
            let crashedAt = network.now
            network.crash(victim)
            let done = try XCTUnwrap(
                network.run(until: .seconds(20)) { $0.allSee(victim, as: .dead) },
                "not every member marked \(network.nodes[victim].id) dead within 20 s")
            let firstSuspect = try XCTUnwrap(network.changes(about: victim, to: .suspect).first?.at) - crashedAt
            let firstDead = try XCTUnwrap(network.changes(about: victim, to: .dead).first?.at) - crashedAt
            allDead.append(done - crashedAt)
            print("membership simulation: \(Self.size) members, crashed \(network.nodes[victim].id): "
                  + "first suspect \(ms(firstSuspect)), first dead \(ms(firstDead)), all dead \(ms(done - crashedAt))")
            network.run(for: .seconds(2))
        }
        // Every member alive at the time saw each victim die exactly once, and nobody else was
        // even suspected.
        for (position, victim) in victims.enumerated() {
            let observers = network.changes(about: victim, to: .dead).map(\.observer)
            XCTAssertEqual(observers.count, Self.size - 1 - position)
            XCTAssertEqual(Set(observers).count, observers.count)
        }
        let victimIDs = Set(victims.map { network.nodes[$0].id })
        let collateral = network.changes.filter { !victimIDs.contains($0.change.member.id) }
        XCTAssertTrue(collateral.isEmpty, "healthy members changed: \(collateral.prefix(5).map(describe))")
        allDead.sort()
        print("membership simulation: detection (all members mark dead) p50 \(ms(allDead[allDead.count / 2])), max \(ms(allDead.last!))")
        XCTAssertLessThanOrEqual(allDead[allDead.count / 2], .seconds(3))
        XCTAssertLessThanOrEqual(allDead.last!, .seconds(5))
    }

    func testSlowButAliveMemberIsNotDeclaredDead() throws {
        // Everything the slow member sends is late: by 1.5 × the ping timeout, then by two whole
        // probe periods, then by 1 s — all under the minimum suspicion timeout (1.7 s at n = 50).
        for delay in [settings.probeTimeout * 1.5, settings.probeInterval * 2, .seconds(1)] {
            var network = Self.fifty.network
            network.clearChanges()
            let slow = 13
            let before = network.nodes[slow].membership.localMember.incarnation
            network.setOutgoingDelay(slow, delay)
            network.run(for: .seconds(15))
            let suspected = network.changes(about: slow, to: .suspect).count
            let stats = network.nodes[slow].membership.statistics
            let health = network.nodes[slow].membership.localHealth
            let deaths = network.changes.filter { $0.change.member.state == .dead }
            XCTAssertTrue(deaths.isEmpty, "delay \(ms(delay)): false deaths \(deaths.prefix(5).map(describe))")
            network.setOutgoingDelay(slow, .zero)
            let healed = network.run(until: .seconds(10)) { $0.isConverged }
            XCTAssertNotNil(healed, "delay \(ms(delay)): cluster did not converge after the member recovered")
            XCTAssertTrue(network.allSee(slow, as: .alive))
            print("membership simulation: member replies late by \(ms(delay)) for 15 s: suspected \(suspected) times, "
                  + "refuted \(stats.refutations) times (incarnation \(before) -> "
                  + "\(network.nodes[slow].membership.localMember.incarnation)), its local health reached \(health), dead: never")
            if delay > settings.probeInterval {
                // Late beyond the probe period: it must have been suspected, and refuted.
                XCTAssertGreaterThan(suspected, 0)
                XCTAssertGreaterThan(stats.refutations, 0)
                XCTAssertGreaterThan(health, 0, "Lifeguard should have slowed the struggling member down")
            }
        }
    }

    func testWronglySuspectedMemberRefutes() throws {
        var network = Self.fifty.network
        network.clearChanges()
        let target = 29
        let before = network.nodes[target].membership.localMember.incarnation
        // Cut it off until someone suspects it, then reconnect it well before any timeout.
        network.setIsolated(target, true)
        let suspectedAt = try XCTUnwrap(network.run(until: .seconds(3), step: .milliseconds(10)) { net in
            net.liveIndices.contains { net.view(of: $0, about: target)?.state == .suspect }
        }, "nobody suspected the unreachable member")
        network.run(for: .milliseconds(300))  // more members suspect it; still far from any timeout
        let reconnectedAt = network.now
        network.setIsolated(target, false)
        let refuted = try XCTUnwrap(network.run(until: .seconds(5), step: .milliseconds(10)) { net in
            let incarnation = net.nodes[target].membership.localMember.incarnation
            return incarnation > before && net.liveIndices.allSatisfy {
                $0 == target || (net.view(of: $0, about: target).map { $0.state == .alive && $0.incarnation == incarnation } ?? false)
            }
        }, "the suspected member's refutation did not reach everyone")
        // While cut off it could not reach anyone either, and suspected some members in turn;
        // they refute too, and the whole cluster agrees again.
        XCTAssertNotNil(network.run(until: .seconds(20)) { $0.isConverged }, "no convergence after refuting")
        let after = network.nodes[target].membership.localMember.incarnation
        XCTAssertGreaterThan(after, before, "the suspected member did not raise its incarnation")
        XCTAssertGreaterThan(network.nodes[target].membership.statistics.refutations, 0)
        XCTAssertTrue(network.allSee(target, as: .alive))
        for observer in network.liveIndices where observer != target {
            XCTAssertEqual(network.view(of: observer, about: target)?.incarnation, after)
        }
        XCTAssertTrue(network.changes(about: target, to: .dead).isEmpty, "the suspected member was declared dead")
        XCTAssertTrue(network.changes.allSatisfy { $0.change.member.state != .dead })
        print("membership simulation: wrongly suspected member refuted: incarnation \(before) -> \(after), "
              + "\(network.changes(about: target, to: .suspect).count) members had suspected it, "
              + "everyone saw it alive again \(ms(refuted - suspectedAt)) after the first suspicion "
              + "(it was cut off until \(ms(reconnectedAt - suspectedAt)) after it)")
    }

    func testGracefulLeaveIsSeenAsLeftAndRestartedMemberComesBackWithHigherIncarnation() throws {
        var network = Self.fifty.network
        network.clearChanges()
        let leaver = 31
        // Give it some history first, so "higher than before" means something.
        network.updateMetadata(leaver) { $0.version = "0.1.1" }
        network.updateMetadata(leaver) { $0.load.channels = 3 }
        XCTAssertNotNil(network.run(until: .seconds(5)) { $0.isConverged })
        let before = network.nodes[leaver].membership.localMember.incarnation
        XCTAssertEqual(before, 2)

        let leaveStarted = network.now
        network.leave(leaver)
        network.run(for: .milliseconds(100))
        network.crash(leaver)  // the process exits after announcing its leave
        XCTAssertNotNil(network.run(until: .seconds(3)) { $0.allSee(leaver, as: .left) }, "not everyone saw the leave")
        network.run(for: .seconds(10))
        XCTAssertTrue(network.allSee(leaver, as: .left), "the left member changed state afterwards")
        XCTAssertTrue(network.changes(about: leaver, to: .dead).isEmpty, "a left member was declared dead")
        XCTAssertTrue(network.changes(about: leaver, to: .suspect).isEmpty, "a leaving member was suspected")
        let leftAt = network.changes(about: leaver, to: .left).map(\.at).max()!

        let restartedAt = network.now
        network.restart(leaver, joiningThrough: [0])
        XCTAssertEqual(network.nodes[leaver].membership.localMember.incarnation, 0)
        let rejoined = try XCTUnwrap(network.run(until: .seconds(10)) { $0.isConverged }, "the restarted member did not rejoin")
        let after = network.nodes[leaver].membership.localMember.incarnation
        XCTAssertGreaterThan(after, before, "the restarted member must out-number its tombstone")
        XCTAssertTrue(network.allSee(leaver, as: .alive))
        print("membership simulation: leave seen as left by all \(ms(leftAt - leaveStarted)) after it was announced, "
              + "restart at incarnation 0 rejoined as incarnation \(after) (was \(before)) "
              + "in \(ms(rejoined - restartedAt))")
    }

    func testMetadataUpdatePropagatesToEveryMember() throws {
        var network = Self.fifty.network
        let subject = 5
        let before = network.nodes[subject].membership.localMember.incarnation
        let start = network.now
        network.updateMetadata(subject) { $0.load = MemberLoad(channels: 12, connections: 340, cpuPercent: 37.5) }
        let expected = network.nodes[subject].membership.localMember.metadata
        XCTAssertEqual(network.nodes[subject].membership.localMember.incarnation, before + 1)
        let done = try XCTUnwrap(network.run(until: .seconds(5), step: .milliseconds(10)) { net in
            net.liveIndices.allSatisfy { net.view(of: $0, about: subject)?.metadata == expected }
        }, "the new metadata did not reach everyone")
        XCTAssertTrue(network.isConverged)
        let reports = network.changes.filter { $0.change.member.id == network.nodes[subject].id && $0.change.metadataChanged }
        XCTAssertEqual(reports.count, Self.size, "every member (itself included) reports the metadata change once")
        print("membership simulation: metadata update reached all \(Self.size) members in \(ms(done - start))")
        XCTAssertLessThanOrEqual(done - start, .seconds(1))
    }

    func testTombstoneStopsAnOldIncarnationFromResurrectingADeadMember() throws {
        var network = Self.fifty.network
        let victim = 17
        let oldSelf = network.nodes[victim].membership.localMember
        network.crash(victim)
        XCTAssertNotNil(network.run(until: .seconds(20)) { $0.allSee(victim, as: .dead) })
        let deadIncarnation = try XCTUnwrap(network.view(of: 0, about: victim)?.incarnation)

        // A stale "alive" at the incarnation it died with still circulates (from member 4).
        let stale = MemberUpdate(id: oldSelf.id, state: .alive, incarnation: deadIncarnation, metadata: oldSelf.metadata)
        let messenger = MemberAddress(id: network.nodes[4].id, endpoint: network.nodes[4].endpoint)
        network.inject(.broadcast(.init(sender: messenger, updates: [stale])), to: 3)
        network.inject(.pushPull(.init(sender: messenger, isReply: true, members: [stale])), to: 8)
        network.run(for: .seconds(3))
        XCTAssertTrue(network.allSee(victim, as: .dead), "an old incarnation brought a dead member back")

        // The real member restarts (incarnation 0), learns of its tombstone and out-numbers it.
        network.restart(victim, joiningThrough: [0])
        XCTAssertNotNil(network.run(until: .seconds(10)) { $0.isConverged }, "the restarted member did not come back")
        XCTAssertGreaterThan(network.nodes[victim].membership.localMember.incarnation, deadIncarnation)
        XCTAssertTrue(network.allSee(victim, as: .alive))
    }

    func testTombstonesAreForgottenAfterRetention() throws {
        var settings = MembershipSettings.lan
        settings.tombstoneRetention = .seconds(5)
        var (network, converged) = SimulatedNetwork.converged(count: 8, settings: settings, seed: 7)
        XCTAssertNotNil(converged)
        network.crash(2)
        network.leave(5)
        network.run(for: .milliseconds(50))
        network.crash(5)
        XCTAssertNotNil(network.run(until: .seconds(10)) { $0.allSee(2, as: .dead) && $0.allSee(5, as: .left) })
        network.run(for: .seconds(6))
        for observer in network.liveIndices {
            XCTAssertNil(network.view(of: observer, about: 2), "dead member still remembered after retention")
            XCTAssertNil(network.view(of: observer, about: 5), "left member still remembered after retention")
            XCTAssertEqual(network.nodes[observer].membership.members.count, 6)
            XCTAssertEqual(network.nodes[observer].membership.statistics.tombstonesForgotten, 2)
        }
    }

    func testHealedPartitionMergesAgain() throws {
        var settings = MembershipSettings.lan
        settings.reconnectInterval = .seconds(2)
        var (network, converged) = SimulatedNetwork.converged(count: 12, settings: settings, seed: 11)
        XCTAssertNotNil(converged)
        for index in 6..<12 { network.setPartition(index, 1) }
        XCTAssertNotNil(network.run(until: .seconds(30)) { net in
            (0..<6).allSatisfy { a in (6..<12).allSatisfy { b in
                net.view(of: a, about: b)?.state == .dead && net.view(of: b, about: a)?.state == .dead } }
        }, "the two sides did not declare each other dead")
        for index in 6..<12 { network.setPartition(index, 0) }
        let healedAt = network.now
        let merged = try XCTUnwrap(network.run(until: .seconds(20)) { $0.isConverged }, "the healed partition did not merge")
        print("membership simulation: 12 members partitioned 6/6 until each side saw the other dead; "
              + "merged again \(ms(merged - healedAt)) after the partition healed (reconnect interval 2 s)")
    }

    func testIdleMinuteWithMessageLossAndJitterHasNoFalseDeaths() throws {
        var network = Self.fifty.network
        network.clearChanges()
        network.lossRate = 0.02
        network.jitter = .milliseconds(20)
        network.run(for: .seconds(60))
        let suspicions = network.changes.filter { $0.change.member.state == .suspect }.count
        let deaths = network.changes.filter { $0.change.member.state == .dead }
        let refutations = network.nodes.map(\.membership.statistics.refutations).reduce(0, +)
        print("membership simulation: \(Self.size) members idle for 60 s with 2% loss and 0–20 ms jitter: "
              + "\(suspicions) suspicions, \(refutations) refutations, \(deaths.count) deaths")
        XCTAssertTrue(deaths.isEmpty, "false deaths: \(deaths.prefix(5).map(describe))")
        network.lossRate = 0
        XCTAssertNotNil(network.run(until: .seconds(10)) { $0.isConverged })
    }

    // MARK: - Helpers

    private func describe(_ change: SimulatedNetwork.Change) -> String {
        "\(change.change.member.id) \(change.change.previousState?.rawValue ?? "new") -> \(change.change.member.state.rawValue) "
            + "at node \(change.observer), \(ms(change.at))"
    }
}

/// `1234 ms`.
func ms(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
}
