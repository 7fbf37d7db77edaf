import XCTest

@testable import Membership

/// Forged incarnations (a hostile sender, or a member's bug): a claim at `UInt64.max` or far above
/// what is known must neither trap nor kill its subject, and a restarted member must always get
/// past its own record, however high it is.
final class ForgedIncarnationTests: XCTestCase {
    private let settings = MembershipSettings.lan

    private func metadata(_ name: String, version: String = "") -> MemberMetadata {
        MemberMetadata(role: "edge", clusterEndpoint: "tcp://\(name):7100", version: version)
    }

    private func address(_ name: String) -> MemberAddress {
        MemberAddress(id: MemberID(name), endpoint: "tcp://\(name):7100")
    }

    private func alive(_ name: String, _ incarnation: UInt64 = 0) -> MemberUpdate {
        MemberUpdate(id: MemberID(name), state: .alive, incarnation: incarnation, metadata: metadata(name))
    }

    private func claim(_ name: String, _ state: MemberState, _ incarnation: UInt64, from: String = "mallory") -> MemberUpdate {
        MemberUpdate(id: MemberID(name), state: state, incarnation: incarnation, from: MemberID(from))
    }

    private func broadcast(_ updates: [MemberUpdate], from sender: String = "mallory") -> GossipMessage {
        .broadcast(.init(sender: address(sender), updates: updates))
    }

    /// `name`, having learned `others` (alive at `incarnation`) through a push-pull reply that also
    /// acknowledged its own run.
    private func member(_ name: String, knowing others: [String], at incarnation: UInt64 = 0) -> Membership {
        var membership = Membership(id: MemberID(name), metadata: metadata(name), settings: settings, now: .zero, randomSeed: 7)
        let rows = others.map { alive($0, incarnation) } + [alive(name)]
        _ = membership.receive(.pushPull(.init(sender: address(others[0]), isReply: true, members: rows)), now: .zero)
        return membership
    }

    func testIncarnationArithmeticSaturatesInsteadOfTrapping() {
        XCTAssertEqual(Incarnation.successor(of: 0), 1)
        XCTAssertEqual(Incarnation.successor(of: .max - 1), .max)
        XCTAssertEqual(Incarnation.successor(of: .max), .max)
        XCTAssertTrue(Incarnation.isWithinJump(.max, of: .max - 10, bound: 10))
        XCTAssertFalse(Incarnation.isWithinJump(.max, of: 0, bound: 1 << 20))
        XCTAssertTrue(Incarnation.isWithinJump(0, of: .max, bound: 0), "a lower value is never a jump")
    }

    func testForgedClaimsAtTheTopAboutAnotherMemberAreDroppedAndCounted() {
        var a = member("a", knowing: ["b", "c"])
        for state in [MemberState.suspect, .dead, .left] {
            let out = a.receive(broadcast([claim("b", state, .max)]), now: .seconds(1))
            XCTAssertTrue(out.isEmpty, "\(state) at UInt64.max changed something: \(out)")
            XCTAssertEqual(a.member("b")?.state, .alive)
            XCTAssertEqual(a.member("b")?.incarnation, 0)
        }
        // The same claims in a push-pull table, and an "alive" hijack with other metadata.
        var hijack = alive("b", .max)
        hijack.metadata?.clusterEndpoint = "tcp://mallory:6666"
        _ = a.receive(.pushPull(.init(sender: address("c"), isReply: true, members: [hijack])), now: .seconds(2))
        XCTAssertEqual(a.member("b")?.metadata, metadata("b"))
        XCTAssertEqual(a.statistics.implausibleUpdatesDropped, 4)
    }

    func testAJumpIsAcceptedUpToTheBoundAndDroppedAboveIt() {
        let bound = settings.maxIncarnationJump
        var a = member("a", knowing: ["b", "c"], at: 100)
        _ = a.receive(broadcast([claim("b", .suspect, 100 + bound + 1)]), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .alive, "one above the bound is forged")
        XCTAssertEqual(a.statistics.implausibleUpdatesDropped, 1)
        _ = a.receive(broadcast([claim("b", .suspect, 100 + bound)]), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .suspect, "exactly the bound is plausible")
        XCTAssertEqual(a.member("b")?.incarnation, 100 + bound)
        // Its refutation, one above, is accepted as usual.
        _ = a.receive(broadcast([alive("b", 101 + bound)], from: "b"), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .alive)
    }

    func testANewcomerAboveTheFirstIncarnationLimitIsRefused() {
        var a = member("a", knowing: ["b"])
        _ = a.receive(broadcast([alive("phantom", .max)]), now: .seconds(1))
        XCTAssertNil(a.member("phantom"))
        _ = a.receive(broadcast([alive("veteran", settings.maxFirstIncarnation)]), now: .seconds(1))
        XCTAssertEqual(a.member("veteran")?.state, .alive, "a long-lived member we never heard of is welcome")
        XCTAssertEqual(a.statistics.implausibleUpdatesDropped, 1)
    }

