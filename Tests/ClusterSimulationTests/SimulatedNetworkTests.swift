import NodeRuntime
import Routing
import ShowroomWire
import XCTest
@testable import ClusterSimulation

/// The simulated network on its own: two nodes, a handler, and each fault seen from the sender.
final class SimulatedNetworkTests: XCTestCase {
    var scheduler: SimulationScheduler!
    var network: SimulatedNetwork!
    var served = 0

    func makeNetwork(_ change: (inout SimulationKnobs) -> Void = { _ in }) {
        var rng = SimulationRNG(seed: 3)
        var knobs = SimulationOverrides(noFaults: true).applied(to: SimulationKnobs.draw(&rng))
        knobs.delayMinMs = 5
        knobs.delayMeanMs = 5
        knobs.clockSkewMaxMs = 0
        knobs.detectionMinMs = 100
        knobs.detectionMaxMs = 100
        change(&knobs)
        scheduler = SimulationScheduler(startMs: Simulation.startMs)
        network = SimulatedNetwork(scheduler: scheduler, log: SimulationEventLog(keepLines: true), rng: rng.child("network"),
                                   knobs: knobs)
        served = 0
        for id in ["a", "b"] {
            network.add(id, role: .coordinator).serve(.roomGet) { [unowned self] _, respond in
                served += 1
                respond(.success(RoomGetRoomResponse()))
            }
        }
    }

    /// Sends a request from a to b and runs the network for a second; the answer, if any.
    func ask() -> Result<WireEnvelope, ShowroomError>? {
        var answer: Result<WireEnvelope, ShowroomError>?
        var answers = 0
        network.nodes["a"]!.send(.roomGet, body: RoomGetRoomRequest(), to: "sim://b", timeout: .milliseconds(500)) {
            answers += 1
            answer = $0
        }
        scheduler.run(until: scheduler.now + 1_000)
        XCTAssertLessThanOrEqual(answers, 1, "a request completed twice")
        return answer
    }

    func testARequestIsAnsweredAfterTheDelayBothWays() throws {
        makeNetwork()
        let start = scheduler.now
        var answeredAt: Int64?
        network.nodes["a"]!.send(.roomGet, body: RoomGetRoomRequest(), to: "sim://b", timeout: .seconds(1)) { [unowned self] _ in
            answeredAt = scheduler.now
        }
        scheduler.run(until: start + 2_000)
        let elapsed = try XCTUnwrap(answeredAt) - start
        XCTAssertGreaterThanOrEqual(elapsed, 10, "two one-way delays of at least 5 ms")
        XCTAssertNil(try ask()?.get().failure)
        XCTAssertEqual(served, 2)
    }

    func testAPartitionTimesOutUntilItHealsAndTheMembersNoticeBothWays() throws {
        makeNetwork()
        network.partition(["b"], asymmetric: false)
        if case .success = try XCTUnwrap(ask()) { XCTFail("answered across a partition") }
        XCTAssertEqual(served, 0)
        XCTAssertFalse(network.sees("a", alive: "b"))
        network.heal()
        XCTAssertNil(try ask()?.get().failure)
        XCTAssertTrue(network.sees("a", alive: "b"))
    }

    func testAOneWayPartitionLetsTheRequestInButNotTheAnswerOut() throws {
        makeNetwork()
        network.partition(["b"], asymmetric: true)
        if case .success = try XCTUnwrap(ask()) { XCTFail("the answer crossed a one-way cut") }
        XCTAssertEqual(served, 1, "the request went in")
    }

    func testADuplicatedRequestIsServedTwiceAndAnsweredOnce() throws {
        makeNetwork { $0.duplicatePerMille = 1000 }
        XCTAssertNil(try ask()?.get().failure)
        XCTAssertEqual(served, 2)
    }

    func testALostMessageTimesOut() throws {
        makeNetwork { $0.lossPerMille = 1000 }
        XCTAssertThrowsError(try XCTUnwrap(ask()).get()) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .deadlineExceeded)
        }
        XCTAssertEqual(served, 0)
    }

    func testAKilledNodeServesNothingRunsNoTimerAndItsRestartIsANewIncarnation() throws {
        makeNetwork()
        var ticks = 0
        network.nodes["b"]!.scheduleRepeating(every: .milliseconds(100)) { ticks += 1 }
        scheduler.run(until: scheduler.now + 350)
        XCTAssertEqual(ticks, 3)
        network.kill("b")
        XCTAssertThrowsError(try XCTUnwrap(ask()).get())
        XCTAssertEqual(ticks, 3, "a dead node's timers stopped")
        XCTAssertEqual(served, 0)
        XCTAssertFalse(network.sees("a", alive: "b"))
        let again = network.restart("b")
        XCTAssertEqual(again.incarnation, 2)
        // Nothing is installed on the new process yet: the request is refused, not served.
        XCTAssertEqual(try XCTUnwrap(ask()).get().failure?.code, .unknownKind)
        XCTAssertEqual(network.members(seenBy: "a").first { $0.id.rawValue == "b" }?.incarnation, 2)
    }

    func testAFullPathDropsWhatDoesNotFit() throws {
        makeNetwork { $0.pathCapacity = 2 }
        var answers = 0
        for _ in 0..<5 {
            network.nodes["a"]!.send(.roomGet, body: RoomGetRoomRequest(), to: "sim://b", timeout: .milliseconds(500)) {
                if case .success = $0 { answers += 1 }
            }
        }
        scheduler.run(until: scheduler.now + 1_000)
        XCTAssertEqual(answers, 2)
        XCTAssertEqual(served, 2)
    }

    func testEachNodesClockIsOffByItsOwnSkew() {
        makeNetwork { $0.clockSkewMaxMs = 3_000 }
        let clocks = ["a", "b"].map { network.nodes[$0]!.clock.nowMs() - scheduler.now }
        XCTAssertTrue(clocks.allSatisfy { abs($0) <= 3_000 })
        scheduler.run(until: scheduler.now + 1_000)
        XCTAssertEqual(["a", "b"].map { network.nodes[$0]!.clock.nowMs() - scheduler.now }, clocks)
    }
}
