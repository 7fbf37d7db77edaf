import Edge
import ShowroomWire
import XCTest

/// What the plane reports for the room-coordinators: every activity type with its reason and
/// time, audience included, in the order the plane saw things.
final class ChannelActivityTests: XCTestCase {
    private func activity(
        _ kind: ChannelActivity.Kind, _ channel: String = "show", uid: UInt32 = 0, _ reason: ChannelActivity.LeaveReason? = nil,
        at seconds: Int
    ) -> ChannelActivity {
        ChannelActivity(kind, channel: channel, uid: uid, reason: reason, at: .seconds(seconds))
    }

    func testEveryActivityTypeIsReportedInOrderAudienceIncluded() {
        var edge = TestEdge()
        for session in [host, viewer1, viewer2] { edge.open(session) }
        XCTAssertNil(edge.join(host, "show", uid: 100, as: .broadcaster).failure)
        edge.now = .seconds(1)
        XCTAssertNil(edge.join(viewer1, "show", uid: 1, as: .audience, grant: .publisher()).failure)
        edge.now = .seconds(2)
        XCTAssertNil(edge.join(viewer2, "show", uid: 2, as: .audience).failure)
        edge.now = .seconds(3)
        XCTAssertNil(edge.run(edge.plane.setRole(viewer1, requestID: 10, channel: "show", role: .broadcaster, now: edge.now)).failure)
        edge.now = .seconds(4)
        XCTAssertNil(edge.run(edge.plane.setRole(viewer1, requestID: 11, channel: "show", role: .audience, now: edge.now)).failure)
        edge.now = .seconds(5)
        XCTAssertNil(edge.run(edge.plane.leave(viewer1, requestID: 12, channel: "show", now: edge.now)).failure)
        edge.now = .seconds(6)
        XCTAssertNil(edge.run(edge.plane.leave(host, requestID: 13, channel: "show", now: edge.now)).failure)
        edge.now = .seconds(7)
        XCTAssertNil(edge.run(edge.plane.leave(viewer2, requestID: 14, channel: "show", now: edge.now)).failure)

        XCTAssertEqual(edge.activities, [
            activity(.channelCreated, at: 0),
            activity(.broadcasterJoined, uid: 100, at: 0),
            activity(.audienceJoined, uid: 1, at: 1),
            activity(.audienceJoined, uid: 2, at: 2),
            activity(.roleToBroadcaster, uid: 1, at: 3),
            activity(.roleToAudience, uid: 1, at: 4),
            activity(.audienceLeft, uid: 1, .quit, at: 5),
            activity(.broadcasterLeft, uid: 100, .quit, at: 6),
            activity(.audienceLeft, uid: 2, .quit, at: 7),
            activity(.channelDestroyed, at: 7),
        ])
        XCTAssertEqual(Set(edge.activities.map(\.kind)), Set(ChannelActivity.Kind.allCases), "all eight types")
    }

