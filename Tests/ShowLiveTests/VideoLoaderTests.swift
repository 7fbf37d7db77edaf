import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import Synchronization
import XCTest

/// The video loader on real processes: a viewer swiping through live rooms decodes each room's
/// host on every swipe while holding at most three channels, and leaves nothing behind.
final class VideoLoaderTests: SharedClusterTestCase {
    func testAViewerSwipingThroughLiveRoomsDecodesEachHostOnEverySwipe() async throws {
        let rooms = try (0..<10).map { n in
            AnchorInfo(channel: "swipe-\(n)", uid: 500 + UInt32(n),
                       token: try TestApp.token(channel: "swipe-\(n)", uid: 77, role: .subscriber))
        }
        var hosts: [TestClient] = []
        for room in rooms {
            hosts.append(try await TestClient.join(room.channel, uid: room.uid, role: .broadcaster, camera: true))
        }
        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([SharedCluster.seed])))
        let loader = VideoLoader(engine: viewer, localUID: 77)
        let reports = Mutex<[VideoLoaderEvent]>([])
        let reader = Task { for await event in loader.events { reports.withLock { $0.append(event) } } }
        defer { reader.cancel() }

        // Down the feed and back up: every room on screen is decoded, through prejoined neighbours.
        let path = Array(0..<10) + Array((0..<9).reversed())
        var held: [Int] = []
        for (step, index) in path.enumerated() {
            loader.swipe(to: index, in: rooms)
            await loader.settle()
            held.append(loader.heldChannels.count)
            XCTAssertEqual(loader.state(of: rooms[index].channel), .joinedWithAudioVideo)
            try await eventually("swipe \(step): room \(index)'s host decoded") {
                reports.withLock { events in
                    events.filter { if case .firstFrame(rooms[index].channel, rooms[index].uid, _, _) = $0 { true } else { false } }.count
                        >= path.prefix(step + 1).filter { $0 == index }.count
                }
            }
        }
        XCTAssertLessThanOrEqual(held.max() ?? 0, 3, "channels held per swipe: \(held)")
        XCTAssertEqual(reports.withLock { $0.filter { if case .error = $0 { true } else { false } } }, [])
        let connections = await viewer.connections()
        XCTAssertEqual(Set(connections.map(\.channel)), Set(loader.heldChannels))

        // A card touched in the list raises a room the feed holds only prejoined; its tag's end
        // lowers it again without leaving the feed's hold.
        loader.switchAnchorState(.joinedWithVideo, anchor: rooms[1], tag: "card")
        await loader.settle()
        XCTAssertEqual(loader.state(of: rooms[1].channel), .joinedWithVideo)
        loader.switchAnchorState(.idle, anchor: rooms[1], tag: "card")
        await loader.settle()
        XCTAssertEqual(loader.state(of: rooms[1].channel), .prejoined)

        loader.cleanCache()
        await loader.settle()
        XCTAssertEqual(loader.heldChannels, [])
        let left = await viewer.connections()
        XCTAssertEqual(left, [], "no connection leaked")
        await viewer.shutdown()
        for host in hosts { await host.stop() }
    }

    func testAnEdgeSessionStaysWarmAfterTheLastRoomLeftAndTheNextRoomReusesIt() async throws {
        let host = try await TestClient.join("warm-1", uid: 601, role: .broadcaster, camera: true)
        var configuration = EngineConfiguration(entry: .seeds([SharedCluster.seed]))
        configuration.sessionIdleTime = .seconds(30)
        let viewer = try await ShowroomEngine(configuration: configuration)
        let everything = EventLog(viewer)
        let connection = ChannelConnection(channel: "warm-1", uid: 602)
        // What this connection saw, and only that.
        let seen = Mutex<[EngineEvent]>([])
        let reader = Task { for await event in viewer.events(for: connection) { seen.withLock { $0.append(event) } } }
        defer { reader.cancel() }
        // The same channel twice, its only channel: the second join finds the first one's session
        // still open (warm) and opens none.
        var opened: [Int] = []
        for round in 1...2 {
            try await viewer.setupRemoteVideo(uid: 601, connection: connection, sink: DecodingVideoSink())
            _ = try await viewer.joinChannelEx(token: try TestApp.token(channel: "warm-1", uid: 602, role: .subscriber),
                                               connection: connection, options: .audience)
            try await eventually("round \(round): the host decoded") {
                seen.withLock { $0.filter { if case .firstRemoteVideoFrameDecoded = $0 { true } else { false } }.count } >= round
            }
            // Read at once, no await: the host and its tracks as the events told them.
            XCTAssertEqual(viewer.view.connections["warm-1"]?.remoteUsers[601]?.contains(.video), true)
            try await viewer.leaveChannelEx(connection)
            XCTAssertNil(viewer.view.connections["warm-1"])
            opened.append(await viewer.statistics().sessionsOpened)
        }
        XCTAssertEqual(opened, [1, 1], "one session, kept warm between the rooms")
        // Another connection's events reach the engine's readers, not this connection's.
        let other = ChannelConnection(channel: "warm-2", uid: 602)
        _ = try await viewer.joinChannelEx(token: try TestApp.token(channel: "warm-2", uid: 602, role: .subscriber),
                                           connection: other, options: .audience)
        _ = try await everything.wait("the other connection joined") { if case .joined(other, _) = $0 { true } else { false } }
        XCTAssertFalse(seen.withLock { $0.contains { $0.connection == other } }, "no event of another connection")
        XCTAssertTrue(seen.withLock { $0.contains { if case .joined(connection, _) = $0 { true } else { false } } })
        try await viewer.leaveChannelEx(other)
        await viewer.shutdown()
        await host.stop()
    }

    func testAPreloadedRoomOpensWithoutANewSession() async throws {
        let host = try await TestClient.join("preload-1", uid: 701, role: .broadcaster, camera: true)
        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([SharedCluster.seed])))
        let loader = VideoLoader(engine: viewer, localUID: 702)
        let reports = Mutex<[VideoLoaderEvent]>([])
        let reader = Task { for await event in loader.events { reports.withLock { $0.append(event) } } }
        defer { reader.cancel() }
        let room = AnchorInfo(channel: "preload-1", uid: 701, token: try TestApp.token(channel: "preload-1", uid: 702, role: .subscriber))
        let preloadedJoinsBefore = try await edgeGauge("showroom_edge_preloaded_joins")
        loader.preloadChannels([room])
        await loader.settle()
        XCTAssertEqual(loader.heldChannels, [], "nothing joined")
        let none = await viewer.connections()
        XCTAssertEqual(none, [])
        let opened = await viewer.statistics().sessionsOpened
        XCTAssertEqual(opened, 1, "the room's edge session opened ahead")
        loader.switchAnchorState(.joinedWithVideo, anchor: room, tag: "card")
        try await eventually("the preloaded room's host decoded") {
            reports.withLock { $0.contains { if case .firstFrame("preload-1", 701, _, _) = $0 { true } else { false } } }
        }
        let after = await viewer.statistics().sessionsOpened
        XCTAssertEqual(after, 1, "the join used the session opened by the preload")
        // The edge checked the token at the preload; the join took that grant.
        try await eventually("the edge counts a preloaded join") {
            try await edgeGauge("showroom_edge_preloaded_joins") >= preloadedJoinsBefore + 1
        }
        XCTAssertEqual(reports.withLock { $0.filter { if case .error = $0 { true } else { false } } }, [])
        // A bad token fails the preload with the placement's refusal, reported.
        loader.preloadChannels([AnchorInfo(channel: "preload-2", uid: 703, token: "not a token")])
        await loader.settle()
        // (The reader task takes the report from the loader's stream a moment after it is sent.)
        try await eventually("the refused preload is reported") {
            reports.withLock { $0.contains { if case .error("preload-2", _) = $0 { true } else { false } } }
        }
        loader.cleanCache()
        await loader.settle()
        await viewer.shutdown()
        await host.stop()
    }

    func testATouchedCardPlaysBeforeTheFingerLiftsAndCleanCacheLeavesNothingAtTheEdges() async throws {
        let rooms = try (0..<3).map { n in
            AnchorInfo(channel: "touch-\(n)", uid: 800 + UInt32(n), token: try TestApp.token(channel: "touch-\(n)", uid: 88, role: .subscriber))
        }
        var hosts: [TestClient] = []
        for room in rooms { hosts.append(try await TestClient.join(room.channel, uid: room.uid, role: .broadcaster, camera: true)) }
        let service = RoomService(seeds: [SharedCluster.seed], loop: hosts[0].engine.loop)
        let shown = try await service.createRoom(name: "touch", ownerUid: rooms[0].uid, roomID: rooms[0].channel)
        // What the edges hold before the viewer: its sessions and connections must go back to this.
        var idleConfiguration = EngineConfiguration(entry: .seeds([SharedCluster.seed]))
        idleConfiguration.sessionIdleTime = .milliseconds(200)
        // (The edges refresh their gauges on their tick, and a tick can fall between two hosts'
        // joins or while an earlier test's sessions close: wait until the three hosts' sessions and
        // connections are both counted.)
        var sessionsBefore = 0.0
        var connectionsBefore = 0.0
        try await eventually("the edges count the hosts' sessions and connections") {
            sessionsBefore = try await edgeGauge("showroom_edge_sessions")
            connectionsBefore = try await edgeGauge("showroom_edge_connections")
            return sessionsBefore >= 3 && connectionsBefore >= 3
        }

        let viewer = try await ShowroomEngine(configuration: idleConfiguration)
        let loader = VideoLoader(engine: viewer, localUID: 88)
        let reports = Mutex<[VideoLoaderEvent]>([])
        let reader = Task { for await event in loader.events { reports.withLock { $0.append(event) } } }
        defer { reader.cancel() }

        // The list shows the card; a finger goes down on it: the host plays before it lifts.
        loader.cardVisible(rooms[0])
        loader.touchDown(rooms[0])
        try await eventually("the touched room's host decoded") {
            reports.withLock { $0.contains { if case .firstFrame("touch-0", 800, _, _) = $0 { true } else { false } } }
        }
        let report = reports.withLock { $0.first { if case .firstFrame("touch-0", _, _, _) = $0 { true } else { false } } }
        guard case .firstFrame(_, _, let actual, let perceived)? = report else { return XCTFail("no first frame report") }
        XCTAssertGreaterThanOrEqual(perceived, actual, "perceived counts from the card becoming visible, before the touch")
        // Joined and played, yet not in the room's audience: the room counts those who joined it.
        let room = try await service.room(rooms[0].channel)
        XCTAssertEqual(room.audienceCount, shown.audienceCount, "a prejoined or touched connection is nobody's audience")

        // Another card: touched and slid away, it is let go; the first one opens into the feed.
        loader.touchDown(rooms[1])
        loader.touchUp(rooms[1], inside: false)
        await loader.settle()
        XCTAssertEqual(loader.state(of: rooms[1].channel), .idle)
        loader.touchUp(rooms[0], inside: true)
        loader.swipe(to: 0, in: rooms)
        await loader.settle()
        XCTAssertEqual(loader.state(of: rooms[0].channel), .joinedWithAudioVideo, "the feed took the touched room over")
        XCTAssertEqual(Set(loader.heldChannels), ["touch-0", "touch-1"], "the room on screen and the one below, prejoined")

        // cleanCache: the edges' own counters go back to what they were.
        loader.cleanCache()
        await loader.settle()
        var after = (sessions: 0.0, connections: 0.0)
        do {
            try await eventually("the edges hold none of the viewer's sessions or connections") {
                after = (try await edgeGauge("showroom_edge_sessions"), try await edgeGauge("showroom_edge_connections"))
                return after.sessions <= sessionsBefore && after.connections <= connectionsBefore
            }
        } catch {
            XCTFail("before the viewer: \(sessionsBefore) sessions, \(connectionsBefore) connections; after cleanCache: \(after)")
            throw error
        }
        await viewer.shutdown()
        await service.shutdown()
        for host in hosts { await host.stop() }
    }
}
