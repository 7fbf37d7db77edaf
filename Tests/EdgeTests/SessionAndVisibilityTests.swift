import Edge
import ShowroomWire
import XCTest

/// Sessions, joins and leaves, and who hears about whom.
final class SessionAndVisibilityTests: XCTestCase {
    func testOpenSessionRepliesWithHeartbeatTimingAndLimits() throws {
        var edge = TestEdge()
        let out = edge.open(host)
        let reply = try XCTUnwrap(out.replies(to: host).first)
        XCTAssertEqual(reply.kind, .openSession)
        XCTAssertEqual(reply.body, .sessionOpened(session: host, heartbeatInterval: .seconds(1), heartbeatTimeout: .seconds(5), limits: EdgeLimits()))
        XCTAssertEqual(edge.plane.session(host)?.clientID, "client-1")
        XCTAssertEqual(edge.plane.sessionCount, 1)
    }

    func testRequestsWithoutASessionAreRefusedWithNoSession() {
        var edge = TestEdge()
        let join = edge.join(viewer1, "room", uid: 7, as: .audience)
        XCTAssertEqual(join.failure?.code, .noSession)
        XCTAssertEqual(join.replies.first?.kind, .join)
        // A one-way heartbeat gets an error event instead of a reply: the client learns to reopen.
        let heartbeat = edge.plane.heartbeat(viewer1, now: .zero)
        XCTAssertEqual(heartbeat.events(to: viewer1).errorCodes, [.noSession])
        XCTAssertNil(edge.plane.channel("room"))
    }

    func testBroadcasterIsVisibleAndAudienceMembersAreNot() {
        var edge = TestEdge()
        edge.open(host)
        edge.open(viewer1)
        edge.open(viewer2)
        let hostJoin = edge.join(host, "room", uid: 100, as: .broadcaster)
        XCTAssertEqual(hostJoin.replies(to: host).first?.body, .joined(channel: "room", uid: 100, connection: ConnectionID(1), role: .broadcaster))
        XCTAssertEqual(hostJoin.events, [], "nobody to tell")

        // The audience member learns about the host and its tracks; the host hears nothing.
        let viewerJoin = edge.join(viewer1, "room", uid: 7, as: .audience)
        XCTAssertEqual(viewerJoin.replies(to: viewer1).first?.body, .joined(channel: "room", uid: 7, connection: ConnectionID(2), role: .audience))
        XCTAssertEqual(viewerJoin.events(to: viewer1), [
            .userJoined(channel: "room", uid: 100),
            .remoteTrackPublished(audio("room", 100)),
            .remoteTrackPublished(video("room", 100)),
            .remoteVideoStateChanged(video("room", 100), state: .starting, reason: .subscribed),
        ])
        XCTAssertEqual(viewerJoin.events(to: host), [])
        // No GOP cached yet: the host is asked for a keyframe.
        XCTAssertEqual(viewerJoin.keyframeRequests, [video("room", 100)])

        // A second audience member: nobody hears of it either.
        let secondJoin = edge.join(viewer2, "room", uid: 8, as: .audience)
        XCTAssertEqual(secondJoin.events(to: host) + secondJoin.events(to: viewer1), [])

        // Audience members leave silently.
        let viewerLeave = edge.run(edge.plane.leave(viewer1, requestID: 9, channel: "room", now: edge.now))
        XCTAssertEqual(viewerLeave.replies(to: viewer1).first?.body, .left(channel: "room"))
        XCTAssertEqual(viewerLeave.events, [])

        // The host leaving is seen by the remaining audience: video stops, the user quits.
        let hostLeave = edge.run(edge.plane.leave(host, channel: "room", now: edge.now))
        XCTAssertEqual(hostLeave.events(to: viewer2), [
            .remoteVideoStateChanged(video("room", 100), state: .stopped, reason: .remoteOffline),
            .userOffline(channel: "room", uid: 100, reason: .quit),
        ])
        XCTAssertEqual(edge.plane.channel("room")?.broadcasters, [])
        XCTAssertEqual(edge.plane.channel("room")?.audience, [8])
    }

