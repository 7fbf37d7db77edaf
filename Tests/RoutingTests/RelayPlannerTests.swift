import Routing
import XCTest

/// Audience members of a busy channel spread from its origin to relay edges, each filled to the
/// threshold, joins charged before reports catch up.
final class RelayPlannerTests: XCTestCase {
    func testViewersFillTheOriginThenEachRelayInOrderAndJoinsCountBeforeReports() {
        var planner = RelayPlanner(threshold: 2)
        let relays = ["edge-b", "edge-c"]
        let placed = (0..<7).map { _ in planner.edge(for: "show", origin: "edge-a", reported: [:], candidates: relays, nowMs: 0) }
        XCTAssertEqual(placed, ["edge-a", "edge-a", "edge-b", "edge-b", "edge-c", "edge-c", "edge-a"],
                       "two each, then the least full")
        XCTAssertTrue(planner.isRelay("edge-b", of: "show"))
        XCTAssertFalse(planner.isRelay("edge-a", of: "show"), "the origin is no relay")
        // Without newer reports the joins still count; a report taken after them replaces them.
        XCTAssertEqual(planner.edge(for: "show", origin: "edge-a", reported: ["edge-a": 1], candidates: relays, nowMs: 5_000), "edge-b",
                       "least full, the joins of a second ago still counted")
        let reportedAt = ["edge-a": Int64(6_000), "edge-b": 6_000, "edge-c": 6_000]
        let later = planner.edge(for: "show", origin: "edge-a", reported: ["edge-a": 1, "edge-b": 2, "edge-c": 2],
                                 reportedAtMs: reportedAt, candidates: relays, nowMs: 6_100)
        XCTAssertEqual(later, "edge-a", "the origin has room again, as its report says")
    }

    func testThresholdZeroKeepsEveryoneOnTheOriginAndReportsKeepTheRelaySet() {
        var planner = RelayPlanner(threshold: 0)
        XCTAssertEqual(planner.edge(for: "show", origin: "edge-a", reported: ["edge-a": 1000], candidates: ["edge-b"], nowMs: 0), "edge-a")
        planner.reported("edge-b", relays: true, channel: "show")
        XCTAssertTrue(planner.isRelay("edge-b", of: "show"))
        planner.reported("edge-b", relays: false, channel: "show")
        XCTAssertFalse(planner.isRelay("edge-b", of: "show"))
        XCTAssertEqual(planner.relays, [:])
    }

    /// Charged joins and relays chosen for viewers who never came are forgotten after the charge
    /// time, so channels that are gone leave nothing; a relay that reports relaying stays.
    func testChannelsGoneLeaveNothingBehind() {
        var planner = RelayPlanner(threshold: 1, chargeMs: 10_000)
        for channel in 0..<100 {
            for _ in 0..<2 {
                _ = planner.edge(for: "call-1-\(channel)", origin: "edge-a", reported: [:], candidates: ["edge-b"], nowMs: 1_000)
            }
        }
        XCTAssertTrue(planner.isRelay("edge-b", of: "call-1-0"))
        planner.reported("edge-b", relays: true, channel: "call-1-7")
        XCTAssertEqual(planner.channelCount, 100)

        planner.expire(nowMs: 10_999)
        XCTAssertEqual(planner.channelCount, 100, "within the charge time")
        planner.expire(nowMs: 11_000)
        XCTAssertEqual(planner.channelCount, 1, "only the relay that reported")
        XCTAssertFalse(planner.isRelay("edge-b", of: "call-1-0"), "chosen, never reported")
        XCTAssertTrue(planner.isRelay("edge-b", of: "call-1-7"))
        planner.reported("edge-b", relays: false, channel: "call-1-7")
        XCTAssertEqual(planner.channelCount, 0)
        XCTAssertEqual(planner.edge(for: "call-1-0", origin: "edge-a", reported: [:], candidates: ["edge-b"], nowMs: 20_000), "edge-a",
                       "a channel used again starts afresh")
    }
}
