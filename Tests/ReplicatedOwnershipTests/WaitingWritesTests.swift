import ReplicatedOwnership
import XCTest

/// Which waiting writes run their callbacks, and when.
final class WaitingWritesTests: XCTestCase {
    func testAnAcknowledgedWriteRunsOnceAndAnUnacknowledgedOneOnlyWhenItRunsAnyway() {
        var waiting = WaitingWrites<String>()
        waiting.wait(for: 1, settledAnyway: false, "answer the client")
        waiting.wait(for: 2, settledAnyway: true, "publish the events")
        waiting.wait(for: 3, settledAnyway: false, "answer another client")
        XCTAssertEqual(waiting.count, 3)

        XCTAssertEqual(waiting.settle(1, acknowledged: true), "answer the client")
        XCTAssertNil(waiting.settle(1, acknowledged: true), "a callback runs once")
        XCTAssertEqual(waiting.settle(2, acknowledged: false), "publish the events", "settled anyway: runs unacknowledged")
        XCTAssertNil(waiting.settle(3, acknowledged: false), "a client's answer waits for an acknowledgement")
        XCTAssertEqual(waiting.count, 0, "an unacknowledged write waits no more either")
        XCTAssertNil(waiting.settle(3, acknowledged: true), "forgotten: a late acknowledgement runs nothing")
    }

    func testAWriteNeverRegisteredRunsNothing() {
        var waiting = WaitingWrites<Int>()
        XCTAssertNil(waiting.settle(UInt64.max, acknowledged: true))
        waiting.wait(for: 7, settledAnyway: false, 70)
        waiting.wait(for: 7, settledAnyway: true, 71)
        XCTAssertEqual(waiting.count, 1, "a write id waits once, with its last callback")
        XCTAssertEqual(waiting.settle(7, acknowledged: false), 71)
    }
}
