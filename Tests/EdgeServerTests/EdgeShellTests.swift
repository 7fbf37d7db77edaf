import Edge
import EdgeServer
import Logging
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import XCTest
import ZeroMQ

/// The edge shell with real sockets: an in-process ``EdgeServer`` and bare DEALER clients.
final class EdgeShellTests: XCTestCase {
    private var context: Context!
    private var edge: EdgeServer!

    override func setUpWithError() throws {
        context = try Context()
        var settings = EdgeSettings()
        settings.heartbeatTimeout = .seconds(1)
        edge = try EdgeServer(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate, settings: settings),
            logger: LogCapture.logger(label: "edge"))
    }

    override func tearDown() {
        edge.shutdown()
        context.shutdown()
    }

    private func client() throws -> RawEdgeClient {
        let client = try RawEdgeClient(endpoint: edge.endpoint, context: context)
        try client.open()
        return client
    }

    func testTokensAreVerifiedWithDistinctCodes() throws {
        let c = try client()
        func code(_ token: String, channel: String = "room", uid: UInt32 = 7) throws -> ShowroomError.Code? {
            try c.join(channel, uid: uid, token: token, role: .audience).failure?.code
        }
        XCTAssertEqual(try code("007garbage"), .tokenMalformed)
        XCTAssertEqual(try code(TestApp.token(channel: "room", uid: 7, certificate: "00000000000000000000000000000000")), .tokenBadSignature)
        XCTAssertEqual(try code(TestApp.token(channel: "room", uid: 7, appID: "11111111111111111111111111111111")), .tokenWrongAppID)
        XCTAssertEqual(try code(TestApp.token(channel: "room", uid: 7, expire: 60, issuedAgo: 120)), .tokenExpired)
        XCTAssertEqual(try code(TestApp.token(channel: "other", uid: 7)), .tokenChannelMismatch)
        XCTAssertEqual(try code(TestApp.token(channel: "room", uid: 8)), .tokenUidMismatch)
        let now = UInt32(Date().timeIntervalSince1970)
        let noJoin = try RTCTokenBuilder.buildToken(
            appID: TestApp.appID, appCertificate: TestApp.certificate, channelName: "room", uid: 7, tokenExpire: 600,
            joinChannelPrivilegeExpire: 1, publishAudioPrivilegeExpire: 600, publishVideoPrivilegeExpire: 600,
            publishDataStreamPrivilegeExpire: 600, issueTs: now - 10)
        XCTAssertEqual(try code(noJoin), .tokenMissingPrivilege)
        // Nothing was joined: a good token still works, the wildcard one too.
        XCTAssertNil(try c.join("room", uid: 7, token: TestApp.token(channel: "room", uid: 7), role: .audience).failure)
        XCTAssertNil(try c.join("any", uid: 7, token: TestApp.token(channel: "", uid: 0), role: .audience).failure)
    }

    func testACallsPrivateChannelOpensOnlyForTheTokensBoundToItAndTheUid() throws {
        let c = try client()
        let channel = Names.callChannelPrefix + "0123456789abcdef0123456789abcdef"
        func code(_ token: String, uid: UInt32 = 7) throws -> ShowroomError.Code? {
            try c.join(channel, uid: uid, token: token, role: .broadcaster).failure?.code
        }
        // A stranger with a valid wildcard token (any channel, any uid, or both) stays out.
        XCTAssertEqual(try code(TestApp.token(channel: "", uid: 0)), .channelPrivate)
        XCTAssertEqual(try code(TestApp.token(channel: "", uid: 7)), .channelPrivate)
        XCTAssertEqual(try code(TestApp.token(channel: channel, uid: 0)), .channelPrivate)
        XCTAssertEqual(try code(TestApp.token(channel: channel, uid: 8)), .tokenUidMismatch)
        // The party's own call token opens it.
        XCTAssertNil(try code(TestApp.token(channel: channel, uid: 7)))
    }

    func testFramesFanOutByteForByteAndAudienceCannotPublish() throws {
        let host = try client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewers = try (0..<3).map { i -> RawEdgeClient in
            let viewer = try client()
            let uid = UInt32(100 + i)
            XCTAssertNil(try viewer.join("show", uid: uid, token: TestApp.token(channel: "show", uid: uid, role: .subscriber), role: .audience).failure)
            try viewer.waitForEvent("user joined") { $0 == .userJoined(channel: "show", uid: 1) }
            return viewer
        }
        let payloads = (0..<10).map { i in [UInt8](repeating: UInt8(i), count: 500 + i) }
        for (i, payload) in payloads.enumerated() {
            try host.publish(channel: "show", uid: 1, track: .video, sequence: UInt32(i), keyframe: i == 0, payload: payload)
        }
        for viewer in viewers {
            try viewer.waitForFrames(10)
            XCTAssertEqual(viewer.frames.map(\.payload), payloads)
            XCTAssertEqual(viewer.frames.map(\.header.sequence), Array(0..<10))
        }

        // The audience member's frame is refused with its code and reaches nobody.
        let intruder = viewers[0]
        try intruder.publish(channel: "show", uid: 100, track: .video, sequence: 0, keyframe: true, payload: [1, 2, 3])
        let refusal = try intruder.waitForEvent("refusal") { if case .error = $0 { true } else { false } }
        guard case .error(let error, let channel, _) = refusal else { return XCTFail("\(refusal)") }
        XCTAssertEqual(error.code, .roleForbidsPublish)
        XCTAssertEqual(channel, "show")
        try host.drain(for: .milliseconds(200))
        try viewers[1].drain(for: .milliseconds(100))
        XCTAssertTrue(host.frames.isEmpty)
        XCTAssertEqual(viewers[1].frames.count, 10)
    }

    /// What broke two live shows in the demo: a session leaving a channel it is not in (a PK's
    /// forward link the stage had already taken out, leaving late) took the channel away from
    /// everyone in it, silently. Now it is refused and changes nothing for anyone.
    func testALeaveFromASessionNotInTheChannelLeavesTheShowPlaying() throws {
        let host = try client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewer = try client()
        XCTAssertNil(try viewer.join("show", uid: 100, token: TestApp.token(channel: "show", uid: 100, role: .subscriber), role: .audience).failure)
        try viewer.waitForEvent("user joined") { $0 == .userJoined(channel: "show", uid: 1) }
        let stranger = try client()
        for _ in 0..<3 {
            let late = try stranger.request(.leave(channel: "show"))
            XCTAssertEqual(late.failure?.code, .notJoined)
        }
        for i in 0..<5 {
            try host.publish(channel: "show", uid: 1, track: .video, sequence: UInt32(i), keyframe: i == 0, payload: [UInt8](repeating: 7, count: 300))
        }
        try viewer.waitForFrames(5)
        XCTAssertEqual(viewer.frames.count, 5, "the viewer still gets the host")
        try host.drain(for: .milliseconds(200))
        XCTAssertFalse(host.events.contains { if case .error = $0 { true } else { false } }, "the host's frames are not refused: \(host.events)")
        // The channel is still there with its host: a new viewer meets the host and its GOP.
        let late = try client()
        XCTAssertNil(try late.join("show", uid: 101, token: TestApp.token(channel: "show", uid: 101, role: .subscriber), role: .audience).failure)
        try late.waitForEvent("the host is there") { $0 == .userJoined(channel: "show", uid: 1) }
        try late.waitForFrames(5)
    }

    func testALateJoinerGetsTheCurrentGOPAtOnce() throws {
        let host = try client()
        XCTAssertNil(try host.join("gop", uid: 1, token: TestApp.token(channel: "gop", uid: 1), role: .broadcaster).failure)
        for i in 0..<5 {
            try host.publish(channel: "gop", uid: 1, track: .video, sequence: UInt32(i), keyframe: i == 0 || i == 3, payload: [UInt8(i)])
        }
        // The host's own session answers in order, so its frames have been handled once this returns.
        _ = try host.request(.heartbeat(clientTime: 1))
        let late = try client()
        XCTAssertNil(try late.join("gop", uid: 9, token: TestApp.token(channel: "gop", uid: 9, role: .subscriber), role: .audience).failure)
        try late.waitForFrames(2)
        XCTAssertEqual(late.frames.map(\.header.sequence), [3, 4], "the cache starts at the latest keyframe")
        XCTAssertTrue(late.frames[0].header.keyframe)
    }

    func testASilentClientGoesOfflineDroppedForTheOthers() throws {
        let host = try client()
        XCTAssertNil(try host.join("quiet", uid: 1, token: TestApp.token(channel: "quiet", uid: 1), role: .broadcaster).failure)
        let viewer = try client()
        XCTAssertNil(try viewer.join("quiet", uid: 2, token: TestApp.token(channel: "quiet", uid: 2), role: .audience).failure)
        try viewer.waitForEvent("user joined") { $0 == .userJoined(channel: "quiet", uid: 1) }
        // The viewer keeps its session alive; the host says nothing more.
        let deadline = ContinuousClock.now + .seconds(5)
        var offline: EdgeEvent?
        while offline == nil, ContinuousClock.now < deadline {
            _ = try viewer.request(.heartbeat(clientTime: 0))
            offline = try? viewer.waitForEvent(timeout: .milliseconds(200), "offline") {
                $0 == .userOffline(channel: "quiet", uid: 1, reason: .dropped)
            }
        }
        XCTAssertNotNil(offline, "the host's silence was not noticed")
    }

    func testMalformedMessagesGetAClearError() throws {
        let c = try client()
        XCTAssertEqual(try c.socket.send(frames: [[0xFF, 0xFF, 0x01]]), .sent)
        let event = try c.waitForEvent("malformed") { if case .error = $0 { true } else { false } }
        guard case .error(let error, _, _) = event else { return XCTFail() }
        XCTAssertEqual(error.code, .malformedMessage)
        // The session survives it.
        XCTAssertNil(try c.request(.heartbeat(clientTime: 5)).failure)
    }
}
