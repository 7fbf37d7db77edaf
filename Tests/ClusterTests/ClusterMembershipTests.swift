import Foundation
import ShowroomTesting
import ShowroomWire
import XCTest

/// Eight real processes with a keyring, as `deploy/cluster.sh up` runs them: everyone sees
/// everyone; a SIGKILLed edge is marked dead by all; a new edge is seen by all; a gracefully
/// stopped edge is seen as left, not dead; a restarted node rejoins with a higher incarnation;
/// the status tool lists the members.
final class ClusterMembershipTests: XCTestCase {
    func testEightProcessCluster() throws {
        let cluster = try TestCluster(coordinators: 2, callsignals: 2, edges: 4)
        defer { cluster.down() }
        // The status is asked of cluster endpoints, with the operator's keys from the cluster's keyring.
        let probe = try ClusterProbe(credentials: cluster.credentials)
        let initial = ["coordinator-1", "coordinator-2", "callsignal-1", "callsignal-2", "edge-1", "edge-2", "edge-3", "edge-4"]
        var endpoints = try Dictionary(uniqueKeysWithValues: initial.map { ($0, try cluster.endpoint(of: $0)) })
        try probe.waitUntil(Array(endpoints.values), "all 8 see all 8 alive") { $0.aliveIDs == Set(initial) }
        // Every view carries each member's role and address.
        let view = try XCTUnwrap(probe.status(of: endpoints["edge-1"]!))
        XCTAssertEqual(view.member("coordinator-2")?.role, "coordinator")
        XCTAssertEqual(view.member("coordinator-2")?.clusterEndpoint, endpoints["coordinator-2"])

        // SIGKILL one edge: every other member marks it dead.
        try cluster.kill("edge-4")
        endpoints["edge-4"] = nil
        let detection = try probe.waitUntil(Array(endpoints.values), timeout: .seconds(30), "edge-4 dead everywhere") {
            $0.member("edge-4")?.state == .dead
        }
        print("SIGKILLed edge-4 seen dead by all 7 within \(detection)")

        // Scale up: the new edge (edge-5) is seen by all.
        try cluster.scaleEdges(to: 4)
        endpoints["edge-5"] = try cluster.endpoint(of: "edge-5")
        try probe.waitUntil(Array(endpoints.values), "edge-5 alive everywhere") { $0.member("edge-5")?.state == .alive }

        // Graceful stop: scaling down removes the newest edge, which is seen as left, not dead.
        try cluster.scaleEdges(to: 3)
        endpoints["edge-5"] = nil
        try probe.waitUntil(Array(endpoints.values), "edge-5 left everywhere") { $0.member("edge-5")?.state == .left }

        // Restart: the node rejoins with a higher incarnation than before.
        let before = try XCTUnwrap(probe.status(of: endpoints["coordinator-1"]!)?.member("edge-1")?.incarnation)
        try cluster.restart("edge-1")
        endpoints["edge-1"] = try cluster.endpoint(of: "edge-1")
        try probe.waitUntil(Array(endpoints.values), "edge-1 alive again with a higher incarnation") {
            guard let edge = $0.member("edge-1") else { return false }
            return edge.state == .alive && edge.incarnation > before
        }

        // The status tool prints the cluster as JSON with the documented keys.
        let json = try cluster.status(json: true)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let members = try XCTUnwrap(object["members"] as? [[String: Any]])
        let alive = Set(members.filter { $0["state"] as? String == "alive" }.compactMap { $0["id"] as? String })
        XCTAssertEqual(alive, Set(endpoints.keys), "status --json lists the 7 running members alive")
        for member in members {
            for key in ["id", "role", "state", "address", "incarnation"] {
                XCTAssertNotNil(member[key], "status --json member lacks \(key)")
            }
        }
        XCTAssertNotNil(object["channels"])

        // Down: every process the cluster started is gone.
        let pids = try ["coordinator-1", "edge-1", "callsignal-2"].map { try cluster.pid(of: $0) }
        cluster.down()
        for pid in pids {
            XCTAssertFalse(processIsAlive(pid), "pid \(pid) still runs after down")
        }
    }
}
