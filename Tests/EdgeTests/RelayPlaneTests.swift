import Edge
import ShowroomWire
import XCTest

/// The plane's part in relaying: on the origin, relay links are neither reported nor counted and
/// their keyframe requests reach the publisher; on the relay, stand-in publishers.
final class RelayPlaneTests: XCTestCase {
    private let host = SessionID(1)
    private let link = SessionID(2)
    private let viewer = SessionID(3)
    private let linkUID = RelayLinkIdentity.firstUID + 1

    private func originWithLink() -> TestEdge {
        var edge = TestEdge()
        edge.open(host)
        edge.join(host, "show", uid: 1, as: .broadcaster)
        edge.open(link, client: RelayLinkIdentity.clientIDPrefix + "abc")
        edge.activities = []
        let joined = edge.join(link, "show", uid: linkUID, as: .audience)
        XCTAssertNil(joined.failure)
        return edge
    }

    func testARelayLinkIsNeitherReportedNorCountedOnTheOrigin() {
        var edge = originWithLink()
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        XCTAssertEqual(edge.activities.map(\.kind), [.audienceJoined], "the viewer's join only")
        XCTAssertEqual(edge.plane.channelSummaries.first?.connections, 2, "host and viewer, not the link")
        XCTAssertEqual(edge.plane.channelSummaries.first?.broadcasters, [1])
        edge.activities = []
        _ = edge.run(edge.plane.leave(link, channel: "show", now: edge.now))
        XCTAssertEqual(edge.activities, [], "the link's leave is not reported either")
    }

    func testABorrowedPrefixWithAnAppUidIsCountedAndReported() {
        var edge = TestEdge()
        edge.open(viewer, client: RelayLinkIdentity.clientIDPrefix + "sneaky")
        edge.join(viewer, "show", uid: 9, as: .audience)
        XCTAssertEqual(edge.activities.map(\.kind), [.channelCreated, .audienceJoined])
        XCTAssertEqual(edge.plane.channelSummaries.first?.connections, 1)
    }

    func testARelayLinksKeyframeRequestReachesThePublisherPaced() {
        var edge = originWithLink()
        let track = video("show", 1)
        // The link's own subscription asked for one when it joined.
        edge.now += edge.plane.settings.keyframeRequestInterval
        XCTAssertEqual(edge.plane.relayKeyframeRequest(track, from: link, now: edge.now), [.requestKeyframe(track, from: host)])
        XCTAssertEqual(edge.plane.relayKeyframeRequest(track, from: link, now: edge.now + .milliseconds(100)), [], "paced")
        edge.now += edge.plane.settings.keyframeRequestInterval
        XCTAssertEqual(edge.plane.relayKeyframeRequest(track, from: link, now: edge.now), [.requestKeyframe(track, from: host)])
    }

    func testKeyframeRequestsFromAnythingButASubscribingRelayLinkAreIgnored() {
        var edge = originWithLink()
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        let now = edge.now + .seconds(10)
        XCTAssertEqual(edge.plane.relayKeyframeRequest(video("show", 1), from: viewer, now: now), [], "not a relay link")
        XCTAssertEqual(edge.plane.relayKeyframeRequest(video("show", 7), from: link, now: now), [], "no such track")
        XCTAssertEqual(edge.plane.relayKeyframeRequest(video("other", 1), from: link, now: now), [], "no such channel")
        XCTAssertEqual(edge.plane.relayKeyframeRequest(video("show", 1), from: SessionID(99), now: now), [], "no session")
    }

    func testThePublisherArrivingWhereItsStandInWasTakesItOverWithoutTheViewersSeeingIt() {
        // This edge became the channel's origin: the host joins where its stand-in published.
        var edge = TestEdge()
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        let standIn = SessionID(0xFF00_0000_0000_0001)
        _ = edge.run(edge.plane.openStandIn(standIn, clientID: "stand-in", now: edge.now))
        edge.join(standIn, "show", uid: 1, as: .broadcaster)
        _ = edge.publish(standIn, "show", uid: 1, .video, key: true)
        XCTAssertEqual(edge.frames(to: viewer).count, 1)
        edge.activities = []

        edge.open(host)
        let joined = edge.join(host, "show", uid: 1, as: .broadcaster)
        XCTAssertNil(joined.failure)
        XCTAssertEqual(joined.events(to: viewer), [], "no offline, no joined, no track change for the viewer")
        XCTAssertFalse(joined.events(to: host).contains { if case .remoteTrackPublished(let track) = $0 { track.uid == 1 } else { false } },
                       "the host hears of no track of its own")
        XCTAssertEqual(edge.activities.map(\.kind), [.broadcasterJoined], "the real publisher is reported")
        XCTAssertEqual(edge.plane.channel("show")?.broadcasters, [1])
        // Its frames reach the viewer, who never resubscribed; the stand-in's do not any more.
        _ = edge.publish(host, "show", uid: 1, .video)
        XCTAssertEqual(edge.frames(to: viewer).count, 2)
        _ = edge.publish(standIn, "show", uid: 1, .video)
        XCTAssertEqual(edge.frames(to: viewer).count, 2)
        // The stand-in going later changes nothing for the viewer.
        let gone = edge.run(edge.plane.closeSession(standIn, now: edge.now))
        XCTAssertEqual(gone.events(to: viewer), [])
    }

