import Edge
import MediaCodecs
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// Engines against an in-process edge on loopback: real sockets, real VP8 and Opus.
final class EngineEndToEndTests: XCTestCase {
    private func withStage(settings: EdgeSettings = EdgeSettings(), _ body: (TestStage) async throws -> Void) async throws {
        let stage = try TestStage(settings: settings)
        do {
            try await body(stage)
        } catch {
            await stage.stop()
            throw error
        }
        await stage.stop()
    }

    func testHostBroadcastsToThreeViewers() async throws {
        try await withStage { stage in
            let (host, hostEvents) = try await stage.engine(
                camera: TestPatternCamera(width: 160, height: 120, framesPerSecond: 15), microphone: ToneMicrophone())
            let hostConnection = try await host.joinChannel(
                token: TestApp.token(channel: "show", uid: 1), channel: "show", uid: 1, options: .broadcaster)
            XCTAssertEqual(hostConnection, ChannelConnection(channel: "show", uid: 1))
            _ = try await hostEvents.first("host joined") { if case .joined(hostConnection, _) = $0 { true } else { nil } }

            var viewers: [(engine: ShowroomEngine, events: EventLog, video: DecodingVideoSink, audio: DecodingAudioSink, connection: ChannelConnection)] = []
            for uid in UInt32(101)...103 {
                let (engine, events) = try await stage.engine()
                let connection = ChannelConnection(channel: "show", uid: uid)
                let video = DecodingVideoSink()
                let audio = DecodingAudioSink()
                // Before the join, so the GOP burst the join brings reaches the decoder.
                try await engine.setupRemoteVideo(uid: 1, connection: connection, sink: video)
                try await engine.setupRemoteAudio(uid: 1, connection: connection, sink: audio)
                let joined = try await engine.joinChannelEx(
                    token: TestApp.token(channel: "show", uid: uid), connection: connection, options: .audience)
                XCTAssertEqual(joined, connection)
                viewers.append((engine, events, video, audio, connection))
            }

            for viewer in viewers {
                _ = try await viewer.events.first("user-joined of the host") {
                    if case .userJoined(viewer.connection, 1) = $0 { true } else { nil }
                }
                let (width, height) = try await viewer.events.first("first decoded frame") {
                    if case .firstRemoteVideoFrameDecoded(viewer.connection, 1, let w, let h, _) = $0 { (w, h) } else { nil }
                }
                XCTAssertEqual(width, 160)
                XCTAssertEqual(height, 120)
            }
            for viewer in viewers {
                try await eventually("10 frames decoded in order") {
                    viewer.video.statistics.countedFrames >= 10
                }
                let video = viewer.video.statistics
                XCTAssertEqual(video.counterRegressions, 0, "frame counters must increase")
                XCTAssertEqual(video.decodeErrors, 0)
                XCTAssertEqual(video.received.sequenceGaps, 0)
                try await eventually("audio decoded") { viewer.audio.statistics.framesDecoded >= 10 }
                XCTAssertGreaterThan(viewer.audio.statistics.lastLevel, 50, "a half-scale tone")
                XCTAssertEqual(viewer.audio.statistics.decodeErrors, 0)
            }

            // The host's first frame of each kind was reported once, timed from its join.
            let published = hostEvents.all.compactMap { event -> ShowroomKit.TrackKind? in
                if case .firstLocalFramePublished(hostConnection, let track, _) = event { track } else { nil }
            }
            XCTAssertEqual(published.sorted { "\($0)" < "\($1)" }, [.audio, .video])

            // Volume indication names the host.
            try await viewers[0].engine.enableAudioVolumeIndication(interval: .milliseconds(200))
            let speakers = try await viewers[0].events.first("volume indication with the host") {
                if case .volumeIndication(_, let speakers) = $0, speakers.contains(where: { $0.uid == 1 && $0.volume > 0 }) { speakers } else { nil }
            }
            XCTAssertEqual(speakers.first?.uid, 1)

            // Stream messages arrive in order.
            for i in 1...5 {
                let sequence = try await host.sendStreamMessage(streamID: 7, data: Array("message \(i)".utf8))
                XCTAssertEqual(sequence, UInt32(i))
            }
            for viewer in viewers {
                try await eventually("five stream messages") {
                    viewer.events.all.filter { if case .streamMessage = $0 { true } else { false } }.count == 5
                }
                let messages = viewer.events.all.compactMap { event -> (UInt32, UInt32, String)? in
                    if case .streamMessage(_, let uid, let stream, let sequence, let data) = event {
                        (uid, stream, String(decoding: data, as: UTF8.self) + "#\(sequence)")
                    } else { nil }
                }
                XCTAssertEqual(messages.map(\.2), (1...5).map { "message \($0)#\($0)" })
                XCTAssertTrue(messages.allSatisfy { $0.0 == 1 && $0.1 == 7 })
            }

            // Audience members are invisible to each other and to the host.
            for events in viewers.map(\.events) + [hostEvents] {
                XCTAssertFalse(events.all.contains { if case .userJoined(_, let uid) = $0 { uid > 100 } else { false } })
            }
            let sent = await host.statistics()
            XCTAssertGreaterThan(sent.videoFramesSent, 10)
            XCTAssertGreaterThan(sent.keyframesSent, 0)
            XCTAssertGreaterThan(sent.audioFramesSent, 10)

            // The host mutes its camera: the viewers see the track unpublished. Then it leaves.
            try await host.muteLocalVideoStream(true)
            _ = try await viewers[0].events.first("video unpublished") {
                if case .remoteTrackUnpublished(_, 1, .video) = $0 { true } else { nil }
            }
            try await host.leaveChannel()
            _ = try await viewers[1].events.first("host offline, quit") {
                if case .userOffline(_, 1, .quit) = $0 { true } else { nil }
            }
            let remaining = await host.connections()
            XCTAssertEqual(remaining, [])
        }
    }

