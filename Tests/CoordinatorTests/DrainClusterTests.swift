import Foundation
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import XCTest

/// Draining an edge (SIGTERM, `cluster.sh scale-edges` down), make before break, on real
/// processes: its clients join elsewhere first and leave it after, so its viewers keep decoding,
/// nobody reconnects and nobody sees the host go offline.
final class DrainClusterTests: XCTestCase {
    private struct Viewer {
        let engine: ShowroomEngine
        let log: EventLog
        let pictures: PictureTimes
        let edge: String
    }

    private struct Show {
        let cluster: TestCluster
        let loop: EngineLoop
        let host: ShowroomEngine
        let hostLog: EventLog
        let origin: String
        let viewers: [Viewer]

        func shutdown() async {
            for engine in viewers.map(\.engine) + [host] { await engine.shutdown() }
            await loop.shutdown()
        }
    }

    /// A host and six viewers over three edges (the origin takes two, relays the rest).
    private func startShow(_ cluster: TestCluster, name: String) async throws -> Show {
        let seed = try cluster.endpoint("coordinator-1")
        let loop = try EngineLoop(name: name)
        let channel = "\(name)-\(UInt32.random(in: 1...999_999))"
        let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])), loop: loop)
        let hostLog = EventLog(host)
        await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        let hostConnection = try await host.joinChannel(token: try TestApp.token(channel: channel, uid: 1), channel: channel, uid: 1,
                                                        options: .broadcaster)
        let hostEdge = await host.edgeID(of: hostConnection)
        let origin = try XCTUnwrap(hostEdge)
        var viewers: [Viewer] = []
        for n in 0..<6 {
            let uid = UInt32(400 + n)
            let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])), loop: loop)
            let log = EventLog(engine)
            let times = PictureTimes()
            let connection = ChannelConnection(channel: channel, uid: uid)
            // The seeds' order: join, then the sink once the host is there.
            try await engine.joinChannel(token: try TestApp.token(channel: channel, uid: uid, role: .subscriber), channel: channel,
                                         uid: uid, options: .audience)
            _ = try await log.wait("viewer \(uid) sees the host") { if case .userJoined(connection, 1) = $0 { true } else { false } }
            try await engine.setupRemoteVideo(uid: 1, connection: connection,
                                              sink: DecodingVideoSink(readFrameCounters: false) { _ in times.record() })
            viewers.append(Viewer(engine: engine, log: log, pictures: times, edge: await engine.edgeID(of: connection) ?? ""))
        }
        try await eventually("every viewer decodes the host", timeout: .seconds(20)) { viewers.allSatisfy { !$0.pictures.isEmpty } }
        return Show(cluster: cluster, loop: loop, host: host, hostLog: hostLog, origin: origin, viewers: viewers)
    }

    /// Drains `edge` and waits until it exited; returns when the drain began.
    private func drain(_ edge: String, of show: Show) throws -> ContinuousClock.Instant {
        let began = ContinuousClock.now
        try show.cluster.terminate(edge)
        try show.cluster.stop(edge)  // waits for the exit (the drain closes once its viewers moved)
        return began
    }

    private func offlines(_ log: EventLog) -> Int {
        log.all.filter { if case .userOffline = $0 { true } else { false } }.count
    }

    private func reconnected(_ log: EventLog) -> Bool {
        log.all.contains { if case .connectionStateChanged(_, .reconnecting, _) = $0 { true } else { false } }
    }

    func testDrainingARelayMovesItsViewersBeforeItCloses() async throws {
        let cluster = try TestCluster(coordinators: 1, edges: 3, relayThreshold: 2)
        defer { cluster.down() }
        let show = try await startShow(cluster, name: "drain-relay")
        let relay = try XCTUnwrap(show.viewers.first { $0.edge != show.origin }?.edge)
        let moving = show.viewers.filter { $0.edge == relay }
        let began = try drain(relay, of: show)
        let drainTime = began.duration(to: .now)
        try await eventually("every viewer decodes after the drain", timeout: .seconds(20)) {
            show.viewers.allSatisfy { $0.pictures.count(after: began + drainTime) >= 5 }
        }
        for viewer in moving {
            let statistics = await viewer.engine.statistics()
            XCTAssertEqual(statistics.moves, 1, "the relay's viewer moved")
            XCTAssertFalse(reconnected(viewer.log), "moved, never reconnecting")
            XCTAssertEqual(offlines(viewer.log), 0, "nobody went offline for a viewer that moved")
        }
        for viewer in show.viewers where viewer.edge != relay {
            XCTAssertEqual(offlines(viewer.log), 0, "the other viewers saw nothing")
        }
        print("relay drain: \(drainTime) to exit; moved viewers' longest picture gaps: \(moving.map { $0.pictures.longestGap(after: began) })")
        await show.shutdown()
    }

    func testDrainingTheOriginMovesItsHostAndViewersAndTheRelaysFollow() async throws {
        let cluster = try TestCluster(coordinators: 1, edges: 3, relayThreshold: 2)
        defer { cluster.down() }
        let show = try await startShow(cluster, name: "drain-origin")
        let began = try drain(show.origin, of: show)
        let drainTime = began.duration(to: .now)
        try await eventually("every viewer decodes after the drain", timeout: .seconds(20)) {
            show.viewers.allSatisfy { $0.pictures.count(after: began + drainTime) >= 5 }
        }
        let hostStatistics = await show.host.statistics()
        XCTAssertEqual(hostStatistics.moves, 1, "the host moved")
        XCTAssertFalse(reconnected(show.hostLog), "the host never reconnected")
        for viewer in show.viewers where viewer.edge == show.origin {
            let statistics = await viewer.engine.statistics()
            XCTAssertEqual(statistics.moves, 1, "the origin's viewer moved")
            XCTAssertFalse(reconnected(viewer.log), "moved, never reconnecting")
            XCTAssertEqual(offlines(viewer.log), 0, "the host never went offline for a viewer that moved")
        }
        for viewer in show.viewers where viewer.edge != show.origin {
            XCTAssertFalse(reconnected(viewer.log), "a relay's viewer keeps its connection")
            // Its relay pulls from the new origin, or became it and the host took its stand-in over.
            XCTAssertEqual(offlines(viewer.log), 0, "the host never went offline for a relay's viewer")
        }
        let gaps = show.viewers.map { "\($0.edge == show.origin ? "moved" : "relay \($0.edge)"): \($0.pictures.longestGap(after: began)), offline \(offlines($0.log))" }
        print("origin drain: \(drainTime) to exit; viewers: \(gaps)")
        await show.shutdown()
    }
}