    func testForgedClaimsAtTheTopAboutOurselvesAreNotAdopted() {
        var b = member("b", knowing: ["a", "c"])
        for state in [MemberState.suspect, .dead, .left] {
            _ = b.receive(broadcast([claim("b", state, .max)]), now: .seconds(1))
            _ = b.receive(.ping(.init(sender: address("a"), sequence: 1, target: "b", updates: [claim("b", state, .max)])), now: .seconds(1))
        }
        var other = alive("b", .max - 1)
        other.metadata?.version = "forged"
        _ = b.receive(.pushPull(.init(sender: address("a"), isReply: false, members: [other])), now: .seconds(1))
        XCTAssertEqual(b.localMember.state, .alive)
        XCTAssertEqual(b.localMember.incarnation, 0)
        XCTAssertEqual(b.statistics.refutations, 0)
        XCTAssertEqual(b.statistics.implausibleUpdatesDropped, 7)
        // An ordinary suspicion is still refuted.
        _ = b.receive(broadcast([claim("b", .suspect, 0, from: "a")], from: "a"), now: .seconds(2))
        XCTAssertEqual(b.localMember.incarnation, 1)
    }

    func testAnAcknowledgedMemberIgnoresAFarClaimAboutItselfButAFreshOneTakesItsOldRecord() {
        let old: UInt64 = 5_000_000  // above the jump bound: a long-lived run's record
        // Acknowledged (the push-pull reply held this run): the far claim is forged.
        var settled = member("b", knowing: ["a"])
        _ = settled.receive(broadcast([claim("b", .dead, old)]), now: .seconds(1))
        XCTAssertEqual(settled.localMember.incarnation, 0)
        // Fresh, and the seed remembers the previous run dead at `old`: it comes back above it.
        var fresh = Membership(id: "b", metadata: metadata("b"), settings: settings, now: .zero, randomSeed: 3)
        _ = fresh.join(seeds: ["tcp://a:7100"], now: .zero)
        let reply = GossipMessage.pushPull(.init(
            sender: address("a"), isReply: true,
            members: [alive("a"), MemberUpdate(id: "b", state: .dead, incarnation: old, metadata: metadata("b"))]))
        _ = fresh.receive(reply, now: .milliseconds(5))
        XCTAssertEqual(fresh.localMember.incarnation, old + 1)
        XCTAssertEqual(fresh.statistics.refutations, 1)
        // ...which the seed, holding the tombstone at `old`, accepts.
        var seed = member("a", knowing: ["c", "b"], at: old - 3)
        _ = seed.receive(broadcast([claim("b", .dead, old, from: "c")], from: "c"), now: .seconds(1))
        XCTAssertEqual(seed.member("b")?.state, .dead)
        _ = seed.receive(broadcast([alive("b", fresh.localMember.incarnation)], from: "b"), now: .seconds(2))
        XCTAssertEqual(seed.member("b")?.state, .alive)
        // Once acknowledged at its new incarnation, a far claim no longer moves it.
        _ = fresh.receive(broadcast([alive("b", old + 1)], from: "a"), now: .seconds(3))
        _ = fresh.receive(broadcast([claim("b", .left, old * 4)]), now: .seconds(3))
        XCTAssertEqual(fresh.localMember.incarnation, old + 1)
    }

    func testOnlyTheMemberItselfCanSayItLeft() {
        var a = member("a", knowing: ["b", "c"])
        // Relayed, a leave is only a suspicion: "b" is still probed, hears of it and refutes.
        _ = a.receive(broadcast([claim("b", .left, 0)]), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .suspect)
        _ = a.receive(broadcast([alive("b", 1)], from: "b"), now: .seconds(2))
        XCTAssertEqual(a.member("b")?.state, .alive)
        // Its own leave is final.
        _ = a.receive(broadcast([claim("b", .left, 1, from: "b")], from: "b"), now: .seconds(3))
        XCTAssertEqual(a.member("b")?.state, .left)
    }

    func testARelayedAliveRevivingATombstoneKeepsTheAddressTheMemberGave() {
        var a = member("a", knowing: ["b", "c"])
        _ = a.receive(broadcast([claim("b", .dead, 0, from: "c")], from: "c"), now: .seconds(1))
        XCTAssertEqual(a.member("b")?.state, .dead)
        var forged = alive("b", 1)
        forged.metadata!.clusterEndpoint = "tcp://nowhere:7100"
        _ = a.receive(broadcast([forged]), now: .seconds(2))
        XCTAssertEqual(a.member("b")?.state, .alive)
        XCTAssertEqual(a.member("b")?.metadata.clusterEndpoint, "tcp://b:7100", "a relayed claim moved it")
        // The member itself may move (a restart at a new address).
        var moved = alive("b", 2)
        moved.metadata!.clusterEndpoint = "tcp://b2:7100"
        _ = a.receive(broadcast([moved], from: "b"), now: .seconds(3))
        XCTAssertEqual(a.member("b")?.metadata.clusterEndpoint, "tcp://b2:7100")
    }

    // MARK: - In a simulated cluster