    /// The custom encoded video track: frames the app encoded go out untouched and decode; a
    /// subscriber with nothing to start from makes the engine ask the app for a keyframe; bad
    /// frames are refused with their codes.
    func testAppEncodedVideoGoesOutUntouchedAndKeyframesAreAskedFor() async throws {
        var settings = EdgeSettings()
        settings.limits.maxFrameBytes = 40_000
        try await withStage(settings: settings) { stage in
            // One GOP of real VP8, encoded up front as an app (or a recording) would have it.
            let encoder = try VideoEncoder(configuration: .init(
                codec: .vp8, width: 160, height: 120, framesPerSecond: 15, targetBitrateKbps: 300, keyframeInterval: 1000))
            var pattern = TestPatternSource(width: 160, height: 120)
            var gop: [ExternalEncodedVideoFrame] = []
            for _ in 0..<20 {
                gop += try encoder.encode(pattern.nextFrame()).map { ExternalEncodedVideoFrame($0, width: 160, height: 120) }
            }
            XCTAssertEqual(gop.map(\.isKeyframe), [true] + Array(repeating: false, count: gop.count - 1))

            let (host, hostEvents) = try await stage.engine()
            await assertFails(.invalidArgument, "a push before the source is set") {
                try await host.pushExternalEncodedVideoFrame(gop[0])
            }
            await host.setExternalEncodedVideoSource(true)
            let hostConnection = try await host.joinChannel(
                token: TestApp.token(channel: "encoded", uid: 1), channel: "encoded", uid: 1, options: .broadcaster)
            _ = try await hostEvents.first("host joined") { if case .joined(hostConnection, _) = $0 { true } else { nil } }
            // Starting to send, the app is asked for a keyframe at once: the first frame anyone sees must decode.
            try await eventually("a keyframe asked for as the host starts sending") { Self.keyframeRequests(hostEvents) >= 1 }
            let askedAtStart = Self.keyframeRequests(hostEvents)
            await assertFails(.invalidArgument, "an empty frame") {
                try await host.pushExternalEncodedVideoFrame(ExternalEncodedVideoFrame(data: [], isKeyframe: true, width: 160, height: 120))
            }
            await assertFails(.invalidArgument, "a frame without a size") {
                try await host.pushExternalEncodedVideoFrame(ExternalEncodedVideoFrame(data: gop[0].data, isKeyframe: true, width: 0, height: 120))
            }
            await assertFails(.tooLarge, "a frame over the edge's limit") {
                try await host.pushExternalEncodedVideoFrame(
                    ExternalEncodedVideoFrame(data: [UInt8](repeating: 1, count: 50_000), isKeyframe: true, width: 160, height: 120))
            }
            // A delta first: the track is live but has no keyframe a newcomer could start from.
            let sentTo = try await host.pushExternalEncodedVideoFrame(gop[5])
            XCTAssertEqual(sentTo, 1)

            let (decoding, decodingEvents) = try await stage.engine()
            let decodingConnection = ChannelConnection(channel: "encoded", uid: 101)
            let decoder = DecodingVideoSink()
            try await decoding.setupRemoteVideo(uid: 1, connection: decodingConnection, sink: decoder)
            let (recording, recordingEvents) = try await stage.engine()
            let recordingConnection = ChannelConnection(channel: "encoded", uid: 102)
            let received = ReceivedPayloads()
            try await recording.setupRemoteVideo(uid: 1, connection: recordingConnection, sink: ClosureVideoSink { frame in
                received.append(Array(frame.payload), keyframe: frame.isKeyframe)
                return .received
            })
            for (engine, connection, events) in [(decoding, decodingConnection, decodingEvents), (recording, recordingConnection, recordingEvents)] {
                _ = try await engine.joinChannelEx(
                    token: TestApp.token(channel: "encoded", uid: connection.uid), connection: connection, options: .audience)
                _ = try await events.first("waiting for the host's keyframe") {
                    if case .remoteVideoStateChanged(connection, 1, .starting, _) = $0 { true } else { nil }
                }
            }
            // A subscriber with nothing to start from (the track began on a delta frame) asks again.
            try await eventually("a keyframe asked for by a subscriber") { Self.keyframeRequests(hostEvents) > askedAtStart }

            for frame in gop { try await host.pushExternalEncodedVideoFrame(frame) }
            try await eventually("every frame decoded") { decoder.statistics.framesDecoded >= gop.count }
            XCTAssertEqual(decoder.statistics.decodeErrors, 0)
            XCTAssertEqual(decoder.statistics.counterRegressions, 0)
            try await eventually("every frame recorded") { received.count >= gop.count }
            XCTAssertEqual(received.payloads, gop.map(\.data), "byte for byte, in order")
            XCTAssertEqual(received.keyframes, gop.map(\.isKeyframe))
        }
    }

