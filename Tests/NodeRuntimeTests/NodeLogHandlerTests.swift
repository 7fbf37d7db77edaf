import Foundation
@testable import NodeRuntime
import XCTest

/// Log lines carry the time in UTC to the millisecond, so several processes' logs line up.
final class NodeLogHandlerTests: XCTestCase {
    func testTheTimestampIsUTCToTheMillisecond() {
        XCTAssertEqual(NodeLogHandler.timestamp(timespec(tv_sec: 1_795_716_922, tv_nsec: 5_999_999)), "2026-11-26T18:15:22.005Z")
        XCTAssertEqual(NodeLogHandler.timestamp(timespec(tv_sec: 1_795_716_922, tv_nsec: 987_000_000)), "2026-11-26T18:15:22.987Z")
        XCTAssertEqual(NodeLogHandler.timestamp(timespec(tv_sec: 0, tv_nsec: 40_000_000)), "1970-01-01T00:00:00.040Z")
    }
}
