import Edge
import EdgeServer
import Logging
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// Places every channel on edge A, and anywhere but the failed edge when asked to avoid one;
/// records what it was asked.
final class FailoverPlacement: ChannelPlacement {
    let edges: [EdgeAddress]
    private let asked = Mutex<[EdgeAddress?]>([])

    init(_ endpoints: [String]) {
        edges = endpoints.enumerated().map { EdgeAddress(id: "edge-\($0.offset)", endpoint: $0.element) }
    }

    /// While held, requests that avoid an edge (rejoins, moves) wait for ``release()``.
    private let gate = Mutex<[CheckedContinuation<Void, Never>]?>(nil)

    /// The failed edges named in each request (nil for a first join).
    var avoided: [EdgeAddress?] { asked.withLock { $0 } }

    func hold() { gate.withLock { $0 = [] } }

    /// Requests waiting at the gate.
    var held: Int { gate.withLock { $0?.count ?? 0 } }

    func release() {
        let waiting = gate.withLock { waiting in
            defer { waiting = nil }
            return waiting ?? []
        }
        for waiter in waiting { waiter.resume() }
    }

    func edge(for channel: String) async throws(ShowroomError) -> EdgeAddress {
        try await edge(for: channel, avoiding: nil)
    }

    func edge(for channel: String, avoiding failedEdge: EdgeAddress?) async throws(ShowroomError) -> EdgeAddress {
        asked.withLock { $0.append(failedEdge) }
        if failedEdge != nil {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let waits = gate.withLock { waiting in
                    guard waiting != nil else { return false }
                    waiting!.append(waiter)
                    return true
                }
                if !waits { waiter.resume() }
            }
        }
        return edges.first { $0 != failedEdge } ?? edges[0]
    }
}

/// Automatic rejoin with two in-process edges: host and viewers move from a failed edge to the
/// other one, by themselves.
final class RejoinTests: XCTestCase {
    private struct Viewer {
        let engine: ShowroomEngine
        let events: EventLog
        let video: DecodingVideoSink
        let audio: CountingAudioSink
        let connection: ChannelConnection
    }

    private var edges: [EdgeServer] = []
    private var engines: [ShowroomEngine] = []

    override func tearDown() async throws {
        for engine in engines { await engine.shutdown() }
        engines = []
        for edge in edges { await edge.stop() }
        edges = []
    }