    private static func keyframeRequests(_ events: EventLog) -> Int {
        events.all.filter { if case .keyframeRequested = $0 { true } else { false } }.count
    }

    func testAudiencePublishingIsRefusedWithAnErrorEvent() async throws {
        try await withStage { stage in
            let (viewer, events) = try await stage.engine(camera: TestPatternCamera(width: 64, height: 64, framesPerSecond: 15))
            // An audience member that explicitly asks to publish sends, and the edge refuses it.
            try await viewer.joinChannel(
                token: TestApp.token(channel: "show", uid: 5), channel: "show", uid: 5,
                options: ChannelMediaOptions(role: .audience, publishVideo: true))
            let error = try await events.first("ROLE_FORBIDS_PUBLISH") {
                if case .error(_, let error) = $0, error.code == .roleForbidsPublish { error } else { nil }
            }
            XCTAssertEqual(error.code.rawValue, 3001)
        }
    }

    func testJoinFailuresCarryTheEdgesCode() async throws {
        try await withStage { stage in
            let (engine, events) = try await stage.engine()
            do {
                try await engine.joinChannel(
                    token: TestApp.token(channel: "show", uid: 9, certificate: "00000000000000000000000000000000"),
                    channel: "show", uid: 9)
                XCTFail("a badly signed token was accepted")
            } catch let error as ShowroomError {
                XCTAssertEqual(error.code, .tokenBadSignature)
            }
            _ = try await events.first("failed state") {
                if case .connectionStateChanged(_, .failed, .joinFailed(let error)) = $0, error.code == .tokenBadSignature { true } else { nil }
            }
            // The same engine joins fine afterwards; a second join of the channel is refused locally.
            try await engine.joinChannel(token: TestApp.token(channel: "show", uid: 9), channel: "show", uid: 9)
            do {
                try await engine.joinChannelEx(token: TestApp.token(channel: "show", uid: 9), connection: ChannelConnection(channel: "show", uid: 9))
                XCTFail("joined twice")
            } catch let error as ShowroomError {
                XCTAssertEqual(error.code, .alreadyJoined)
            }
            do {
                try await engine.leaveChannelEx(ChannelConnection(channel: "elsewhere", uid: 9))
                XCTFail("left a channel never joined")
            } catch let error as ShowroomError {
                XCTAssertEqual(error.code, .notJoined)
            }
        }
    }