    func testJoinerLearnsOfEveryBroadcasterAlreadyThereInJoinOrder() {
        var edge = TestEdge()
        for session in [host, guest, viewer1] { edge.open(session) }
        edge.join(host, "room", uid: 100, as: .broadcaster)
        let coHost = edge.join(guest, "room", uid: 200, as: .broadcaster)
        XCTAssertEqual(coHost.events(to: host), [
            .userJoined(channel: "room", uid: 200),
            .remoteTrackPublished(audio("room", 200)),
            .remoteTrackPublished(video("room", 200)),
            .remoteVideoStateChanged(video("room", 200), state: .starting, reason: .remoteUnmuted),
        ])
        let viewer = edge.join(viewer1, "room", uid: 7, as: .audience).events(to: viewer1)
        XCTAssertEqual(Array(viewer.prefix(2)), [.userJoined(channel: "room", uid: 100), .userJoined(channel: "room", uid: 200)])
        XCTAssertEqual(viewer.filter { if case .remoteTrackPublished = $0 { true } else { false } }.count, 4)
    }

    func testRoleSwitchToAudienceIsOfflineBecameAudienceAndBackIsJoined() {
        var edge = TestEdge()
        for session in [host, guest, viewer1] { edge.open(session) }
        edge.join(host, "room", uid: 100, as: .broadcaster)
        edge.join(guest, "room", uid: 200, as: .broadcaster)
        edge.join(viewer1, "room", uid: 7, as: .audience)

        let down = edge.run(edge.plane.setRole(guest, requestID: 1, channel: "room", role: .audience, now: edge.now))
        XCTAssertEqual(down.replies(to: guest).first?.body, .roleSet(channel: "room", role: .audience))
        for other in [host, viewer1] {
            XCTAssertEqual(down.events(to: other), [
                .remoteVideoStateChanged(video("room", 200), state: .stopped, reason: .remoteOffline),
                .userOffline(channel: "room", uid: 200, reason: .becameAudience),
            ])
        }
        XCTAssertNil(edge.plane.channel("room")?.track(uid: 200, kind: .video))

        // Back up (the publisher grant allows it): joined, tracks published again.
        let up = edge.run(edge.plane.setRole(guest, requestID: 2, channel: "room", role: .broadcaster, now: edge.now))
        XCTAssertEqual(up.failure, nil)
        XCTAssertEqual(Array(up.events(to: viewer1).prefix(2)), [
            .userJoined(channel: "room", uid: 200), .remoteTrackPublished(audio("room", 200)),
        ])
        XCTAssertEqual(edge.plane.connection(guest, channel: "room")?.publishing, [.audio, .video])
    }

