import Foundation
import ShowroomKit
import ShowroomTesting
import XCTest

/// A host's whole evening in short: every interaction together on a real cluster (two edges, two
/// coordinators, a call-signal node), a seeded schedule with operations, and the invariants
/// checked all along; any violation fails the test with its seed and step.
final class EveningScenarioTests: XCTestCase {
    func testASeedGivesOneScheduleAndTheScheduleKeepsItsRules() {
        let settings = EveningSettings(seed: 7, duration: .seconds(600), rooms: 4)
        let one = EveningSchedule(settings), two = EveningSchedule(settings)
        XCTAssertEqual(one.steps, two.steps)
        XCTAssertEqual(one.digest, two.digest)
        var other = settings
        other.seed = 8
        XCTAssertNotEqual(EveningSchedule(other).digest, one.digest)
        XCTAssertEqual(Set(one.counts.keys), ["call", "pk", "cohost", "swipe", "chat", "operation"], "ten minutes hold every kind of step")
        // A room is in one step at a time, with time to settle between; an operation runs alone.
        for (index, step) in one.steps.enumerated() {
            for later in one.steps[(index + 1)...] where later.at < step.at + step.length + .seconds(2) {
                XCTAssertTrue(Set(step.action.rooms).isDisjoint(with: later.action.rooms), "\(step) and \(later) share a room")
                if case .operation = step.action { XCTFail("\(later) starts during \(step)") }
                if case .operation = later.action { XCTFail("\(later) starts during \(step)") }
            }
        }
        XCTAssertTrue(one.steps.allSatisfy { $0.at < settings.duration })
    }

    func testShortEveningsOnARealClusterKeepEveryInvariant() async throws {
        let receiver = try await WebhookReceiver.start(secret: "evening")
        let cluster = try TestCluster(coordinators: 2, callsignals: 1, edges: 2, webhookURLs: [receiver.url], webhookSecret: "evening")
        defer { cluster.down() }
        let seeds = try ["coordinator-1", "coordinator-2"].map { try cluster.clientEndpoint(of: $0) }
        let tokens = EveningTokens(rtc: { channel, uid, publisher in
            try TestApp.token(channel: channel, uid: uid, role: publisher ? .publisher : .subscriber)
        }, login: { uid in try TestApp.loginToken(uid: uid) })
        // Two half-minute evenings that hold every kind of step, with an edge killed in one (seed 9)
        // and an edge drained in the other (seed 26).
        let schedules = [UInt64(9), 26].map { EveningSchedule(EveningSettings(seed: $0, duration: .seconds(30), rooms: 3, viewersPerRoom: 2, swipers: 1)) }
        XCTAssertEqual(Set(schedules.flatMap(\.counts.keys)), ["call", "pk", "cohost", "swipe", "chat", "operation"])
        XCTAssertEqual(schedules.flatMap { $0.steps.map(\.action.description).filter { $0.hasPrefix("operation") } },
                       ["operation killEdge", "operation drainEdge"])
        for schedule in schedules {
            let seed = schedule.settings.seed
            let evening = Evening(schedule: schedule, cluster: cluster, seeds: seeds, tokens: tokens, webhooks: receiver) { line in
                print("evening seed \(seed): \(line)")
            }
            try await evening.run()
            let book = evening.book
            print("evening seed \(seed), schedule \(schedule.digest): \(book.summary.joined(separator: "; "))")
            XCTAssertEqual(book.violationTotal, 0, "seed \(seed): \(book.violations.prefix(10).map(\.description).joined(separator: "\n"))")
            for invariant in [InvariantBook.Invariant.showPlays, .rightPeopleSeen, .statusAgrees, .backToBaseline, .stepsDoWhatTheySay, .eventsNumbered] {
                XCTAssertGreaterThan(book.checks(invariant), 0, "seed \(seed): \(invariant.rawValue) was never checked")
            }
        }
        await receiver.stop()
    }
}
