import ShowroomTesting
import XCTest

/// A failing test prints what its nodes printed during it: the report it prints holds each node's
/// lines, labelled with its id and pid.
final class LogCaptureTests: XCTestCase {
    func testATestsReportHoldsWhatItsNodesPrinted() throws {
        let cluster = try TestCluster(coordinators: 1, edges: 1)
        defer { cluster.down() }
        let report = LogCapture.report(for: name)
        XCTAssertTrue(report.contains("---- coordinator-1 (pid "), report)
        XCTAssertTrue(report.contains("---- edge-1 (pid "), report)
        XCTAssertTrue(report.contains("> ready node=coordinator-1"), report)
        XCTAssertTrue(report.contains("> ready node=edge-1"), report)
    }
}