    func testOneSessionInThreeChannelsWithDifferentRolesAndOptions() {
        var edge = TestEdge()
        let hostA = SessionID(10), hostB = SessionID(11), hostC = SessionID(12)
        for session in [hostA, hostB, hostC, guest, viewer1] { edge.open(session) }
        edge.join(hostA, "a", uid: 1, as: .broadcaster)
        edge.join(hostB, "b", uid: 2, as: .broadcaster)
        edge.join(hostC, "c", uid: 3, as: .broadcaster)
        edge.join(viewer1, "a", uid: 9, as: .audience)

        // a: co-host with audio only; b: audience watching video only (PK view); c: pre-joined,
        // subscribing to nothing (the instant-switch neighbour).
        let inA = edge.join(guest, "a", uid: 50, as: .broadcaster, options: MediaOptions(publishAudio: true))
        let inB = edge.join(guest, "b", uid: 50, as: .audience, options: MediaOptions(autoSubscribeAudio: false, autoSubscribeVideo: true))
        let inC = edge.join(guest, "c", uid: 50, as: .audience, options: MediaOptions(autoSubscribeAudio: false, autoSubscribeVideo: false))
        XCTAssertEqual([inA, inB, inC].map { $0.failure }, [nil, nil, nil])
        XCTAssertEqual(edge.plane.session(guest)?.channels, ["a", "b", "c"])

        XCTAssertEqual(inA.events(to: viewer1), [.userJoined(channel: "a", uid: 50), .remoteTrackPublished(audio("a", 50))])
        XCTAssertEqual(inB.events(to: hostB), [], "audience in b is invisible")
        XCTAssertEqual(edge.plane.channel("b")?.track(uid: 2, kind: .video)?.subscribers, [guest])
        XCTAssertEqual(edge.plane.channel("b")?.track(uid: 2, kind: .audio)?.subscribers, [])
        XCTAssertEqual(edge.plane.channel("c")?.track(uid: 3, kind: .video)?.subscribers, [])

        // Publishing: allowed in a (audio), refused in b (audience) and for video in a.
        let start = edge.delivered.count
        edge.publish(guest, "a", uid: 50, .audio)
        XCTAssertEqual(edge.frames(to: viewer1, from: start).map(\.number), [1])
        XCTAssertEqual(edge.frames(to: hostA, from: start).count, 1)
        XCTAssertEqual(edge.publish(guest, "b", uid: 50, .audio).events(to: guest).errorCodes, [.roleForbidsPublish])
        XCTAssertEqual(edge.publish(guest, "a", uid: 50, .video, key: true).events(to: guest).errorCodes, [.trackNotPublished])
        XCTAssertEqual(edge.delivered.count, start + 2)

        // updateChannelEx on c: start watching video.
        let update = edge.run(edge.plane.updateOptions(guest, requestID: 5, channel: "c", update: MediaOptionsUpdate(autoSubscribeVideo: true), now: edge.now))
        XCTAssertEqual(update.replies(to: guest).first?.body, .optionsUpdated(channel: "c"))
        XCTAssertEqual(update.events(to: guest), [.remoteVideoStateChanged(video("c", 3), state: .starting, reason: .subscribed)])
        XCTAssertEqual(edge.plane.channel("c")?.track(uid: 3, kind: .video)?.subscribers, [guest])

        // Leaving b touches neither a nor c.
        _ = edge.run(edge.plane.leave(guest, channel: "b", now: edge.now))
        XCTAssertEqual(edge.plane.session(guest)?.channels, ["a", "c"])
        XCTAssertEqual(edge.plane.connection(guest, channel: "a")?.role, .broadcaster)
        XCTAssertEqual(edge.plane.connection(guest, channel: "c")?.role, .audience)
    }

    func testHeartbeatTimeoutDropsTheSessionsUsersInEveryChannel() {
        var edge = TestEdge()
        for session in [host, viewer1, viewer2] { edge.open(session) }
        edge.join(host, "a", uid: 100, as: .broadcaster)
        edge.join(host, "b", uid: 100, as: .broadcaster)
        edge.join(viewer1, "a", uid: 1, as: .audience)
        edge.join(viewer2, "b", uid: 2, as: .audience)

        var all: [(at: Duration, directive: EdgeDirective)] = []
        for _ in 0..<6 {
            edge.heartbeat(viewer1, viewer2)
            all += edge.advance(by: .seconds(1))
        }
        let out = all.directives
        let offlineA = EdgeEvent.userOffline(channel: "a", uid: 100, reason: .dropped)
        let offlineB = EdgeEvent.userOffline(channel: "b", uid: 100, reason: .dropped)
        XCTAssertEqual(out.recipients(of: offlineA), [viewer1])
        XCTAssertEqual(out.recipients(of: offlineB), [viewer2])
        XCTAssertEqual(all.first { $0.directive == .send(offlineA, to: viewer1) }?.at, .seconds(5), "dropped at the timeout")
        XCTAssertEqual(out.closedSessions, [host])
        XCTAssertEqual(out.events(to: host).compactMap(\.code), [.sessionTimedOut])
        XCTAssertNil(edge.plane.session(host))
        XCTAssertEqual(edge.plane.channel("a")?.broadcasters, [])
        // The audience, heard from every second, is still there.
        XCTAssertNotNil(edge.plane.session(viewer1))
        XCTAssertEqual(edge.plane.statistics.sessionsDropped, 1)
    }

    func testMediaFramesCountAsHeartbeats() {
        var edge = TestEdge()
        edge.open(host)
        edge.join(host, "a", uid: 100, as: .broadcaster)
        for _ in 0..<100 {
            edge.publish(host, "a", uid: 100, .audio)
            edge.advance(by: .milliseconds(100))
        }
        XCTAssertNotNil(edge.plane.session(host), "10 s of frames, no heartbeat, still alive")
    }

