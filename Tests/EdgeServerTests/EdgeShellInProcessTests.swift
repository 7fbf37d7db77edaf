import Edge
import EdgeServer
import Foundation
import NodeRuntime
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import XCTest

/// The edge shell's logic on the in-process network: tokens, the media fan-out's decisions,
/// claims, bans, reports and draining, with in-process clients on one thread and the clock moved
/// by hand. What crosses sockets (framing, CURVE, the zero-copy fan-out, ZeroMQ heartbeats) is
/// tested with real sockets in ``EdgeShellTests`` and ``HostileInputTests``.
final class EdgeShellInProcessTests: XCTestCase {
    private var harness: InProcessEdgeHarness!

    override func setUp() {
        var settings = EdgeSettings()
        settings.heartbeatTimeout = .seconds(1)
        harness = InProcessEdgeHarness(settings: settings)
    }

    private func client() throws -> InProcessEdgeHarness.Client { try harness.client() }

    // MARK: - Tokens and joins

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
        let now = UInt32(harness.network.now / 1000)
        let noJoin = try RTCTokenBuilder.buildToken(
            appID: TestApp.appID, appCertificate: TestApp.certificate, channelName: "room", uid: 7, tokenExpire: 600,
            joinChannelPrivilegeExpire: 1, publishAudioPrivilegeExpire: 600, publishVideoPrivilegeExpire: 600,
            publishDataStreamPrivilegeExpire: 600, issueTs: now - 10)
        XCTAssertEqual(try code(noJoin), .tokenMissingPrivilege)
        // Nothing was joined: a good token still works, the wildcard one too.
        XCTAssertNil(try c.join("room", uid: 7, token: TestApp.token(channel: "room", uid: 7), role: .audience).failure)
        XCTAssertNil(try c.join("any", uid: 7, token: TestApp.token(channel: "", uid: 0), role: .audience).failure)
    }

    func testTokensExpireOnTheEdgesClockNotTheWalls() throws {
        let c = try client()
        let token = try TestApp.token(channel: "room", uid: 7, expire: 60)
        try harness.advance(by: .seconds(61), step: .milliseconds(500), keepAlive: [c])
        XCTAssertEqual(try c.join("room", uid: 7, token: token, role: .audience).failure?.code, .tokenExpired,
                       "a minute on the edge's clock, however little on the wall's")
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

    // MARK: - Media decisions

    /// What broke two live shows in the demo: a session leaving a channel it is not in (a PK's
    /// forward link the stage had already taken out, leaving late) took the channel away from
    /// everyone in it, silently. Now it is refused and changes nothing for anyone.
    func testALeaveFromASessionNotInTheChannelLeavesTheShowPlaying() throws {
        let host = try client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewer = try client()
        XCTAssertNil(try viewer.join("show", uid: 100, token: TestApp.token(channel: "show", uid: 100, role: .subscriber), role: .audience).failure)
        XCTAssertEqual(viewer.take { $0 == .userJoined(channel: "show", uid: 1) }.count, 1)
        let stranger = try client()
        for _ in 0..<3 {
            XCTAssertEqual(try stranger.request(.leave(channel: "show")).failure?.code, .notJoined)
        }
        for i in 0..<5 {
            try host.publish(channel: "show", uid: 1, sequence: UInt32(i), keyframe: i == 0, payload: [UInt8](repeating: 7, count: 300))
        }
        viewer.collect()
        XCTAssertEqual(viewer.frames.count, 5, "the viewer still gets the host")
        XCTAssertEqual(host.take { if case .error = $0 { true } else { false } }, [], "the host's frames are not refused")
        // The channel is still there with its host: a new viewer meets the host and its GOP.
        let late = try client()
        XCTAssertNil(try late.join("show", uid: 101, token: TestApp.token(channel: "show", uid: 101, role: .subscriber), role: .audience).failure)
        XCTAssertEqual(late.take { $0 == .userJoined(channel: "show", uid: 1) }.count, 1)
        XCTAssertEqual(late.frames.count, 5)
    }

    func testALateJoinerGetsTheCurrentGOPAtOnceAndAudienceCannotPublish() throws {
        let host = try client()
        XCTAssertNil(try host.join("gop", uid: 1, token: TestApp.token(channel: "gop", uid: 1), role: .broadcaster).failure)
        for i in 0..<5 {
            try host.publish(channel: "gop", uid: 1, sequence: UInt32(i), keyframe: i == 0 || i == 3, payload: [UInt8(i)])
        }
        let late = try client()
        XCTAssertNil(try late.join("gop", uid: 9, token: TestApp.token(channel: "gop", uid: 9, role: .subscriber), role: .audience).failure)
        XCTAssertEqual(late.frames.map(\.header.sequence), [3, 4], "the cache starts at the latest keyframe")
        XCTAssertEqual(late.frames.map(\.payload), [[3], [4]], "the payload as sent")
        XCTAssertTrue(late.frames[0].header.keyframe)

        // The audience member's frame is refused with its code and reaches nobody.
        try late.publish(channel: "gop", uid: 9, sequence: 0, keyframe: true, payload: [1, 2, 3])
        let refusals = late.take { if case .error = $0 { true } else { false } }
        guard case .error(let error, let channel, _) = refusals.first, refusals.count == 1 else { return XCTFail("\(refusals)") }
        XCTAssertEqual(error.code, .roleForbidsPublish)
        XCTAssertEqual(channel, "gop")
        host.collect()
        XCTAssertTrue(host.frames.isEmpty)
    }

    func testASilentClientGoesOfflineDroppedForTheOthersAtItsTimeoutNotBefore() throws {
        let host = try client()
        XCTAssertNil(try host.join("quiet", uid: 1, token: TestApp.token(channel: "quiet", uid: 1), role: .broadcaster).failure)
        let viewer = try client()
        XCTAssertNil(try viewer.join("quiet", uid: 2, token: TestApp.token(channel: "quiet", uid: 2), role: .audience).failure)
        let offline = { viewer.take { $0 == .userOffline(channel: "quiet", uid: 1, reason: .dropped) } }
        // The viewer keeps its session alive; the host says nothing more.
        try harness.advance(by: .milliseconds(900), keepAlive: [viewer])
        XCTAssertEqual(offline(), [], "within the heartbeat timeout")
        try harness.advance(by: .milliseconds(300), keepAlive: [viewer])
        XCTAssertEqual(offline().count, 1, "the host's silence was noticed")
        XCTAssertNil(harness.edge.channel("quiet")?.connections.first { $0.uid == 1 })
    }

    func testMalformedMessagesGetAClearError() throws {
        let c = try client()
        c.connection.send([[0xFF, 0xFF, 0x01]])
        let errors = c.take { if case .error = $0 { true } else { false } }
        guard case .error(let error, _, _) = errors.first else { return XCTFail("\(errors)") }
        XCTAssertEqual(error.code, .malformedMessage)
        // The session survives it.
        XCTAssertNil(try c.request(.heartbeat(clientTime: 5)).failure)
    }

    // MARK: - Claims

    func testAJoinWaitsForItsChannelsOwnerAndFollowsTheAnswer() throws {
        let c = try client()
        // Held while the owner has not answered; one claim for two joins.
        harness.network.hold("coord-1")
        let first = try c.begin(.join(channel: "show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster,
                                      options: .defaults(for: .broadcaster)))
        let other = try client()
        let second = try other.begin(.join(channel: "show", uid: 2, token: TestApp.token(channel: "show", uid: 2, role: .subscriber),
                                           role: .audience, options: .defaults(for: .audience)))
        XCTAssertNil(c.reply(to: first))
        XCTAssertEqual(harness.network.heldCount(for: "coord-1"), 1, "one claim for the channel")
        harness.network.release("coord-1")
        XCTAssertNil(c.reply(to: first)?.failure)
        XCTAssertNil(other.reply(to: second)?.failure)
        XCTAssertEqual(harness.claimed, ["show"])
        XCTAssertNotNil(harness.edge.channel("show"))

        // Placed elsewhere: refused with the edge to join.
        harness.claimAnswers["away"] = RoomClaimChannelResponse.with {
            $0.granted = false
            $0.edgeID = "edge-2"
            $0.clientEndpoint = "tcp://10.0.0.2:7000"
        }
        let away = try c.join("away", uid: 1, token: TestApp.token(channel: "away", uid: 1), role: .audience)
        XCTAssertEqual(away.failure?.code, .channelElsewhere)
        XCTAssertEqual(away.failure?.redirect?.edgeID, "edge-2")
        XCTAssertEqual(away.failure?.redirect?.clientEndpoint, "tcp://10.0.0.2:7000")
        XCTAssertNil(harness.edge.channel("away"))

        // A bad token never reaches the owner.
        XCTAssertEqual(try c.join("bad", uid: 1, token: "007garbage", role: .audience).failure?.code, .tokenMalformed)
        XCTAssertFalse(harness.claimed.contains("bad"))
    }

    func testAClaimNobodyAnswersIsRefusedAfterItsTimeoutNotAdmitted() throws {
        let c = try client()
        harness.network.hold("coord-1")
        let join = try c.begin(.join(channel: "lost", uid: 1, token: TestApp.token(channel: "lost", uid: 1), role: .audience,
                                     options: .defaults(for: .audience)))
        try harness.advance(by: .milliseconds(4900), keepAlive: [c])
        XCTAssertNil(c.reply(to: join), "still waiting")
        try harness.advance(by: .milliseconds(200), keepAlive: [c])
        XCTAssertEqual(c.reply(to: join)?.failure?.code, .unavailable)
        XCTAssertNil(harness.edge.channel("lost"), "the channel may be placed elsewhere")
        // The late answer admits nobody.
        harness.network.release("coord-1")
        XCTAssertNil(harness.edge.channel("lost"))
    }

    // MARK: - Bans and reports

    func testBansFromTheCoordinatorsCloseTheConnectionAndRefuseRejoining() throws {
        let endMs = harness.network.now + 60_000
        // A ban in force before the edge asks: the edge learns it through BAN_LIST.
        harness.banList = [CoordinatorLinkTests.ban("show", uid: 8, privileges: [1], untilMs: endMs)]
        harness.network.advance(by: .milliseconds(50))
        let other = try client()
        XCTAssertEqual(try other.join("show", uid: 8, token: TestApp.token(channel: "show", uid: 8, role: .subscriber), role: .audience).failure?.code,
                       .banned)

        let user = try client()
        XCTAssertNil(try user.join("show", uid: 7, token: TestApp.token(channel: "show", uid: 7, role: .subscriber), role: .audience).failure)
        // EDGE_BANS: uid 7 is kicked at once and may not come back.
        let answer = try harness.fromCoordinator(.edgeBans, CoordinatorLinkTests.bans([
            CoordinatorLinkTests.ban("show", uid: 7, privileges: [1], untilMs: endMs),
        ]))
        XCTAssertNil(answer.failure)
        XCTAssertEqual(try answer.decodeBody(RoomEdgeBansResponse.self).connectionsClosed, 1)
        let closed = user.take { if case .connectionClosed = $0 { true } else { false } }
        guard case .connectionClosed(let channel, let reason) = closed.first else { return XCTFail("\(closed)") }
        XCTAssertEqual(channel, "show")
        XCTAssertEqual(reason.code, .banned)
        XCTAssertEqual(try user.join("show", uid: 7, token: TestApp.token(channel: "show", uid: 7, role: .subscriber), role: .audience).failure?.code,
                       .banned)
        harness.network.advance(by: .milliseconds(200))
        XCTAssertTrue(harness.activities.contains { $0.type == .audienceLeft && $0.uid == 7 && $0.reason == .kicked })

        // A malformed ban is refused with a clear error and changes nothing.
        let bad = try harness.fromCoordinator(.edgeBans, CoordinatorLinkTests.bans([
            CoordinatorLinkTests.ban("show", uid: 9, privileges: [7], untilMs: endMs),
        ]))
        XCTAssertEqual(bad.failure?.code, .invalidArgument)
        XCTAssertTrue(bad.failure?.message.contains("privilege 7") == true, "\(String(describing: bad.failure))")
        XCTAssertFalse(harness.edge.activeBans.contains { $0.uid == 9 })

        // The ban ends on the edge's clock.
        try harness.advance(by: .seconds(61), step: .milliseconds(500), keepAlive: [user])
        XCTAssertNil(try user.join("show", uid: 7, token: TestApp.token(channel: "show", uid: 7, role: .subscriber), role: .audience).failure)
    }

    func testActivitiesAndSummariesReachTheChannelsCoordinatorInOrderOnTheEdgesClock() throws {
        let startMs = harness.network.now
        let host = try client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewer = try client()
        XCTAssertNil(try viewer.join("show", uid: 2, token: TestApp.token(channel: "show", uid: 2, role: .subscriber), role: .audience).failure)
        harness.network.advance(by: .milliseconds(150))
        let summary = try XCTUnwrap(harness.reports.last { $0.hasChannels_p }?.channels.first { $0.name == "show" })
        XCTAssertEqual(summary.publishers, [1])
        XCTAssertEqual(summary.subscribers, 2)
        XCTAssertEqual(summary.edge, "edge-1")

        XCTAssertNil(try viewer.request(.leave(channel: "show")).failure)
        XCTAssertNil(try host.request(.closeSession).failure)
        harness.network.advance(by: .milliseconds(150))
        XCTAssertEqual(harness.activities.map(CoordinatorLinkTests.describe),
                       ["101 show 0", "103 show 1", "105 show 2", "106 show 2 quit", "104 show 1 quit", "102 show 0"])
        XCTAssertEqual(harness.activities.prefix(3).map(\.atMs), [startMs, startMs, startMs], "times on the edge's clock")
        XCTAssertEqual(Set(harness.activities.map(\.origin)).count, 1)
        XCTAssertTrue(harness.activities.first?.origin.hasPrefix("edge-1/") ?? false)
        XCTAssertEqual(harness.activities.map(\.originSequence), Array(1...6))

        // Once the channel is gone, the summary says so.
        harness.network.advance(by: .seconds(1))
        XCTAssertEqual(harness.reports.last { $0.hasChannels_p }?.channels, [])
    }

    func testAChannelTheCoordinatorSaysIsPlacedElsewhereSendsItsClientsThere() throws {
        let host = try client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewer = try client()
        XCTAssertNil(try viewer.join("show", uid: 2, token: TestApp.token(channel: "show", uid: 2, role: .subscriber), role: .audience).failure)
        XCTAssertNil(try viewer.join("other", uid: 2, token: TestApp.token(channel: "other", uid: 2, role: .subscriber), role: .audience).failure)
        let placed = WireRedirect.with {
            $0.edgeID = "edge-2"
            $0.clientEndpoint = "inproc://edge-2"
        }
        harness.placedElsewhere = ["show": placed]
        try harness.advance(by: .milliseconds(1_500), keepAlive: [host, viewer])

        for client in [host, viewer] {
            let closed = client.take { if case .connectionClosed = $0 { true } else { false } }
            guard case .connectionClosed("show", let reason)? = closed.first else { return XCTFail("\(closed)") }
            XCTAssertEqual(reason.code, .channelElsewhere)
            XCTAssertEqual(reason.redirect, placed, "the client goes there without asking the coordinator")
        }
        XCTAssertEqual(harness.activities.filter { $0.channel == "show" && $0.reason == .server }.map(\.uid).sorted(), [1, 2])
        XCTAssertEqual(harness.reports.last { $0.hasChannels_p }?.channels.map(\.name), ["other"], "the other channel stays")
        XCTAssertEqual(try viewer.request(.leave(channel: "other")).failure, nil)
    }

    // MARK: - Draining

    func testDrainingTellsTheCoordinatorsThenTheClientsAndEndsOnceTheyMoved() throws {
        let host = try client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewer = try client()
        XCTAssertNil(try viewer.join("show", uid: 2, token: TestApp.token(channel: "show", uid: 2, role: .subscriber), role: .audience).failure)
        var drained = false
        harness.network.hold("coord-1")
        harness.edge.drain(nodeID: "edge-1", within: .seconds(30)) { drained = true }
        harness.network.run()
        XCTAssertEqual(host.take { if case .draining = $0 { true } else { false } }, [], "not before the coordinators know")
        harness.network.release("coord-1")
        XCTAssertTrue(harness.reports.contains { $0.draining })
        XCTAssertEqual(host.take { if case .draining = $0 { true } else { false } }, [.draining(within: .seconds(30))])
        XCTAssertEqual(viewer.take { if case .draining = $0 { true } else { false } }.count, 1)
        XCTAssertEqual(try client().join("new", uid: 3, token: TestApp.token(channel: "new", uid: 3), role: .audience).failure?.code,
                       .unavailable, "no new joins")

        // The viewer switched and left; the broadcaster stays until it says it publishes elsewhere.
        XCTAssertNil(try viewer.request(.leave(channel: "show")).failure)
        try harness.advance(by: .seconds(1), keepAlive: [host])
        XCTAssertFalse(drained)
        var movedOut = WireEnvelope()
        movedOut.kind = .edgeMovedOut
        host.connection.send([try movedOut.serializedBytes()])
        harness.network.advance(by: .milliseconds(50))
        XCTAssertTrue(drained)
        XCTAssertEqual(host.take { if case .sessionClosed = $0 { true } else { false } }.count, 1)
    }

    func testADrainEndsAtItsDeadlineWhenAClientNeverMoves() throws {
        let viewer = try client()
        XCTAssertNil(try viewer.join("show", uid: 2, token: TestApp.token(channel: "show", uid: 2, role: .subscriber), role: .audience).failure)
        var drained = false
        harness.edge.drain(nodeID: "edge-1", within: .seconds(2)) { drained = true }
        harness.network.run()
        try harness.advance(by: .milliseconds(1900), keepAlive: [viewer])
        XCTAssertFalse(drained)
        try harness.advance(by: .milliseconds(200), keepAlive: [viewer])
        XCTAssertTrue(drained)
        let closed = viewer.take { if case .sessionClosed = $0 { true } else { false } }
        guard case .sessionClosed(let reason) = closed.first else { return XCTFail("\(closed)") }
        XCTAssertEqual(reason.code, .unavailable)
        XCTAssertTrue(reason.message.contains("edge-1"), reason.message)
    }

    // MARK: - Determinism

    /// The same start time, random source and client messages give the same bytes to every
    /// client and the coordinators: what a simulation replaying a seed relies on.
    func testTheSameScheduleGivesByteIdenticalOutput() throws {
        let startMs = WallClock.system.nowMs()
        let tokens = try (1...3).map { try TestApp.token(channel: "show", uid: UInt32($0)) }
        func run() throws -> [[UInt8]] {
            var seed: UInt64 = 42
            let harness = InProcessEdgeHarness(startMs: startMs) {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                return seed
            }
            let clients = try (0..<3).map { _ in try harness.client() }
            for (index, client) in clients.enumerated() {
                _ = try client.join("show", uid: UInt32(index + 1), token: tokens[index], role: index == 0 ? .broadcaster : .audience)
            }
            for sequence in 0..<20 {
                try clients[0].publish(channel: "show", uid: 1, sequence: UInt32(sequence), keyframe: sequence % 10 == 0,
                                       payload: [UInt8](repeating: UInt8(sequence), count: 100))
                harness.network.advance(by: .milliseconds(33))
            }
            _ = try clients[2].request(.leave(channel: "show"))
            try harness.advance(by: .seconds(2), keepAlive: [clients[0]])
            var output = try harness.reports.map { try $0.serializedBytes() as [UInt8] }
            for client in clients {
                client.collect()
                output += client.messages.flatMap { $0 }
            }
            return output
        }
        let first = try run()
        XCTAssertGreaterThan(first.count, 80, "replies, events, frames and reports")
        XCTAssertEqual(try run(), first)
    }
}
