@testable import ShowroomKit
import ShowroomWire
import XCTest

/// Which members of a `CLUSTER_STATUS` answer the SDK routes to.
final class ClusterDirectoryTests: XCTestCase {
    private func member(_ id: String, _ role: String, _ state: GossipMemberState, _ client: String) -> AdminMemberStatus {
        var m = AdminMemberStatus()
        m.id = id
        m.role = role
        m.state = state
        m.clientEndpoint = client
        return m
    }

    private var status: AdminClusterStatus {
        var status = AdminClusterStatus()
        status.members = [
            member("edge-2", "edge", .alive, "tcp://127.0.0.1:2"),
            member("edge-1", "edge", .alive, "tcp://127.0.0.1:1"),
            member("edge-3", "edge", .suspect, "tcp://127.0.0.1:3"),
            member("edge-4", "edge", .dead, "tcp://127.0.0.1:4"),
            member("edge-5", "edge", .alive, ""),
            member("coord-2", "coordinator", .alive, "tcp://127.0.0.1:8"),
            member("coord-1", "coordinator", .alive, "tcp://127.0.0.1:9"),
            member("coord-3", "coordinator", .left, "tcp://127.0.0.1:10"),
            member("call-1", "callsignal", .alive, "tcp://127.0.0.1:11"),
        ]
        return status
    }

    func testKeepsAliveEdgesWithClientEndpoints() {
        XCTAssertEqual(ClusterDirectory.edges(in: status).map(\.id), ["edge-1", "edge-2"])
    }

    func testKeepsAliveCoordinatorsWithClientEndpoints() {
        XCTAssertEqual(ClusterDirectory.coordinators(in: status).map(\.id), ["coord-1", "coord-2"])
    }
}
