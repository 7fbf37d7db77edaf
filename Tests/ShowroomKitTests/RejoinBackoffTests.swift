@testable import ShowroomKit
import XCTest

/// The rejoin retry schedule.
final class RejoinBackoffTests: XCTestCase {
    func testDelaysDoubleToTwoSecondsAndStopAtTheWindow() {
        var backoff = RejoinBackoff()
        let delays = (0..<7).map { _ in backoff.next(elapsed: .zero, window: .seconds(30)) }
        XCTAssertEqual(delays, [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2), .seconds(2)])
        XCTAssertNil(backoff.next(elapsed: .seconds(29), window: .seconds(30)), "the next try would start after the window")
        XCTAssertEqual(backoff.next(elapsed: .seconds(27), window: .seconds(30)), .seconds(2))
    }
}
