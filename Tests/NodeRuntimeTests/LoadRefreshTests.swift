@testable import NodeRuntime
import XCTest

/// When a member's CPU reading is disseminated: small loads must show, without a new incarnation
/// for every wobble.
final class LoadRefreshTests: XCTestCase {
    func testSmallLoadsShowAndWobblesDoNot() {
        // A process at 0.4 % is not shown as 0 %.
        XCTAssertTrue(MembershipDriver.cpuChangedNoticeably(from: 0, to: 0.4))
        XCTAssertFalse(MembershipDriver.cpuChangedNoticeably(from: 0, to: 0.1))
        // Below 2 %, half the value counts; above, a point.
        XCTAssertTrue(MembershipDriver.cpuChangedNoticeably(from: 0.8, to: 0.4))
        XCTAssertFalse(MembershipDriver.cpuChangedNoticeably(from: 0.8, to: 0.6))
        XCTAssertFalse(MembershipDriver.cpuChangedNoticeably(from: 12, to: 12.9))
        XCTAssertTrue(MembershipDriver.cpuChangedNoticeably(from: 12, to: 13))
        XCTAssertTrue(MembershipDriver.cpuChangedNoticeably(from: 12, to: 0))
    }
}