    func testUnreachableEdgeTimesOut() async throws {
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(
            entry: .edge("tcp://127.0.0.1:1"), requestTimeout: .milliseconds(300)))
        let started = ContinuousClock.now
        do {
            try await engine.joinChannel(token: "007x", channel: "show", uid: 1)
            XCTFail("joined nowhere")
        } catch {
            XCTAssertEqual(error.code, .deadlineExceeded)
        }
        XCTAssertLessThan(started.duration(to: .now), .seconds(2))
        await engine.shutdown()
    }

    func testEnginesShareOneLoopAndChannelsLiveOnTheirEdges() async throws {
        try await withStage { stage in
            let loop = try EngineLoop(name: "shared")
            let (host, _) = try await stage.engine(
                camera: TestPatternCamera(width: 64, height: 64, framesPerSecond: 15), loop: loop)
            let (viewer, viewerEvents) = try await stage.engine(loop: loop)
            let counter = CountingVideoSink()
            try await host.joinChannel(token: TestApp.token(channel: "a", uid: 1), channel: "a", uid: 1, options: .broadcaster)
            // Two channels on one session.
            try await host.joinChannelEx(token: TestApp.token(channel: "b", uid: 1), connection: ChannelConnection(channel: "b", uid: 1), options: .broadcaster)
            try await viewer.setupRemoteVideo(uid: 1, connection: ChannelConnection(channel: "b", uid: 2), sink: counter)
            try await viewer.joinChannelEx(token: TestApp.token(channel: "b", uid: 2), connection: ChannelConnection(channel: "b", uid: 2))
            try await eventually("frames counted") { counter.statistics.frames >= 10 }
            XCTAssertEqual(counter.statistics.sequenceGaps, 0)
            XCTAssertGreaterThan(counter.statistics.keyframes, 0)
            let latency = try XCTUnwrap(counter.statistics.meanLatency)
            XCTAssertLessThan(latency, .seconds(1))
            // Every frame carries its send time, stamped after encoding: transit <= capture-to-receive.
            let received = counter.statistics  // one snapshot: frames keep coming
            XCTAssertEqual(received.transitFrames, received.frames)
            let transit = try XCTUnwrap(received.meanTransit)
            XCTAssertGreaterThanOrEqual(transit, .zero)
            XCTAssertLessThanOrEqual(transit, latency)
            let connections = await host.connections()
            XCTAssertEqual(connections.map(\.channel), ["a", "b"])
            let channels = try await stage.edge.channelNames()
            XCTAssertEqual(channels, ["a", "b"])
            _ = viewerEvents
            for engine in stage.engines { await engine.shutdown() }
            await loop.shutdown()
        }
    }

    func testQuietSessionStaysUpAndAStoppedEdgeIsNoticedAtOnce() async throws {
        // The edge's session answer sets the engine's heartbeat: 100 ms, gone after 5 s of silence.
        var settings = EdgeSettings()
        settings.heartbeatInterval = .milliseconds(100)
        settings.heartbeatTimeout = .seconds(5)
        try await withStage(settings: settings) { stage in
            let (engine, events) = try await stage.engine(requestTimeout: .milliseconds(300), rejoinWindow: .seconds(1))
            let connection = try await engine.joinChannel(token: TestApp.token(channel: "show", uid: 3), channel: "show", uid: 3)
            // Heartbeats keep a quiet session alive well past several heartbeat intervals.
            try await Task.sleep(for: .milliseconds(600))  // the quiet window observed (six heartbeats), not a wait for an event
            XCTAssertFalse(events.all.contains { if case .connectionStateChanged(_, .reconnecting, _) = $0 { true } else { false } })
            await stage.stopEdge()
            let stopped = ContinuousClock.now
            // The broken connection is noticed long before the heartbeat timeout.
            _ = try await events.first(within: .seconds(3), "reconnecting, edge lost") {
                if case .connectionStateChanged(connection, .reconnecting, .edgeLost) = $0 { true } else { nil }
            }
            XCTAssertLessThan(stopped.duration(to: .now), .seconds(2))
            // The only edge stays gone: the rejoin gives up after its window.
            _ = try await events.first(within: .seconds(4), "failed, edge lost") {
                if case .connectionStateChanged(connection, .failed, .edgeLost) = $0 { true } else { nil }
            }
            _ = try await events.first("connection closed") {
                if case .connectionClosed(connection, _) = $0 { true } else { nil }
            }
            let connections = await engine.connections()
            XCTAssertEqual(connections, [])
        }
    }
}

/// Payloads a sink received, in order.
private final class ReceivedPayloads: Sendable {
    private let state = Mutex<(payloads: [[UInt8]], keyframes: [Bool])>(([], []))
    func append(_ payload: [UInt8], keyframe: Bool) { state.withLock { $0.payloads.append(payload); $0.keyframes.append(keyframe) } }
    var payloads: [[UInt8]] { state.withLock { $0.payloads } }
    var keyframes: [Bool] { state.withLock { $0.keyframes } }
    var count: Int { state.withLock { $0.payloads.count } }
}