    func testLeaveReasonsFollowHowTheUserWentAway() {
        var settings = EdgeSettings()
        settings.heartbeatTimeout = .seconds(5)
        var edge = TestEdge(settings: settings)
        let s = (1...8).map { SessionID(UInt64(10 + $0)) }
        for session in s { edge.open(session) }

        // Quit: closing the session.
        edge.join(s[0], "a", uid: 1, as: .broadcaster)
        _ = edge.run(edge.plane.closeSession(s[0], requestID: 1, now: edge.now))
        // Replaced: the same uid from another session (the channel lives on).
        edge.join(s[1], "b", uid: 2, as: .audience)
        edge.join(s[2], "b", uid: 2, as: .audience)
        // Privilege expired: the join privilege runs out at 2 s.
        edge.join(s[3], "c", uid: 3, as: .broadcaster, grant: .publisher(expiry: .at(.seconds(2))))
        // Dropped: silent for the heartbeat timeout (the others keep talking).
        edge.join(s[4], "d", uid: 4, as: .audience)
        edge.advance(by: .seconds(6), alive: [s[1], s[2], s[3], s[5], s[6], s[7]])
        // Server: the edge drains.
        edge.join(s[5], "e", uid: 5, as: .broadcaster)
        _ = edge.run(edge.plane.closeAllSessions(reason: .unavailable("draining"), now: edge.now))

        let leaves = edge.activities.filter { $0.reason != nil }.map { "\($0.kind.rawValue) \($0.channel) \($0.uid) \($0.reason!)" }
        XCTAssertEqual(leaves, [
            "104 a 1 quit",
            "106 b 2 replaced",
            "104 c 3 privilegeExpired",
            "106 d 4 dropped",
            "106 b 2 server",  // the session that took uid 2 over
            "104 e 5 server",
        ])
        // The replacement did not end channel b before the drain did.
        let b = edge.activities.filter { $0.channel == "b" }.map(\.kind)
        XCTAssertEqual(b, [.channelCreated, .audienceJoined, .audienceLeft, .audienceJoined, .audienceLeft, .channelDestroyed])
        XCTAssertEqual(edge.plane.channelCount, 0)
    }

    func testARefusedJoinReportsNothing() {
        var edge = TestEdge()
        edge.open(host)
        let refused = edge.join(host, "show", uid: 7, as: .audience, grant: .subscriber(channel: "other"))
        XCTAssertEqual(refused.failure?.code, .tokenChannelMismatch)
        XCTAssertEqual(edge.activities, [])
        XCTAssertEqual(edge.plane.channelCount, 0)
    }

    func testChannelSummariesListBroadcastersAndConnections() {
        var edge = TestEdge()
        for session in [host, viewer1, viewer2, guest] { edge.open(session) }
        edge.join(host, "show", uid: 100, as: .broadcaster)
        edge.join(viewer1, "show", uid: 1, as: .audience)
        edge.join(guest, "show", uid: 50, as: .broadcaster)
        edge.join(viewer2, "alpha", uid: 2, as: .audience)
        XCTAssertEqual(edge.plane.channelSummaries, [
            ChannelSummary(name: "alpha", broadcasters: [], connections: 1),
            ChannelSummary(name: "show", broadcasters: [100, 50], connections: 3),
        ])
        let wire = EdgeCodec.wire(edge.plane.channelSummaries[1], edge: "edge-1")
        XCTAssertEqual(wire.name, "show")
        XCTAssertEqual(wire.edge, "edge-1")
        XCTAssertEqual(wire.publishers, [100, 50])
        XCTAssertEqual(wire.subscribers, 3)
    }

    func testActivitiesGoOnTheWireWithTheSeedsNumbers() {
        let left = EdgeCodec.wire(ChannelActivity(.broadcasterLeft, channel: "show", uid: 9, reason: .kicked, at: .seconds(3)), atMs: 1_700_000_000_123)
        XCTAssertEqual(left.type, .broadcasterLeft)
        XCTAssertEqual(left.type.rawValue, 104)
        XCTAssertEqual(left.reason, .kicked)
        XCTAssertEqual(left.reason.rawValue, 3)
        XCTAssertEqual(left.channel, "show")
        XCTAssertEqual(left.uid, 9)
        XCTAssertEqual(left.atMs, 1_700_000_000_123)
        for kind in ChannelActivity.Kind.allCases {
            XCTAssertEqual(EdgeCodec.wire(ChannelActivity(kind, channel: "c", at: .zero), atMs: 0).type.rawValue, kind.rawValue)
        }
        for reason in ChannelActivity.LeaveReason.allCases {
            let wire = EdgeCodec.wire(ChannelActivity(.audienceLeft, channel: "c", uid: 1, reason: reason, at: .zero), atMs: 0)
            XCTAssertEqual(wire.reason.rawValue, reason.rawValue)
        }
        XCTAssertEqual(EdgeCodec.wire(ChannelActivity(.audienceJoined, channel: "c", uid: 1, at: .zero), atMs: 0).reason, .unspecified)
    }
}
