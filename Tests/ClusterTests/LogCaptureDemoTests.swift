import ShowroomTesting
import XCTest

final class LogCaptureDemoTests: XCTestCase {
    func testAFailingTestPrintsItsNodesLogs() throws {
        let cluster = try TestCluster(coordinators: 1, edges: 1)
        defer { cluster.down() }
        XCTFail("deliberate failure, to show the node logs printed after it")
    }
}
