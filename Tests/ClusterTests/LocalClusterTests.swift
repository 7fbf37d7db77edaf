import Foundation
import LocalCluster
import ShowroomWire
import XCTest

/// Eight real processes through the launcher, as an operator runs them: everyone sees everyone;
/// a SIGKILLed edge is marked dead by all; a new edge is seen by all; a gracefully stopped edge is
/// seen as left, not dead; a restarted node rejoins with a higher incarnation.
final class LocalClusterTests: XCTestCase {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testEightProcessClusterThroughTheLauncher() throws {
        let launcher = try Launcher(packageRoot: Self.packageRoot)
        defer { try? launcher.down() }
        try launcher.run("up", ["--edges", "4", "--coordinators", "2", "--callsignals", "2", "--base-port", "0"])
        // The status is asked of cluster endpoints, with the operator's keys from the launcher's keyring.
        let probe = try ClusterProbe(credentials: launcher.credentials)
        let initial = ["coordinator-1", "coordinator-2", "callsignal-1", "callsignal-2", "edge-1", "edge-2", "edge-3", "edge-4"]
        var endpoints = try Dictionary(uniqueKeysWithValues: initial.map { ($0, try launcher.endpoint(of: $0)) })
        try probe.waitUntil(Array(endpoints.values), "all 8 see all 8 alive") { $0.aliveIDs == Set(initial) }
        // Every view carries each member's role and address.
        let view = try XCTUnwrap(probe.status(of: endpoints["edge-1"]!))
        XCTAssertEqual(view.member("coordinator-2")?.role, "coordinator")
        XCTAssertEqual(view.member("coordinator-2")?.clusterEndpoint, endpoints["coordinator-2"])

        // SIGKILL one edge: every other member marks it dead.
        try launcher.run("kill", ["edge-4"])
        endpoints["edge-4"] = nil
        let detection = try probe.waitUntil(Array(endpoints.values), timeout: .seconds(30), "edge-4 dead everywhere") {
            $0.member("edge-4")?.state == .dead
        }
        print("SIGKILLed edge-4 seen dead by all 7 within \(detection)")

        // Scale up: the new edge (edge-5) is seen by all.
        try launcher.run("scale-edges", ["4"])
        endpoints["edge-5"] = try launcher.endpoint(of: "edge-5")
        try probe.waitUntil(Array(endpoints.values), "edge-5 alive everywhere") { $0.member("edge-5")?.state == .alive }

        // Graceful stop: scaling down removes the newest edge, which is seen as left, not dead.
        try launcher.run("scale-edges", ["3"])
        endpoints["edge-5"] = nil
        try probe.waitUntil(Array(endpoints.values), "edge-5 left everywhere") { $0.member("edge-5")?.state == .left }

        // Restart: the node rejoins with a higher incarnation than before.
        let before = try XCTUnwrap(probe.status(of: endpoints["coordinator-1"]!)?.member("edge-1")?.incarnation)
        try launcher.run("restart", ["edge-1"])
        endpoints["edge-1"] = try launcher.endpoint(of: "edge-1")
        try probe.waitUntil(Array(endpoints.values), "edge-1 alive again with a higher incarnation") {
            guard let edge = $0.member("edge-1") else { return false }
            return edge.state == .alive && edge.incarnation > before
        }

        // The status tool prints the cluster as JSON with the documented keys.
        let json = try launcher.run("status", ["--json"])
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

        // Down: every process the launcher started is gone.
        let pids = try ["coordinator-1", "edge-1", "callsignal-2"].map { try launcher.pid(of: $0) }
        try launcher.down()
        for pid in pids {
            XCTAssertFalse(processIsAlive(pid), "pid \(pid) still runs after down")
        }
    }
}