    func testCloseSessionQuitsEveryChannel() {
        var edge = TestEdge()
        for session in [host, viewer1] { edge.open(session) }
        edge.join(host, "a", uid: 100, as: .broadcaster)
        edge.join(host, "b", uid: 100, as: .broadcaster)
        edge.join(viewer1, "a", uid: 1, as: .audience)
        let out = edge.run(edge.plane.closeSession(host, requestID: 4, now: edge.now))
        XCTAssertEqual(out.events(to: viewer1).last, .userOffline(channel: "a", uid: 100, reason: .quit))
        XCTAssertEqual(out.replies(to: host).first?.body, .sessionClosed)
        XCTAssertEqual(out.last, .closeSession(host), "the reply goes out before the shell forgets the session")
        XCTAssertNil(edge.plane.channel("b"), "an empty channel is forgotten")
    }

    func testSameClientIDReplacesTheOldSession() {
        var edge = TestEdge()
        let reconnect = SessionID(99)
        edge.open(host, client: "phone")
        edge.open(viewer1)
        edge.join(host, "a", uid: 100, as: .broadcaster)
        edge.join(viewer1, "a", uid: 1, as: .audience)
        let out = edge.open(reconnect, client: "phone")
        XCTAssertEqual(out.events(to: viewer1).last, .userOffline(channel: "a", uid: 100, reason: .dropped))
        XCTAssertEqual(out.events(to: host).compactMap(\.code), [.sessionReplaced])
        XCTAssertEqual(out.closedSessions, [host])
        XCTAssertNotNil(out.replies(to: reconnect).first?.body)
        XCTAssertNil(edge.plane.session(host))
    }

    func testSameUIDFromAnotherSessionTakesTheConnectionOver() {
        var edge = TestEdge()
        let second = SessionID(99)
        for session in [host, second, viewer1] { edge.open(session) }
        edge.join(host, "a", uid: 100, as: .broadcaster)
        edge.join(viewer1, "a", uid: 1, as: .audience)
        let out = edge.join(second, "a", uid: 100, as: .broadcaster)
        XCTAssertNil(out.failure)
        XCTAssertEqual(out.events(to: host).compactMap(\.code), [.uidReplaced])
        XCTAssertEqual(Array(out.events(to: viewer1).prefix(3)), [
            .remoteVideoStateChanged(video("a", 100), state: .stopped, reason: .remoteOffline),
            .userOffline(channel: "a", uid: 100, reason: .dropped),
            .userJoined(channel: "a", uid: 100),
        ])
        XCTAssertEqual(edge.plane.channel("a")?.track(uid: 100, kind: .video)?.publisher, second)
        XCTAssertEqual(edge.plane.session(host)?.channels, [])
    }

    func testUIDZeroTakesTheGrantsUIDOrAnAssignedOne() {
        var edge = TestEdge()
        edge.open(viewer1)
        edge.open(viewer2)
        let fromGrant = edge.join(viewer1, "a", uid: 0, as: .audience, grant: .subscriber(uid: 42))
        XCTAssertEqual(fromGrant.replies.first?.body, .joined(channel: "a", uid: 42, connection: ConnectionID(1), role: .audience))
        let assigned = edge.join(viewer2, "a", uid: 0, as: .audience, grant: .subscriber())
        guard case .joined(_, let uid, _, _) = assigned.replies.first?.body else { return XCTFail("not joined: \(assigned)") }
        XCTAssertGreaterThanOrEqual(uid, 0x8000_0000)
    }

    func testJoiningTheSameChannelTwiceIsRefused() {
        var edge = TestEdge()
        edge.open(viewer1)
        edge.join(viewer1, "a", uid: 1, as: .audience)
        XCTAssertEqual(edge.join(viewer1, "a", uid: 2, as: .audience).failure?.code, .alreadyJoined)
        XCTAssertEqual(edge.run(edge.plane.leave(viewer1, requestID: 3, channel: "zzz", now: edge.now)).failure?.code, .notJoined)
        XCTAssertEqual(edge.join(viewer1, "", uid: 2, as: .audience).failure?.code, .invalidArgument)
    }
}
