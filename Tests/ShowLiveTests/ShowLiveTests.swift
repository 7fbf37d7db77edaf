import Edge
import Foundation
import MediaCodecs
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import XCTest
import ZeroMQ

/// Show live against real processes: a coordinator and two edges started through
/// `deploy/cluster.sh`, clients through the SDK (and a bare DEALER where a test needs a client
/// that misbehaves), real Opus and VP8 from libopus and libvpx.
final class ShowLiveTests: SharedClusterTestCase {
    // MARK: - Media

    func testTwentyAudienceMembersReceiveEveryFrameInOrderAndDecodeIt() async throws {
        let channel = "live-twenty"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster, camera: true, microphone: true)
        let loops = try [EngineLoop(name: "audience-a"), EngineLoop(name: "audience-b")]
        var audience: [(client: TestClient, video: DecodingVideoSink, audio: DecodingAudioSink)] = []
        for i in 0..<20 {
            let video = DecodingVideoSink()
            let audio = DecodingAudioSink()
            let client = try await TestClient.join(
                channel, uid: 100 + UInt32(i), role: .audience, loop: loops[i % 2], videoFrom: 1, videoSink: video, audioSink: audio)
            audience.append((client, video, audio))
        }
        for member in audience {
            try await member.client.log.wait("user joined") { if case .userJoined(_, 1) = $0 { true } else { false } }
        }
        // Everyone decodes a good run of frames (about 2 s at 15 fps after the last join).
        try await eventually("30 decoded video frames at every audience member", timeout: .seconds(20)) {
            audience.allSatisfy { $0.video.statistics.framesDecoded >= 30 && $0.audio.statistics.framesDecoded >= 50 }
        }
        await host.stop()
        for member in audience {
            let video = member.video.statistics
            let audio = member.audio.statistics
            XCTAssertEqual(video.received.sequenceGaps, 0, "video frames lost at \(member.client.connection)")
            XCTAssertEqual(video.counterRegressions, 0, "video frames out of order at \(member.client.connection)")
            XCTAssertEqual(video.counterGaps, 0, "decoded pictures skipped at \(member.client.connection)")
            XCTAssertEqual(video.decodeErrors, 0)
            XCTAssertEqual(video.framesDecoded, video.received.frames, "every received video frame decodes")
            XCTAssertEqual(audio.received.sequenceGaps, 0, "audio frames lost at \(member.client.connection)")
            XCTAssertEqual(audio.decodeErrors, 0)
            XCTAssertEqual(video.width, 160)
            XCTAssertEqual(video.height, 120)
            await member.client.stop()
        }
        for loop in loops { await loop.shutdown() }
    }

    func testFiveChannelsSpreadOverBothEdges() async throws {
        let channels = (1...5).map { "spread-\($0)" }
        var hosts: [TestClient] = []
        var viewers: [(TestClient, DecodingVideoSink)] = []
        for channel in channels {
            hosts.append(try await TestClient.join(channel, uid: 1, role: .broadcaster, camera: true))
            let sink = DecodingVideoSink()
            viewers.append((try await TestClient.join(channel, uid: 2, role: .audience, videoFrom: 1, videoSink: sink), sink))
        }
        for (viewer, _) in viewers {
            try await viewer.log.wait("first frame") { if case .firstRemoteVideoFrameDecoded = $0 { true } else { false } }
        }
        // Each edge hosts some of them, and the membership says so.
        // A probe per look: its sockets stay on the thread that made them, and an async wait may
        // resume on another.
        try await eventually("both edges report their channels", timeout: .seconds(10)) {
            guard let view = ClusterProbe.firstStatus(seeds: [SharedCluster.seed], credentials: nil) else { return false }
            let counts = ["edge-1", "edge-2"].map { Int(view.member($0)?.load.channels ?? 0) }
            return counts.allSatisfy { $0 >= 1 } && counts.reduce(0, +) >= 5
        }
        let view = try XCTUnwrap(ClusterProbe.firstStatus(seeds: [SharedCluster.seed], credentials: nil))
        print("channels per edge: edge-1 \(view.member("edge-1")!.load.channels), edge-2 \(view.member("edge-2")!.load.channels)")
        for client in hosts + viewers.map(\.0) { await client.stop() }
    }

    func testAJoinerMidGOPDecodesBeforeThePublishersNextKeyframe() async throws {
        let channel = "live-gop"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster, camera: true, gop: .seconds(3))
        // Join a few frames after a keyframe, so the next one is about 2.5 s away.
        let first = await host.engine.statistics().keyframesSent
        try await eventually("a keyframe") { await host.engine.statistics().keyframesSent > first }
        let keyframe = await host.engine.statistics()
        try await eventually("5 frames after the keyframe") {
            await host.engine.statistics().videoFramesSent >= keyframe.videoFramesSent + 5
        }
        let sink = DecodingVideoSink()
        let viewer = try await TestClient.join(channel, uid: 2, role: .audience, videoFrom: 1, videoSink: sink)
        let event = try await viewer.log.wait("first frame") { if case .firstRemoteVideoFrameDecoded = $0 { true } else { false } }
        let keyframesAtFirstFrame = await host.engine.statistics().keyframesSent
        guard case .firstRemoteVideoFrameDecoded(_, _, _, _, let elapsed) = event else { return XCTFail() }
        print("mid-GOP join → first decoded frame: \(elapsed)")
        XCTAssertEqual(keyframesAtFirstFrame, keyframe.keyframesSent, "the first frame decoded before the publisher's next keyframe")
        XCTAssertLessThan(elapsed, .seconds(1))
        try await eventually("the cached keyframe and the deltas since decoded", timeout: .seconds(1)) {
            sink.statistics.framesDecoded >= 6
        }
        XCTAssertEqual(sink.statistics.decodeErrors, 0)
        await viewer.stop()
        await host.stop()
    }

    func testASinkSetAfterUserJoinedDecodesTheCachedGOPWithoutWaitingForTheNextKeyframe() async throws {
        // The seeds' order of calls: join, then setupRemoteVideo when userJoined arrives.
        let channel = "live-late-sink"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster, camera: true, gop: .seconds(3))
        let first = await host.engine.statistics().keyframesSent
        try await eventually("a keyframe") { await host.engine.statistics().keyframesSent > first }
        let keyframe = await host.engine.statistics()
        try await eventually("5 frames after the keyframe") {
            await host.engine.statistics().videoFramesSent >= keyframe.videoFramesSent + 5
        }
        let viewer = try await TestClient.join(channel, uid: 2, role: .audience)
        _ = try await viewer.log.wait("the host announced") { if case .userJoined(_, 1) = $0 { true } else { false } }
        // The edge's cached GOP has arrived by now, before any sink was set.
        try await eventually("the cached frames arrived") { await viewer.engine.statistics().videoFramesReceived >= 6 }
        let sink = DecodingVideoSink()
        try await viewer.engine.setupRemoteVideo(uid: 1, connection: viewer.connection, sink: sink)
        let event = try await viewer.log.wait("first frame") { if case .firstRemoteVideoFrameDecoded = $0 { true } else { false } }
        let keyframesAtFirstFrame = await host.engine.statistics().keyframesSent
        guard case .firstRemoteVideoFrameDecoded(_, _, _, _, let elapsed) = event else { return XCTFail() }
        print("join → first decoded frame with the sink set after userJoined: \(elapsed)")
        XCTAssertEqual(keyframesAtFirstFrame, keyframe.keyframesSent, "decoded from the kept GOP, before the publisher's next keyframe")
        XCTAssertEqual(sink.statistics.decodeErrors, 0)
        XCTAssertGreaterThanOrEqual(sink.statistics.framesDecoded, 6, "the keyframe and the deltas since, at once")
        await viewer.stop()
        await host.stop()
    }

    func testAnAudienceMembersFramesAreRefusedAndReachNobody() async throws {
        let channel = "live-intruder"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster)
        let sink = CountingVideoSink()
        let watcher = try await TestClient.join(channel, uid: 3, role: .audience, videoFrom: 2, videoSink: sink)
        let token = try TestApp.token(channel: channel, uid: 2, role: .subscriber)
        // Placement is asked as a client does, with the token it joins with.
        let edge = try await host.engine.placement.edge(
            for: channel, avoiding: nil, joiningAs: PlacementCredentials(uid: 2, token: token))
        let intruder = try await RawClientThread(endpoint: edge.endpoint)
        let error = try await intruder.run { client -> ShowroomError? in
            try client.open()
            if let failure = try client.join(channel, uid: 2, token: token, role: .audience).failure { return failure }
            for i in 0..<5 {
                try client.publish(channel: channel, uid: 2, track: .video, sequence: UInt32(i), keyframe: i == 0, payload: [UInt8](repeating: 7, count: 300))
            }
            let refusal = try client.waitForEvent("refusal") { if case .error = $0 { true } else { false } }
            guard case .error(let error, _, _) = refusal else { return nil }
            return error
        }
        await intruder.stop()
        XCTAssertEqual(error?.code, .roleForbidsPublish)
        // A round trip on the watcher's session: anything forwarded would have arrived before it.
        try await watcher.engine.enableAudioVolumeIndication(interval: .milliseconds(200))
        XCTAssertEqual(sink.statistics.frames, 0)
        XCTAssertFalse(host.log.all.contains { if case .userJoined(_, 2) = $0 { true } else { false } }, "audience members are invisible")
        await watcher.stop()
        await host.stop()
    }

    // MARK: - Tokens and roles

    func testBadTokensAreRefusedWithDistinctCodes() async throws {
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([SharedCluster.seed])))
        func code(_ token: String, channel: String = "live-tokens", uid: UInt32 = 5) async -> ShowroomError.Code? {
            do {
                try await engine.joinChannel(token: token, channel: channel, uid: uid, options: .audience)
                return nil
            } catch {
                return error.code
            }
        }
        let forged = try TestApp.token(channel: "live-tokens", uid: 5, certificate: "0123456789abcdef0123456789abcdef")
        let expired = try TestApp.token(channel: "live-tokens", uid: 5, expire: 60, issuedAgo: 600)
        let otherChannel = try TestApp.token(channel: "elsewhere", uid: 5)
        let otherUID = try TestApp.token(channel: "live-tokens", uid: 6)
        let now = UInt32(Date().timeIntervalSince1970)
        let noJoin = try RTCTokenBuilder.buildToken(
            appID: TestApp.appID, appCertificate: TestApp.certificate, channelName: "live-tokens", uid: 5, tokenExpire: 600,
            joinChannelPrivilegeExpire: 1, publishAudioPrivilegeExpire: 600, publishVideoPrivilegeExpire: 600,
            publishDataStreamPrivilegeExpire: 600, issueTs: now - 10)
        let codes: [ShowroomError.Code?] = [
            await code("007not-a-token"), await code(forged), await code(expired), await code(otherChannel),
            await code(otherUID), await code(noJoin),
        ]
        XCTAssertEqual(codes, [.tokenMalformed, .tokenBadSignature, .tokenExpired, .tokenChannelMismatch, .tokenUidMismatch, .tokenMissingPrivilege])
        // A good token still gets in: the refusals left nothing behind.
        let good = await code(try TestApp.token(channel: "live-tokens", uid: 5, role: .subscriber))
        XCTAssertNil(good)
        await engine.shutdown()
    }

    func testAnAudienceMemberSwitchingToBroadcasterPublishesAndIsSeen() async throws {
        let channel = "live-cohost"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster, camera: true)
        let sink = DecodingVideoSink()
        let watcher = try await TestClient.join(channel, uid: 3, role: .audience, videoFrom: 2, videoSink: sink)
        // The app server gave the guest a publisher token: it may go on mic.
        let guest = try await TestClient.join(channel, uid: 2, role: .audience, camera: true, tokenRole: .publisher)
        try await watcher.log.wait("host joined") { if case .userJoined(_, 1) = $0 { true } else { false } }
        XCTAssertFalse(watcher.log.all.contains { if case .userJoined(_, 2) = $0 { true } else { false } })

        // As the seeds do it: one updateChannelEx with the broadcaster role and the tracks to publish.
        try await guest.engine.updateChannelEx(options: ChannelMediaOptions(role: .broadcaster, publishAudio: true, publishVideo: true))
        try await watcher.log.wait("guest joined") { if case .userJoined(_, 2) = $0 { true } else { false } }
        try await host.log.wait("guest joined at the host") { if case .userJoined(_, 2) = $0 { true } else { false } }
        try await watcher.log.wait("guest's first frame") { if case .firstRemoteVideoFrameDecoded(_, 2, _, _, _) = $0 { true } else { false } }
        XCTAssertGreaterThan(sink.statistics.framesDecoded, 0)

        try await guest.engine.setClientRole(.audience)
        try await watcher.log.wait("guest stepped down") {
            if case .userOffline(_, 2, .becameAudience) = $0 { true } else { false }
        }
        for client in [guest, watcher, host] { await client.stop() }
    }

    // MARK: - Slow and vanished clients

    func testASubscriberThatStopsReadingDelaysNobodyAndRestartsAtAKeyframe() async throws {
        let channel = "live-stall"
        let host = try await TestClient.join(
            channel, uid: 1, role: .broadcaster, camera: true, fps: 30, bitrateKbps: 1500, width: 320, height: 240)
        let steady = DecodingVideoSink()
        let other = try await TestClient.join(channel, uid: 2, role: .audience, videoFrom: 1, videoSink: steady)
        let token = try TestApp.token(channel: channel, uid: 9, role: .subscriber)
        let edge = try await host.engine.placement.edge(
            for: channel, avoiding: nil, joiningAs: PlacementCredentials(uid: 9, token: token))
        // A bare client with small buffers, so that not reading backs up to the edge quickly.
        let stalled = try await RawClientThread(endpoint: edge.endpoint, receiveHighWaterMark: 4, receiveBufferBytes: 16 << 10)
        let joined = try await stalled.run { client -> Bool in
            try client.open()
            guard try client.join(channel, uid: 9, token: token, role: .audience).failure == nil else { return false }
            try client.waitForFrames(10)
            return true
        }
        XCTAssertTrue(joined)

        // Stop reading (heartbeats still go out, as a client's would) until the edge skips it.
        let heartbeat = { @Sendable (client: RawEdgeClient) throws in
            try client.send(EdgeCodec.envelope(request: .heartbeat(clientTime: 0), id: 0))
        }
        let stallStarted = ContinuousClock.now
        let requestsBefore = await host.engine.statistics().keyframeRequests
        try await eventually("the stalled subscriber to be skipped", timeout: .seconds(20)) {
            try await stalled.run(heartbeat)
            return await host.engine.statistics().keyframeRequests > requestsBefore
        }
        print("stalled subscriber skipped after \(stallStarted.duration(to: .now))")
        let before = steady.statistics
        // Let the others run on while it stays stalled, then read again.
        let resumeAt = await host.engine.statistics().videoFramesSent + 15
        try await eventually("15 more frames published") {
            try await stalled.run(heartbeat)
            return await host.engine.statistics().videoFramesSent >= resumeAt
        }
        let (recovered, gaps, allKeyframes) = try await stalled.run { client -> (Bool, Int, Bool) in
            try client.drain(for: .milliseconds(300))
            let recovery = try? client.waitForEvent(timeout: .seconds(10), "recovery") {
                if case .remoteVideoStateChanged(_, .decoding, .networkRecovery) = $0 { true } else { false }
            }
            try client.waitForFrames(client.frames.count + 5)
            // Where delivery resumed, it resumed at a keyframe: after a gap, the next frame is one.
            let video = client.frames.filter { $0.header.track == .video }
            let gaps = zip(video, video.dropFirst()).filter { $1.header.sequence != $0.header.sequence &+ 1 }
            return (recovery != nil, gaps.count, gaps.allSatisfy { $1.header.keyframe })
        }
        await stalled.stop()
        XCTAssertTrue(recovered, "the edge reported the recovery")
        XCTAssertGreaterThan(gaps, 0, "the stalled subscriber skipped frames")
        XCTAssertTrue(allKeyframes, "after each gap delivery resumed at a keyframe")
        // The steady subscriber missed nothing meanwhile.
        let after = steady.statistics
        XCTAssertGreaterThan(after.framesDecoded, before.framesDecoded + 10)
        XCTAssertEqual(after.received.sequenceGaps, 0)
        XCTAssertEqual(after.counterGaps, 0)
        await other.stop()
        await host.stop()
    }

    func testAKilledClientProcessGoesOfflineDroppedWithinTheHeartbeatTimeout() async throws {
        let channel = "live-killed"
        let watcher = try await TestClient.join(channel, uid: 2, role: .audience)
        let hostProcess = try ManagedProcess("showroomctl", [
            "client", "--seed", SharedCluster.seed, "--channel", channel, "--uid", "1", "--role", "broadcaster",
            "--app-id", TestApp.appID, "--app-cert", TestApp.certificate,
        ])
        defer { hostProcess.kill(signal: SIGKILL) }
        _ = try hostProcess.waitForLine(timeout: .seconds(20)) { $0.hasPrefix("joined ") }
        try await watcher.log.wait("host joined") { if case .userJoined(_, 1) = $0 { true } else { false } }

        let killed = ContinuousClock.now
        hostProcess.kill(signal: SIGKILL)
        try await watcher.log.wait("host offline", timeout: .seconds(8)) {
            if case .userOffline(_, 1, .dropped) = $0 { true } else { false }
        }
        let detection = killed.duration(to: .now)
        print("killed host seen offline (dropped) after \(detection)")
        XCTAssertLessThan(detection, .milliseconds(5500), "within the edge's 5 s heartbeat timeout")
        await watcher.stop()
    }

    // MARK: - Volume and data

    func testVolumeIndicationReportsTheSpeakingHost() async throws {
        let channel = "live-volume"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster, microphone: true)
        let listener = try await TestClient.join(channel, uid: 2, role: .audience)
        try await listener.engine.enableAudioVolumeIndication(interval: .milliseconds(200), smoothing: 0, reportVAD: true)
        let report = try await listener.log.wait("a report naming the host") {
            if case .volumeIndication(_, let speakers) = $0 { speakers.contains { $0.uid == 1 && $0.volume > 0 } } else { false }
        }
        guard case .volumeIndication(_, let speakers) = report else { return XCTFail() }
        XCTAssertEqual(speakers.first?.uid, 1, "the host is the loudest")
        await listener.stop()
        await host.stop()
    }

    func testStreamMessagesArriveInOrder() async throws {
        let channel = "live-data"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster)
        let listener = try await TestClient.join(channel, uid: 2, role: .audience)
        try await listener.log.wait("host joined") { if case .userJoined(_, 1) = $0 { true } else { false } }
        for i in 0..<40 {
            _ = try await host.engine.sendStreamMessage(streamID: 1, data: Array("message \(i)".utf8))
        }
        try await eventually("40 messages") {
            listener.log.all.filter { if case .streamMessage = $0 { true } else { false } }.count >= 40
        }
        let received = listener.log.all.compactMap { event -> (UInt32, String)? in
            if case .streamMessage(_, 1, 1, let sequence, let data) = event { (sequence, String(decoding: data, as: UTF8.self)) } else { nil }
        }
        XCTAssertEqual(received.map(\.0), Array(1...40))
        XCTAssertEqual(received.map(\.1), (0..<40).map { "message \($0)" })
        await listener.stop()
        await host.stop()
    }
}