    func testAnAppPublisherReplacingAnotherSessionStillGoesOfflineAndJoins() {
        var edge = TestEdge()
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        edge.open(host)
        edge.join(host, "show", uid: 1, as: .broadcaster)
        edge.open(SessionID(7))
        let joined = edge.join(SessionID(7), "show", uid: 1, as: .broadcaster)
        XCTAssertEqual(joined.events(to: viewer).filter { if case .userOffline = $0 { true } else if case .userJoined = $0 { true } else { false } },
                       [.userOffline(channel: "show", uid: 1, reason: .dropped), .userJoined(channel: "show", uid: 1)])
    }

    func testAStandInPublishesUnreportedAndNeverTimesOut() {
        var edge = TestEdge()
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        edge.activities = []
        let standIn = SessionID(0xFF00_0000_0000_0001)
        _ = edge.run(edge.plane.openStandIn(standIn, clientID: "stand-in", now: edge.now))
        let joined = edge.join(standIn, "show", uid: 1, as: .broadcaster)
        XCTAssertNil(joined.failure)
        XCTAssertTrue(joined.events(to: viewer).contains(.userJoined(channel: "show", uid: 1)), "an ordinary remote user to the viewer")
        XCTAssertEqual(edge.activities, [], "the origin reports the publisher")
        XCTAssertEqual(edge.plane.channelSummaries.first?.broadcasters, [])
        XCTAssertEqual(edge.plane.channelSummaries.first?.connections, 1, "the local viewer")
        let ticks = edge.advance(by: edge.plane.settings.heartbeatTimeout * 2, alive: [viewer])
        XCTAssertFalse(ticks.directives.closedSessions.contains(standIn))
        XCTAssertNotNil(edge.plane.session(standIn))
        _ = edge.publish(standIn, "show", uid: 1, .video, key: true)
        XCTAssertEqual(edge.frames(to: viewer).count, 1)
    }

    func testAStandInJoinsPublishingNothingUntilTheOriginAnnouncesItsTracks() {
        var edge = TestEdge()
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        let standIn = SessionID(RelayBook.standInIDBase | 1)
        let (joined, directives) = edge.plane.joinStandIn(standIn, channel: "show", uid: 1, now: edge.now)
        let events = edge.run(directives).events(to: viewer)
        XCTAssertTrue(joined)
        XCTAssertTrue(events.contains(.userJoined(channel: "show", uid: 1)))
        XCTAssertEqual(edge.plane.connection(standIn, channel: "show")?.role, .broadcaster)
        XCTAssertEqual(edge.plane.connection(standIn, channel: "show")?.publishing, [], "nothing announced yet")

        let published = edge.run(edge.plane.standInTrack(standIn, video("show", 1), published: true, now: edge.now))
        XCTAssertTrue(published.events(to: viewer).contains(.remoteTrackPublished(video("show", 1))))
        XCTAssertEqual(edge.plane.connection(standIn, channel: "show")?.publishing, [.video])
        let withdrawn = edge.run(edge.plane.standInTrack(standIn, video("show", 1), published: false, now: edge.now))
        XCTAssertTrue(withdrawn.events(to: viewer).contains(.remoteTrackUnpublished(video("show", 1))))
        XCTAssertEqual(edge.plane.connection(standIn, channel: "show")?.publishing, [])
    }

    /// What the origin announces names any channel and track: a track of a channel the stand-in
    /// is not in publishes nothing anywhere.
    func testAStandInsTrackInAChannelItIsNotInChangesNothing() {
        var edge = TestEdge()
        let standIn = SessionID(RelayBook.standInIDBase | 1)
        _ = edge.run(edge.plane.joinStandIn(standIn, channel: "show", uid: 1, now: edge.now).directives)
        _ = edge.run(edge.plane.standInTrack(standIn, video("elsewhere", 1), published: true, now: edge.now))
        XCTAssertNil(edge.plane.connection(standIn, channel: "elsewhere"))
        XCTAssertEqual(edge.plane.channelCount, 1)
        XCTAssertEqual(edge.plane.connection(standIn, channel: "show")?.publishing, [], "nor in its own channel")
    }
}
