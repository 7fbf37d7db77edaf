@testable import ClusterSimulation
import XCTest

/// The simulation's own parts and its promise: the same seed gives the same event log, and the
/// checks find a rule broken on purpose.
final class SimulationTests: XCTestCase {
    func testTheGeneratorIsAFunctionOfItsSeedAndChildrenDoNotShiftEachOther() {
        var a = SimulationRNG(seed: 7)
        var b = SimulationRNG(seed: 7)
        XCTAssertEqual((0..<8).map { _ in a.next() }, (0..<8).map { _ in b.next() })
        var c = SimulationRNG(seed: 8)
        XCTAssertNotEqual(SimulationRNG(seed: 7).child("network").seed, c.next())
        // A child's draws are the same however much its sibling drew.
        let root = SimulationRNG(seed: 7)
        var sibling = root.child("faults")
        for _ in 0..<100 { _ = sibling.next() }
        var first = root.child("network")
        var second = SimulationRNG(seed: 7).child("network")
        XCTAssertEqual(first.next(), second.next())
        XCTAssertNotEqual(root.child("network").seed, root.child("faults").seed)
        // Ranges hold their bounds, and both ends come up.
        var rng = SimulationRNG(seed: 1)
        let draws = (0..<2000).map { _ in rng.int(in: -3...3) }
        XCTAssertEqual(Set(draws), Set(-3...3))
        XCTAssertFalse((0..<1000).contains { _ in rng.chance(perMille: 0) })
        XCTAssertTrue((0..<1000).allSatisfy { _ in rng.chance(perMille: 1000) })
    }

    func testTheOutputIsXoshiro256PlusPlusSeededBySplitMix64() {
        // The first outputs for seed 0, computed by an independent implementation of both
        // algorithms: a replay on another machine or compiler draws the same numbers.
        var rng = SimulationRNG(seed: 0)
        XCTAssertEqual((0..<3).map { _ in rng.next() }, [5_987_356_902_031_041_503, 7_051_070_477_665_621_255, 6_633_766_593_972_829_180])
    }

    func testTheSchedulerRunsByTimeThenByInsertionAndJumpsOverIdleTime() {
        let scheduler = SimulationScheduler(startMs: 1_000)
        var ran: [String] = []
        scheduler.schedule(at: 5_000) { ran.append("late") }
        scheduler.schedule(at: 2_000) { ran.append("a") }
        scheduler.schedule(at: 2_000) {
            ran.append("b")
            scheduler.after(0) { ran.append("c") }
        }
        scheduler.schedule(at: 10) { ran.append("past") }
        XCTAssertTrue(scheduler.run(until: 3_000))
        XCTAssertEqual(ran, ["past", "a", "b", "c"])
        XCTAssertEqual(scheduler.now, 3_000)
        XCTAssertFalse(scheduler.run(until: 9_000, maxEvents: 0))
        XCTAssertTrue(scheduler.run(until: 9_000))
        XCTAssertEqual(ran.last, "late")
    }

    func testTheSameSeedGivesTheSameLogTwiceAndOtherSeedsDiffer() throws {
        var simulation = Simulation(seed: 1)
        simulation.overrides.steps = 60
        simulation.keepLines = true
        let first = try simulation.run()
        let second = try simulation.run()
        XCTAssertGreaterThan(first.events, 500)
        XCTAssertEqual(first.digest, second.digest, Self.firstDifference(first.lines!, second.lines!))
        XCTAssertEqual(first.events, second.events)
        XCTAssertEqual(first.simulatedMs, second.simulatedMs)
        var other = Simulation(seed: 2)
        other.overrides.steps = 60
        XCTAssertNotEqual(try other.run().digest, first.digest)
    }