    /// Five members, converged; built once.
    static let five = SimulatedNetwork.converged(count: 5, seed: 11)

    private func forged(_ network: SimulatedNetwork, about victim: Int, _ state: MemberState, _ incarnation: UInt64) -> GossipMessage {
        .broadcast(.init(
            sender: MemberAddress(id: "mallory", endpoint: "tcp://10.9.9.9:7100"),
            updates: [MemberUpdate(id: network.nodes[victim].id, state: state, incarnation: incarnation, from: "mallory")]))
    }

    func testOneForgedBroadcastToEveryMemberKillsNobody() throws {
        for state in [MemberState.suspect, .dead, .left] {
            XCTAssertNotNil(Self.five.convergedAfter)
            var network = Self.five.network
            network.clearChanges()
            let victim = 2
            for index in network.nodes.indices {
                network.inject(forged(network, about: victim, state, .max), to: index)
            }
            network.run(for: .seconds(5))
            XCTAssertTrue(network.isConverged, "after a forged \(state)")
            XCTAssertTrue(network.changes(about: victim, to: .dead).isEmpty && network.changes(about: victim, to: .left).isEmpty)
            XCTAssertEqual(network.nodes[victim].membership.localMember.incarnation, 0)
            let dropped = network.nodes.map(\.membership.statistics.implausibleUpdatesDropped)
            XCTAssertTrue(dropped.allSatisfy { $0 >= 1 }, "every member counted the forged update: \(dropped)")
        }
    }

    func testARestartedMemberRejoinsAfterAForgedLeaveAtTheTop() throws {
        XCTAssertNotNil(Self.five.convergedAfter)
        var network = Self.five.network
        let victim = 3
        for index in network.nodes.indices {
            network.inject(forged(network, about: victim, .left, .max), to: index)
        }
        network.run(for: .seconds(1))
        network.crash(victim)
        XCTAssertNotNil(network.run(until: .seconds(10)) { $0.allSee(victim, as: .dead) }, "the crash was not detected")
        network.restart(victim, joiningThrough: [0])
        let back = network.run(until: .seconds(10)) { $0.isConverged }
        XCTAssertNotNil(back, "the restarted member did not rejoin")
        XCTAssertEqual(network.nodes[victim].membership.localMember.state, .alive)
    }

    /// A converged cluster in which member `victim` crashed, was forgotten by everyone, and was
    /// then planted by a forger as a phantom (its id, other metadata) at `incarnation` and buried
    /// as dead there: the worst record a forger can leave for a member nobody knows (a relayed
    /// leave is only a suspicion; a relayed death is taken at once).
    private func buriedPhantom(victim: Int, at incarnation: UInt64) throws -> SimulatedNetwork {
        XCTAssertNotNil(Self.five.convergedAfter)
        var network = Self.five.network
        network.crash(victim)
        XCTAssertNotNil(network.run(until: .seconds(10)) { $0.allSee(victim, as: .dead) }, "the crash was not detected")
        network.run(for: settings.tombstoneRetention + .seconds(1))
        XCTAssertTrue(network.liveIndices.allSatisfy { network.view(of: $0, about: victim) == nil })
        let id = network.nodes[victim].id
        var phantom = network.nodes[victim].membership.localMember.metadata
        phantom.version = "forged"
        for index in network.liveIndices {
            network.inject(.broadcast(.init(
                sender: MemberAddress(id: "mallory", endpoint: "tcp://10.9.9.9:7100"),
                updates: [MemberUpdate(id: id, state: .alive, incarnation: incarnation, metadata: phantom),
                          MemberUpdate(id: id, state: .dead, incarnation: incarnation, from: "mallory")])), to: index)
        }
        XCTAssertTrue(network.allSee(victim, as: .dead))
        return network
    }

    func testARestartedMemberGetsPastAFarButPlausibleForgedTombstoneAtOnce() throws {
        let record = settings.maxFirstIncarnation / 2
        var network = try buriedPhantom(victim: 4, at: record)
        network.restart(4, joiningThrough: [0])
        XCTAssertNotNil(network.run(until: .seconds(10)) { $0.isConverged }, "the restarted member did not get past the forged tombstone")
        XCTAssertEqual(network.nodes[4].membership.localMember.incarnation, record + 1)
    }

    func testARestartedMemberOutlivesATombstoneTooHighToAdopt() throws {
        let record = settings.maxFirstIncarnation
        var network = try buriedPhantom(victim: 4, at: record)
        network.restart(4, joiningThrough: [0])
        network.run(for: .seconds(5))
        XCTAssertEqual(network.nodes[4].membership.localMember.incarnation, 0, "too high to adopt")
        XCTAssertGreaterThan(network.nodes[4].membership.statistics.implausibleUpdatesDropped, 0)
        // The tombstone expires everywhere and the member is learned afresh.
        let back = network.run(until: settings.tombstoneRetention + .seconds(15)) { $0.isConverged }
        XCTAssertNotNil(back, "the restarted member never got back")
        XCTAssertEqual(network.nodes[4].membership.localMember.state, .alive)
    }
}
