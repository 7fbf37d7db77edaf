import XCTest

@testable import Membership

/// The building blocks on their own: Lifeguard's suspicion timeout and local health, the
/// broadcast queue, the probe order, the settings' formulas.
final class ComponentTests: XCTestCase {
    func testSuspicionTimeoutShrinksLogarithmicallyWithConfirmations() {
        var suspicion = Suspicion(
            from: "a", startedAt: .seconds(10), minTimeout: .seconds(1), maxTimeout: .seconds(6), expectedConfirmations: 2)
        XCTAssertEqual(suspicion.deadline, .seconds(16), "no confirmation: the maximum")
        XCTAssertFalse(suspicion.confirm(from: "a"), "the first suspector does not confirm itself")
        XCTAssertTrue(suspicion.confirm(from: "b"))
        // 6 − 5 · log(2)/log(3) = 2.845 s
        XCTAssertEqual(Self.seconds(suspicion.timeout), 2.845, accuracy: 0.001)
        XCTAssertFalse(suspicion.confirm(from: "b"), "the same member counts once")
        XCTAssertTrue(suspicion.confirm(from: "c"))
        XCTAssertEqual(suspicion.deadline, .seconds(11), "k confirmations: the minimum")
        XCTAssertFalse(suspicion.confirm(from: "d"), "beyond k nothing changes")
        XCTAssertEqual(suspicion.deadline, .seconds(11))

        let small = Suspicion(from: "a", startedAt: .zero, minTimeout: .seconds(1), maxTimeout: .seconds(6), expectedConfirmations: 0)
        XCTAssertEqual(small.deadline, .seconds(1), "nobody to confirm: start at the minimum")
    }

    func testSettingsFormulas() {
        let settings = MembershipSettings.lan
        // 4 × log10(20) × 250 ms ≈ 1.30 s; at most 10 members log10 is clamped to 1.
        XCTAssertEqual(Self.seconds(settings.minSuspicionTimeout(members: 20)), 1.301, accuracy: 0.001)
        XCTAssertEqual(settings.minSuspicionTimeout(members: 3), .seconds(1))
        XCTAssertEqual(settings.retransmitLimit(members: 20), 15)  // 3 × ceil(log2 21)
        XCTAssertEqual(settings.retransmitLimit(members: 50), 18)  // 3 × ceil(log2 51)
        XCTAssertEqual(settings.pushPullPeriod(members: 10), .seconds(5))
        XCTAssertEqual(settings.pushPullPeriod(members: 32), .seconds(10))
    }

    func testLocalHealthIsClampedAndScalesDurations() {
        var health = LocalHealth(maximum: 8)
        health.apply(-1)
        XCTAssertEqual(health.score, 0)
        health.apply(3)
        XCTAssertEqual(health.scale(.milliseconds(250)), .milliseconds(1000))
        health.apply(100)
        XCTAssertEqual(health.score, 8)
        XCTAssertEqual(health.scale(.milliseconds(100)), .milliseconds(900))
    }

    func testDisseminationSendsEachUpdateALimitedNumberOfTimesNewestFirst() {
        var queue = Dissemination()
        let metadata = MemberMetadata(role: "edge", clusterEndpoint: "tcp://h:1")
        queue.enqueue(MemberUpdate(id: "a", state: .alive, incarnation: 0, metadata: metadata))
        queue.enqueue(MemberUpdate(id: "b", state: .alive, incarnation: 0, metadata: metadata))
        var picked: [MemberUpdate] = []
        queue.select(into: &picked, limit: 3, maxCount: 1, maxBytes: 10_000)
        XCTAssertEqual(picked.map(\.id), ["b"], "newest first")
        picked = []
        queue.select(into: &picked, limit: 3, maxCount: 1, maxBytes: 10_000)
        XCTAssertEqual(picked.map(\.id), ["a"], "then the least sent")
        // A newer update about a member replaces the queued one and starts its count afresh.
        queue.enqueue(MemberUpdate(id: "a", state: .suspect, incarnation: 0, from: "c"))
        XCTAssertEqual(queue.count, 2)
        var sends: [MemberID: Int] = [:]
        for _ in 0..<10 {
            picked = []
            queue.select(into: &picked, limit: 3, maxCount: 8, maxBytes: 10_000)
            for update in picked { sends[update.id, default: 0] += 1 }
        }
        XCTAssertEqual(sends["a"], 3)
        XCTAssertEqual(sends["b"], 2, "b had been sent once already")
        XCTAssertTrue(queue.isEmpty)
    }

    func testDisseminationRespectsTheByteAndCountBounds() {
        var queue = Dissemination()
        let metadata = MemberMetadata(role: "edge", clusterEndpoint: "tcp://127.0.0.1:7100", adminEndpoint: "http://127.0.0.1:8100")
        for index in 0..<100 {
            queue.enqueue(MemberUpdate(id: MemberID("member-\(index)"), state: .alive, incarnation: 0, metadata: metadata))
        }
        var picked: [MemberUpdate] = []
        queue.select(into: &picked, limit: 10, maxCount: 32, maxBytes: 1000)
        XCTAssertLessThanOrEqual(picked.map(\.estimatedSize).reduce(0, +), 1000)
        XCTAssertGreaterThan(picked.count, 5)
        picked = []
        queue.select(into: &picked, limit: 10, maxCount: 4, maxBytes: 100_000)
        XCTAssertEqual(picked.count, 4)
        // The estimate is close to the encoded size.
        let message = GossipMessage.broadcast(.init(sender: MemberAddress(id: "x", endpoint: "tcp://h:1"), updates: picked))
        let encoded = try! GossipCodec.encode(message).count
        let estimated = picked.map(\.estimatedSize).reduce(0, +)
        XCTAssertLessThanOrEqual(encoded, estimated + 32)
        XCTAssertGreaterThan(Double(encoded), Double(estimated) * 0.7)
    }

    func testProbeOrderVisitsEveryMemberOncePerPassAndReshuffles() {
        var scheduler = ProbeScheduler()
        var rng = SeededRandom(seed: 1)
        let ids = (0..<10).map { MemberID("m\($0)") }
        for id in ids { scheduler.insert(id, using: &rng) }
        var passes: [[MemberID]] = []
        for _ in 0..<3 {
            var pass: [MemberID] = []
            for _ in ids { pass.append(scheduler.next(using: &rng) { _ in true }!) }
            XCTAssertEqual(Set(pass), Set(ids), "a pass probes everyone once")
            passes.append(pass)
        }
        XCTAssertNotEqual(passes[0], passes[1], "reshuffled between passes")
        // Ineligible members (dead, left) are skipped; with none eligible there is no target.
        XCTAssertNotEqual(scheduler.next(using: &rng) { $0 != "m3" }, "m3")
        XCTAssertNil(scheduler.next(using: &rng) { _ in false })
        scheduler.remove("m3")
        XCTAssertEqual(scheduler.order.count, 9)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
