import ClusterSimulation
import XCTest

/// One channel over many edges on the simulated network, small enough for a test: the origin
/// sends one copy per relay, placement settles, and a relay's death is noticed by its own viewers
/// only, each back within the failover goal.
final class RelayScenarioTests: XCTestCase {
    private static func settings() -> RelayScenario.Settings {
        var settings = RelayScenario.Settings()
        settings.edges = 10
        settings.viewers = 500
        settings.joinWindowMs = 3_000
        settings.measureMs = 5_000
        settings.afterKillMs = 5_000
        return settings
    }

    func testTheOriginSendsOneCopyPerRelayAndOnlyTheDeadRelaysViewersNotice() throws {
        let outcome = try RelayScenario(settings: Self.settings()).run()

        // Every edge hosts the channel: the origin and 9 relays, 50 viewers each.
        XCTAssertNotNil(outcome.settledMs, "every viewer received frames")
        XCTAssertEqual(outcome.hostingEdges, 10)
        XCTAssertEqual(outcome.relays, 9)
        XCTAssertNotNil(outcome.everyEdgeHostingMs)
        XCTAssertEqual(outcome.firstFrameMs.count, 500)

        // One copy per frame and relay link, however many viewers each relay serves.
        XCTAssertGreaterThan(outcome.framesPublished, 0)
        XCTAssertEqual(outcome.copiesPerFrame, Double(outcome.relays), accuracy: 0.01)
        XCTAssertEqual(outcome.originLocalFramesPerSecond, Double(outcome.originViewers) * Double(outcome.framesPublished) / 5,
                       accuracy: 0.01)

        // A relay dies: its viewers rejoin elsewhere within the goal, nobody else notices.
        XCTAssertFalse(outcome.killedEdge.isEmpty)
        XCTAssertNotEqual(outcome.killedEdge, outcome.origin)
        XCTAssertGreaterThan(outcome.killedViewers, 0)
        XCTAssertEqual(outcome.noticedElsewhere, 0)
        XCTAssertEqual(outcome.notReceivingAtKill, 0, "everyone was watching")
        XCTAssertEqual(outcome.back, outcome.killedViewers, "all back")
        XCTAssertEqual(outcome.backWithinGoal, outcome.killedViewers)
        XCTAssertLessThanOrEqual(outcome.rejoinMs.max, 2_000)
    }

    func testTheSameSettingsGiveTheSameFigures() throws {
        var settings = Self.settings()
        settings.edges = 4
        settings.viewers = 60
        let first = try RelayScenario(settings: settings).run()
        let second = try RelayScenario(settings: settings).run()
        XCTAssertEqual(first.digest, second.digest)
        XCTAssertEqual(first.settledMs, second.settledMs)
        XCTAssertEqual(first.rejoinMs, second.rejoinMs)
        XCTAssertEqual(first.copiesPerFrame, second.copiesPerFrame)
    }
}