    /// In-process edges, and a placement that answers the first one that is not avoided.
    private func startEdges(count: Int = 2) throws -> FailoverPlacement {
        edges = try (0..<count).map { index in
            try EdgeServer(
                configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate),
                logger: Logger(label: "edge-\(index)"))
        }
        return FailoverPlacement(edges.map(\.endpoint))
    }

    private func engine(_ placement: FailoverPlacement, camera: (any VideoSource)? = nil, microphone: (any AudioSource)? = nil,
                        requestTimeout: Duration = .seconds(1), rejoinWindow: Duration = .seconds(30)) async throws -> (ShowroomEngine, EventLog) {
        let engine = try await ShowroomEngine(
            configuration: EngineConfiguration(entry: .edge(placement.edges[0].endpoint), requestTimeout: requestTimeout, rejoinWindow: rejoinWindow),
            placement: placement)
        engines.append(engine)
        if let camera { await engine.setLocalVideoSource(camera) }
        if let microphone { await engine.setLocalAudioSource(microphone) }
        return (engine, EventLog(engine))
    }

    /// A host broadcasting on edge A and `count` viewers decoding it.
    private func startShow(_ placement: FailoverPlacement, viewers count: Int) async throws -> (ShowroomEngine, EventLog, [Viewer]) {
        let (host, hostEvents) = try await engine(
            placement, camera: TestPatternCamera(width: 160, height: 120, framesPerSecond: 15), microphone: ToneMicrophone())
        try await host.joinChannel(token: TestApp.token(channel: "show", uid: 1), channel: "show", uid: 1, options: .broadcaster)
        var viewers: [Viewer] = []
        for uid in UInt32(101)..<101 + UInt32(count) {
            let (engine, events) = try await engine(placement)
            let connection = ChannelConnection(channel: "show", uid: uid)
            let video = DecodingVideoSink()
            let audio = CountingAudioSink()
            try await engine.setupRemoteVideo(uid: 1, connection: connection, sink: video)
            try await engine.setupRemoteAudio(uid: 1, connection: connection, sink: audio)
            try await engine.joinChannelEx(token: TestApp.token(channel: "show", uid: uid), connection: connection, options: .audience)
            viewers.append(Viewer(engine: engine, events: events, video: video, audio: audio, connection: connection))
        }
        for viewer in viewers {
            try await eventually("viewer \(viewer.connection.uid) decodes the host on edge A") { viewer.video.statistics.countedFrames >= 5 }
        }
        let onA = try await edges[0].channel("show")
        XCTAssertEqual(onA?.broadcasters, [1])
        return (host, hostEvents, viewers)
    }

    /// Every engine reports reconnecting (edge lost), then connected (rejoined) with the rejoin
    /// event, in that order; returns the rejoin times.
    private func assertRejoined(_ recorders: [EventLog], _ connections: [ChannelConnection]) async throws -> [Duration] {
        var elapsed: [Duration] = []
        for (events, connection) in zip(recorders, connections) {
            let rejoinTime = try await events.first("rejoined \(connection)") {
                if case .rejoinedChannel(connection, let elapsed) = $0 { elapsed } else { nil }
            }
            elapsed.append(rejoinTime)
            let states = events.all.compactMap { event -> String? in
                guard case .connectionStateChanged(connection, let state, let reason) = event else { return nil }
                return "\(state)/\(reason)"
            }
            XCTAssertEqual(Array(states.suffix(2)), ["reconnecting/edgeLost", "connected/rejoinSucceeded"], "\(connection)")
        }
        return elapsed
    }

    func testKilledEdgesAudienceAndHostRejoinOnTheOtherEdge() async throws {
        let placement = try startEdges()
        let (host, hostEvents, viewers) = try await startShow(placement, viewers: 2)
        // The second viewer does not want the host's audio: that must survive the move.
        try await viewers[1].engine.unsubscribe(uid: 1, track: .audio, connection: viewers[1].connection)
        let before = viewers.map(\.video.statistics.countedFrames)

        // Edge A's sockets close with no goodbye (its heartbeat timeout, 5 s, is far away).
        let killed = ContinuousClock.now
        await edges[0].stop()

        let rejoinTimes = try await assertRejoined(
            [hostEvents] + viewers.map(\.events), [ChannelConnection(channel: "show", uid: 1)] + viewers.map(\.connection))
        for time in rejoinTimes { XCTAssertLessThan(time, .seconds(2), "rejoin took \(time)") }
        let audioAtRejoin = viewers[1].audio.statistics.frames
        for (index, viewer) in viewers.enumerated() {
            try await eventually("viewer \(viewer.connection.uid) decodes again on edge B", timeout: .seconds(5)) {
                viewer.video.statistics.countedFrames >= before[index] + 10
            }
            // The first decoded frame after the move is reported again.
            try await eventually("a second first-frame event") {
                viewer.events.all.filter { if case .firstRemoteVideoFrameDecoded(viewer.connection, 1, _, _, _) = $0 { true } else { false } }.count == 2
            }
            let video = viewer.video.statistics
            XCTAssertEqual(video.decodeErrors, 0, "the first frame on edge B is a keyframe")
            XCTAssertEqual(video.counterRegressions, 0)
        }
        let recovered = killed.duration(to: .now)
        XCTAssertLessThan(recovered, .seconds(5))
        // Ten video frames took 0.6 s: an audio subscription would have brought ~30 frames.
        XCTAssertLessThan(viewers[1].audio.statistics.frames - audioAtRejoin, 5, "the unsubscription was restored")
        XCTAssertGreaterThan(viewers[0].audio.statistics.frames, 0)

        let onB = try await edges[1].channel("show")
        XCTAssertEqual(onB?.broadcasters, [1], "the host is on edge B")
        XCTAssertEqual(onB?.audience.sorted(), [101, 102], "so is the audience")
        XCTAssertNotNil(onB?.track(uid: 1, kind: .video))
        XCTAssertEqual(placement.avoided.filter { $0 == placement.edges[0] }.count, 3, "each engine asked once, avoiding edge A")
        let hostConnections = await host.connections()
        XCTAssertEqual(hostConnections, [ChannelConnection(channel: "show", uid: 1)])
        let statistics = await host.statistics()
        XCTAssertEqual(statistics.rejoins, 1)
    }

    func testADrainingEdgesHostAndViewersMoveBeforeItClosesWithNoOfflineAndNoReconnecting() async throws {
        let placement = try startEdges()
        let (host, hostEvents, viewers) = try await startShow(placement, viewers: 2)
        let before = viewers.map(\.video.statistics.countedFrames)
        // Returns once every client has moved (the host, a broadcaster, stays to the end).
        let drainStarted = ContinuousClock.now
        await edges[0].drain(nodeID: "edge-0", within: .seconds(10))
        let drainTime = drainStarted.duration(to: .now)
        XCTAssertLessThan(drainTime, .seconds(10), "the edge closed once its clients had moved, not at its deadline")
        for (engine, events) in [(host, hostEvents)] + viewers.map({ ($0.engine, $0.events) }) {
            let statistics = await engine.statistics()
            XCTAssertEqual(statistics.moves, 1, "moved once")
            XCTAssertEqual(statistics.rejoins, 0, "moved, not rejoined")
            let states = events.all.compactMap { event -> ConnectionState? in
                if case .connectionStateChanged(_, let state, _) = event { state } else { nil }
            }
            XCTAssertEqual(states.last, .connected)
            XCTAssertFalse(states.contains(.reconnecting), "no reconnecting state: \(states)")
        }
        for (index, viewer) in viewers.enumerated() {
            XCTAssertFalse(viewer.events.all.contains { if case .userOffline = $0 { true } else { false } }, "viewer \(index) saw nobody go offline")
            try await eventually("viewer \(index) decodes on edge B") { viewer.video.statistics.countedFrames >= before[index] + 10 }
            XCTAssertEqual(viewer.video.statistics.decodeErrors, 0)
        }
        let left = try await edges[0].channel("show")
        XCTAssertNil(left, "nobody is left on the drained edge")
        let moved = try await edges[1].channel("show")
        XCTAssertEqual(moved?.broadcasters, [1])
        XCTAssertEqual(moved?.audience.sorted(), [101, 102])
    }

    func testTheDrainWaitsForASlowHostAndAViewerLeavingWhileItMovesLeavesNothingBehind() async throws {
        let placement = try startEdges()
        let (host, hostEvents, viewers) = try await startShow(placement, viewers: 2)
        placement.hold()
        let edgeA = edges[0]
        let drained = Task { await edgeA.drain(nodeID: "edge-0", within: .seconds(20)) }
        try await eventually("the three moves wait for their placement") { placement.held >= 3 }
        // One viewer leaves meanwhile; the edge still waits for the host (and the other viewer).
        try await viewers[0].engine.leaveChannelEx(viewers[0].connection)
        let before = viewers[1].video.statistics.countedFrames
        try await eventually("the viewer still decodes the host on the draining edge") { viewers[1].video.statistics.countedFrames >= before + 3 }
        placement.release()
        await drained.value
        let hostStatistics = await host.statistics()
        XCTAssertEqual(hostStatistics.moves, 1, "the host moved, it was not dropped")
        XCTAssertEqual(hostStatistics.rejoins, 0)
        XCTAssertFalse(hostEvents.all.contains { if case .connectionStateChanged(_, .reconnecting, _) = $0 { true } else { false } })
        let onB = try await edges[1].channel("show")
        XCTAssertEqual(onB?.broadcasters, [1])
        XCTAssertEqual(onB?.audience, [102], "the viewer who left is on neither edge")
        let leftStatistics = await viewers[0].engine.statistics()
        XCTAssertEqual(leftStatistics.moves, 0)
        let leftConnections = await viewers[0].engine.connections()
        XCTAssertEqual(leftConnections, [])
    }

    func testAClientOfADrainingEdgeWithNowhereToGoRejoinsWhenItCloses() async throws {
        // Both "edges" are the same one: the move cannot happen (the edge takes no joins while it
        // drains), the connection stays, and says so: the edge closes without waiting for its
        // deadline (a whole cluster going down does not wait for clients that cannot move).
        let placement = try startEdges(count: 1)
        let edge = edges[0]
        let (engine, events) = try await engine(placement, rejoinWindow: .seconds(1))
        let connection = try await engine.joinChannel(token: TestApp.token(channel: "show", uid: 3), channel: "show", uid: 3)
        let drainStarted = ContinuousClock.now
        await edge.drain(nodeID: "edge-0", within: .seconds(30))
        XCTAssertLessThan(drainStarted.duration(to: .now), .seconds(30), "closed before its deadline")
        _ = try await events.first("reconnecting once the edge closed") {
            if case .connectionStateChanged(connection, .reconnecting, .edgeLost) = $0 { true } else { nil }
        }
        let statistics = await engine.statistics()
        XCTAssertEqual(statistics.moves, 0)
    }

    func testRejoinGivesUpAfterItsWindowWhenNoEdgeTakesIt() async throws {
        // Both "edges" are the same one, which dies: every retry fails.
        let placement = try startEdges(count: 1)
        let edge = edges[0]
        // Each attempt waits 200 ms for the dead edge: several fit in the window.
        let (engine, events) = try await engine(placement, requestTimeout: .milliseconds(200), rejoinWindow: .seconds(1))
        let connection = try await engine.joinChannel(token: TestApp.token(channel: "show", uid: 3), channel: "show", uid: 3)
        await edge.stop()
        let started = ContinuousClock.now
        _ = try await events.first("reconnecting, edge lost") {
            if case .connectionStateChanged(connection, .reconnecting, .edgeLost) = $0 { true } else { nil }
        }
        XCTAssertLessThan(started.duration(to: .now), .seconds(1), "the broken connection is noticed at once")
        _ = try await events.first(within: .seconds(4), "failed after the rejoin window") {
            if case .connectionStateChanged(connection, .failed, .edgeLost) = $0 { true } else { nil }
        }
        _ = try await events.first("connection closed") {
            if case .connectionClosed(connection, _) = $0 { true } else { nil }
        }
        XCTAssertGreaterThan(placement.avoided.count, 2, "it retried (first join, then each attempt)")
        let connections = await engine.connections()
        XCTAssertEqual(connections, [])
    }
}