    func testAChatNumberMayBeMissingOnlyForAMessageNotAcknowledgedAndIsNeverGivenTwice() {
        // Seed 222: #2 was numbered by an owner that died before its successor held it; its
        // client was told UNAVAILABLE, and the successor numbered on from #4.
        XCTAssertTrue(Invariants.chatNumbersHold([1, 3, 4, 5], through: 5, notAcknowledged: 1))
        XCTAssertFalse(Invariants.chatNumbersHold([1, 3, 4, 5], through: 5, notAcknowledged: 0), "a gap no failed send explains")
        XCTAssertFalse(Invariants.chatNumbersHold([1, 4, 5], through: 5, notAcknowledged: 1), "more gaps than failed sends")
        XCTAssertTrue(Invariants.chatNumbersHold([1, 2], through: 3, notAcknowledged: 1), "the last number lost with its owner")
        XCTAssertTrue(Invariants.chatNumbersHold([1, 2, 3], through: 3, notAcknowledged: 0))
        XCTAssertTrue(Invariants.chatNumbersHold([], through: 0, notAcknowledged: 0))
        XCTAssertFalse(Invariants.chatNumbersHold([1, 2, 2], through: 3, notAcknowledged: 5), "a number held twice")
        XCTAssertFalse(Invariants.chatNumbersHold([0, 1], through: 1, notAcknowledged: 5), "numbers start at 1")
        XCTAssertFalse(Invariants.chatNumbersHold([1, 2, 3], through: 2, notAcknowledged: 5), "a number past the room's last")

        // A number published again for the same message (a take-over republishing) is fine; for another, not.
        let chat = [PublishedChat(coordinator: "c1", room: "r@1", sequence: 1, what: "uid=1 \"a\""),
                    PublishedChat(coordinator: "c2", room: "r@1", sequence: 1, what: "uid=1 \"a\""),
                    PublishedChat(coordinator: "c2", room: "r@2", sequence: 1, what: "uid=2 \"b\"")]
        XCTAssertEqual(Invariants.chatNotices(chat), [])
        let reused = Invariants.chatNotices(chat + [PublishedChat(coordinator: "c2", room: "r@1", sequence: 1, what: "uid=3 \"c\"")])
        XCTAssertEqual(reused.map(\.rule), ["chat number reused"])
    }

    func testSeedsWithoutFaultsRunWithoutViolations() throws {
        for seed in UInt64(1)...3 {
            var simulation = Simulation(seed: seed)
            simulation.overrides = SimulationOverrides(steps: 80, noFaults: true)
            let outcome = try simulation.run()
            XCTAssertGreaterThan(outcome.answered.ok, 0, outcome.summary)
            XCTAssertEqual(outcome.violations, [], "\(outcome.summary)\n\(outcome.knobs)\n\(outcome.tail.joined())")
        }
    }

    func testReplicationAnsweredBeforeTheSuccessorHoldsItIsCaught() throws {
        // The coordinators answering writes before their successors hold them (the mutant every
        // coordinator can be built with) lose what they acknowledged when an owner dies with its
        // disk before its successor has the write. Drawn knobs find that within about a hundred
        // seeds (`showroom-bench simulate --broken-rule answer-before-held`); this schedule makes
        // it likelier: slow links, lost messages, a process killed every second or so,
        // every kill losing the disk (about one seed in ten catches it, the first within a few).
        // Only what the honest run of the same seed does not find counts.
        let knobs = SimulationKnobs(
            coordinators: 3, callSignals: 2, edges: 1, delayMinMs: 20, delayMeanMs: 20, lossPerMille: 50,
            duplicatePerMille: 0, reorderPerMille: 0, pathCapacity: 1_000, detectionMinMs: 300, detectionMaxMs: 1_000,
            clockSkewMaxMs: 0, steps: 120, operationMeanMs: 30, faultMeanMs: 700, faultMaxDurationMs: 1_500,
            partitionPerMille: 0, quickRestartPerMille: 0, diskLossPerMille: 1_000, livenessMs: 30_000)
        var found: (simulation: Simulation, broken: Simulation.Outcome, rule: String)?
        for seed in UInt64(1)...40 where found == nil {
            var simulation = Simulation(seed: seed)
            simulation.fixedKnobs = knobs
            simulation.brokenRule = .answerBeforeHeld
            let broken = try simulation.run()
            guard broken.violations.contains(where: { $0.rule.hasPrefix("acknowledged") }) else { continue }
            simulation.brokenRule = nil
            let honest = try simulation.run()
            XCTAssertNotEqual(broken.digest, honest.digest)
            let caught = broken.violations.filter { $0.rule.hasPrefix("acknowledged") && !honest.violations.contains($0) }
            if let rule = caught.first?.rule {
                simulation.brokenRule = .answerBeforeHeld
                found = (simulation, broken, rule)
            }
        }
        let (simulation, broken, rule) = try XCTUnwrap(found, "the broken rule went unnoticed in 40 seeds")

        // Cut down, the failure stays: the same rule broken with no more faults or operations.
        let minimal = try simulation.shrink(broken, rule: rule)
        XCTAssertTrue(minimal.violations.contains { $0.rule == rule }, minimal.summary)
        XCTAssertLessThanOrEqual(minimal.knobs.steps, broken.knobs.steps)
    }

    /// Where two logs part, for the failure message.
    static func firstDifference(_ a: [String], _ b: [String]) -> String {
        guard let index = a.indices.first(where: { $0 < b.count && a[$0] != b[$0] }) else { return "the logs differ in length only" }
        return "the logs part at event \(index):\n\(a[index])\(b[index])"
    }
}
