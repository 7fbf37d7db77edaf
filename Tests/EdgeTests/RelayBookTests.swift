import Edge
import ShowroomWire
import XCTest

/// ``RelayBook``: the life of a relayed channel's pull, on a fake clock.
final class RelayBookTests: XCTestCase {
    private let origin = RelayOrigin(id: "edge-1", endpoint: "tcp://127.0.0.1:1001", curvePublicKey: "key")
    private let newOrigin = RelayOrigin(id: "edge-3", endpoint: "tcp://127.0.0.1:1003")

    private func book() -> RelayBook { RelayBook() }

    /// The directives of a pull over a new link: opened with the `n`th uid of a book starting at 0.
    private func pulledOverNewLink(_ channel: String, from origin: RelayOrigin, n: UInt32 = 1) -> [RelayDirective] {
        [.openLink(origin: origin, uid: RelayLinkIdentity.firstUID + n), .link(channel: channel, origin: origin)]
    }

    func testTheFirstViewerPullsOnceAndTheLinkGoesAfterTheGraceOfTheLastOne() {
        var relays = book()
        XCTAssertEqual(relays.host("show", origin: origin, now: .zero), [])
        XCTAssertEqual(relays.viewerJoined("show"), pulledOverNewLink("show", from: origin))
        XCTAssertEqual(relays.viewerJoined("show"), [], "one pull however many viewers")
        XCTAssertEqual(relays.viewerJoined("show"), [])
        XCTAssertEqual(relays.viewers(of: "show"), 3)
        for _ in 0..<3 { relays.viewerLeft("show", now: .seconds(10)) }
        XCTAssertEqual(relays.tick(now: .seconds(14)), [], "kept during the grace")
        XCTAssertEqual(relays.tick(now: .seconds(15)), [.unlink(channel: "show", origin: origin), .release(channel: "show")])
        XCTAssertFalse(relays.isRelayed("show"))
    }

    func testAViewerBackWithinTheGraceKeepsTheLink() {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        relays.viewerLeft("show", now: .seconds(1))
        XCTAssertEqual(relays.viewerJoined("show"), [], "the link is still there")
        XCTAssertEqual(relays.tick(now: .seconds(60)), [])
        XCTAssertTrue(relays.isRelayed("show"))
    }

    func testAGrantNoViewerUsesIsForgottenAndExtraLeavesChangeNothing() {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        relays.viewerLeft("show", now: .zero)
        XCTAssertEqual(relays.viewers(of: "show"), 0)
        XCTAssertEqual(relays.tick(now: .seconds(5)), [.release(channel: "show")])
        XCTAssertEqual(relays.viewerJoined("show"), [], "not relayed any more")
        XCTAssertEqual(relays.keyframeWanted(TrackID(channel: "show", uid: 1, kind: .video), now: .zero), [])
    }

    func testBroadcastingInARelayedChannelIsRefusedNamingTheOrigin() throws {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        let options = MediaOptions()
        let requests: [EdgeRequest] = [
            .join(channel: "show", uid: 1, token: "t", role: .broadcaster, options: options),
            .setRole(channel: "show", role: .broadcaster),
            .updateOptions(channel: "show", update: MediaOptionsUpdate(role: .broadcaster)),
        ]
        for request in requests {
            let error = try XCTUnwrap(relays.refusal(of: request), "\(request)")
            XCTAssertEqual(error.code, .channelElsewhere)
            XCTAssertEqual(error.redirect?.edgeID, "edge-1")
            XCTAssertEqual(error.redirect?.clientEndpoint, "tcp://127.0.0.1:1001")
            XCTAssertEqual(error.redirect?.clientCurvePublicKey, "key")
        }
        XCTAssertNil(relays.refusal(of: .join(channel: "show", uid: 1, token: "t", role: .audience, options: options)))
        XCTAssertNil(relays.refusal(of: .setRole(channel: "show", role: .audience)))
        XCTAssertNil(relays.refusal(of: .join(channel: "other", uid: 1, token: "t", role: .broadcaster, options: options)))
    }

    func testKeyframeRequestsGoUpstreamAtMostOncePerSecondPerTrack() {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        let video = TrackID(channel: "show", uid: 1, kind: .video)
        let other = TrackID(channel: "show", uid: 2, kind: .video)
        var sent = 0
        for ms in stride(from: 0, to: 3000, by: 20) {
            sent += relays.keyframeWanted(video, now: .milliseconds(ms)).count
        }
        XCTAssertEqual(sent, 3, "3 s of requests every 20 ms: one a second")
        XCTAssertEqual(relays.keyframeWanted(other, now: .milliseconds(2990)), [.requestKeyframe(other, origin: origin)])
    }

    func testALostOriginIsClaimedEvery250msThenSlowerUntilAnAnswerNamesAnOrigin() {
        var settings = RelayBook.Settings()
        settings.fastReclaims = 4
        var relays = RelayBook(settings: settings)
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        XCTAssertEqual(relays.linkDown(endpoint: "tcp://elsewhere", now: .seconds(1)), [], "another edge's link")
        XCTAssertEqual(relays.linkDown(endpoint: origin.endpoint, now: .seconds(1)), [.claim(channel: "show")])
        XCTAssertEqual(relays.linkDown(endpoint: origin.endpoint, now: .seconds(1)), [], "once")
        XCTAssertTrue(relays.isDown("show"))
        XCTAssertEqual(relays.keyframeWanted(TrackID(channel: "show", uid: 1, kind: .video), now: .seconds(1)), [], "nobody to ask")
        var claims: [Duration] = []
        var now = Duration.seconds(1)
        while now < .seconds(6) {
            now += .milliseconds(10)
            if relays.tick(now: now).contains(.claim(channel: "show")) { claims.append(now) }
        }
        XCTAssertEqual(Array(claims.prefix(3)), [.milliseconds(1250), .milliseconds(1500), .milliseconds(1750)])
        XCTAssertEqual(claims[3], .seconds(3) + .milliseconds(750), "slower after the fast ones")
        XCTAssertLessThanOrEqual(claims.count, 6, "bounded")
        // An answer naming the old origin's successor links there.
        XCTAssertEqual(relays.host("show", origin: newOrigin, now: now), pulledOverNewLink("show", from: newOrigin, n: 2))
        XCTAssertFalse(relays.isDown("show"))
        XCTAssertEqual(relays.origin(of: "show"), newOrigin)
        XCTAssertEqual(relays.tick(now: now + .seconds(1)), [])
    }

    /// The stand-in sessions of the directives, in order.
    private func ended(_ directives: [RelayDirective], dropped: Bool = true) -> [SessionID] {
        directives.compactMap { if case .endStandIn(let id, dropped) = $0 { id } else { nil } }
    }

    private func opened(_ directives: [RelayDirective]) -> SessionID? {
        guard directives.count == 1, case .openStandIn(let id, _) = directives[0] else { return nil }
        return id
    }

    func testPublishersGoOfflineOnlyIfTheOriginIsNotBackWithinASecond() throws {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        let one = try XCTUnwrap(opened(relays.publisherJoined("show", uid: 1)))
        let two = try XCTUnwrap(opened(relays.publisherJoined("show", uid: 2)))
        _ = relays.linkDown(endpoint: origin.endpoint, now: .seconds(10))
        _ = relays.host("show", origin: origin, now: .seconds(10) + .milliseconds(300))
        XCTAssertEqual(relays.publisherJoined("show", uid: 1), [], "announced again by the origin: the stand-in stays")
        let ticks = relays.tick(now: .seconds(11))
        XCTAssertEqual(ticks, [.endStandIn(two, dropped: true)], "only the one the origin did not announce again")
        XCTAssertFalse(relays.isStandIn(two))
        XCTAssertEqual(relays.tick(now: .seconds(12)), [])

        // Not back at all: both go after the grace.
        let twoAgain = try XCTUnwrap(opened(relays.publisherJoined("show", uid: 2)))
        XCTAssertNotEqual(twoAgain, two, "a new stand-in session")
        _ = relays.linkDown(endpoint: origin.endpoint, now: .seconds(20))
        XCTAssertEqual(ended(relays.tick(now: .seconds(20) + .milliseconds(990))), [])
        XCTAssertEqual(ended(relays.tick(now: .seconds(21))), [one, twoAgain])
    }

    func testAStandInIsOpenedOncePerPublisherNeverWithAClientsIdAndQuitsWhenItsPublisherLeaves() throws {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        let directives = relays.publisherJoined("show", uid: 7)
        guard case .openStandIn(let id, let publisher) = directives.first, directives.count == 1 else { return XCTFail("\(directives)") }
        XCTAssertEqual(publisher, RelayedPublisher(channel: "show", uid: 7))
        XCTAssertEqual(id.rawValue & RelayBook.standInIDBase, RelayBook.standInIDBase, "outside every routing id")
        XCTAssertTrue(relays.isStandIn(id))
        XCTAssertEqual(relays.standIn(of: publisher), id)
        XCTAssertEqual(relays.publisherJoined("show", uid: 7), [], "announced twice: one stand-in")
        XCTAssertEqual(relays.publisherLeft("show", uid: 7), [.endStandIn(id, dropped: false)])
        XCTAssertFalse(relays.isStandIn(id))
        XCTAssertEqual(relays.publisherLeft("show", uid: 7), [], "a second offline ends nothing")
        XCTAssertEqual(relays.publisherLeft("other", uid: 9), [], "a publisher never announced")
        XCTAssertFalse(relays.isStandIn(SessionID(1)), "a client's session")
    }

    func testAReleasedChannelsStandInsStayForTheGraceUnlessTheirPublishersReturn() throws {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        let one = try XCTUnwrap(opened(relays.publisherJoined("show", uid: 1)))
        _ = try XCTUnwrap(opened(relays.publisherJoined("show", uid: 2)))
        // This edge became the channel's origin: no more pulling, the stand-ins wait a moment.
        XCTAssertEqual(relays.stopRelaying("show", now: .seconds(1)), [.unlink(channel: "show", origin: origin), .release(channel: "show")])
        XCTAssertFalse(relays.isIdle, "the stand-ins are still shown")
        // Uid 2 comes back through the origin meanwhile (relayed again): its stand-in stays.
        _ = relays.host("show", origin: origin, now: .seconds(1) + .milliseconds(100))
        XCTAssertEqual(relays.publisherJoined("show", uid: 2), [])
        XCTAssertEqual(relays.tick(now: .seconds(1) + .milliseconds(900)), [])
        XCTAssertEqual(relays.tick(now: .seconds(2)), [.endStandIn(one, dropped: false)], "quit for the viewers, not dropped")
        XCTAssertEqual(relays.tick(now: .seconds(3)), [])
    }

    func testARelayReportsItsViewersButNotTheChannelsCreationAndEnd() {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        let created = relays.report(ChannelActivity(.channelCreated, channel: "show", at: .zero), now: .zero)
        XCTAssertFalse(created.reported, "the origin's channel")
        let joined = relays.report(ChannelActivity(.audienceJoined, channel: "show", uid: 5, at: .zero), now: .zero)
        XCTAssertTrue(joined.reported)
        XCTAssertEqual(joined.directives, pulledOverNewLink("show", from: origin), "the first viewer pulls")
        XCTAssertEqual(relays.viewers(of: "show"), 1)
        XCTAssertTrue(relays.report(ChannelActivity(.audienceLeft, channel: "show", uid: 5, at: .zero), now: .zero).reported)
        XCTAssertEqual(relays.viewers(of: "show"), 0)
        XCTAssertFalse(relays.report(ChannelActivity(.channelDestroyed, channel: "show", at: .zero), now: .zero).reported,
                       "its end was not this edge's either")
        // An ordinary channel's are reported, and a destroy the book never saw created too.
        XCTAssertTrue(relays.report(ChannelActivity(.channelCreated, channel: "own", at: .zero), now: .zero).reported)
        XCTAssertTrue(relays.report(ChannelActivity(.channelDestroyed, channel: "own", at: .zero), now: .zero).reported)
        XCTAssertTrue(relays.report(ChannelActivity(.channelDestroyed, channel: "show", at: .zero), now: .zero).reported)
    }

    func testRelayLinkUidsStayInTheRelayRangeAndWrap() {
        var relays = RelayBook(firstLinkUID: UInt32.max)
        var seen: Set<UInt32> = []
        for _ in 0..<3 {
            let uid = relays.nextLinkUID()
            XCTAssertTrue(RelayLinkIdentity.isLinkUID(uid), "\(uid)")
            seen.insert(uid)
        }
        XCTAssertEqual(seen.count, 3, "each link its own uid")
        var fromZero = RelayBook(firstLinkUID: 0)
        XCTAssertEqual(fromZero.nextLinkUID(), RelayLinkIdentity.firstUID + 1)
    }

    func testAnAnswerAdmittingTheChannelHereEndsRelayingAndAViewerlessLostChannelIsReleased() {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        _ = relays.linkDown(endpoint: origin.endpoint, now: .zero)
        XCTAssertEqual(relays.stopRelaying("show", now: .zero), [.release(channel: "show")])
        XCTAssertNil(relays.refusal(of: .setRole(channel: "show", role: .broadcaster)), "an ordinary channel now")

        _ = relays.host("live", origin: origin, now: .zero)
        _ = relays.viewerJoined("live")
        _ = relays.linkDown(endpoint: origin.endpoint, channel: "live", now: .zero)
        relays.viewerLeft("live", now: .milliseconds(10))
        XCTAssertEqual(relays.tick(now: .milliseconds(20)), [.release(channel: "live")])
    }

    func testAnAnswerWhileTheLinkRunsKeepsTheOrigin() {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        XCTAssertEqual(relays.host("show", origin: newOrigin, now: .seconds(1)), [])
        XCTAssertEqual(relays.origin(of: "show"), origin)
    }

    // MARK: - Links

    func testOneLinkPerOriginCarriesItsChannelsAndClosesOnceTheLastLeaveIsAnswered() {
        var relays = book()
        let uid = RelayLinkIdentity.firstUID + 1
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.host("live", origin: origin, now: .zero)
        XCTAssertEqual(relays.viewerJoined("show"), pulledOverNewLink("show", from: origin))
        XCTAssertEqual(relays.viewerJoined("live"), [.link(channel: "live", origin: origin)], "the same link")
        XCTAssertTrue(relays.pulls("show", from: origin.endpoint))
        XCTAssertTrue(relays.pulls("live", from: origin.endpoint))
        XCTAssertFalse(relays.pulls("show", from: newOrigin.endpoint), "not over another edge's link")

        XCTAssertEqual(relays.stopRelaying("show", now: .seconds(1)), [.unlink(channel: "show", origin: origin), .release(channel: "show")])
        XCTAssertFalse(relays.pulls("show", from: origin.endpoint), "what still arrives for it is dropped")
        XCTAssertEqual(relays.leaveAnswered(onLink: uid, to: origin.endpoint), [], "live still uses the link")
        XCTAssertEqual(relays.stopRelaying("live", now: .seconds(1)), [.unlink(channel: "live", origin: origin), .release(channel: "live")])
        XCTAssertEqual(relays.leaveAnswered(onLink: uid, to: origin.endpoint), [.closeLink(origin: origin, uid: uid)])
        XCTAssertEqual(relays.leaveAnswered(onLink: uid, to: origin.endpoint), [], "closed once")

        _ = relays.host("show", origin: origin, now: .seconds(2))
        XCTAssertEqual(relays.viewerJoined("show"), pulledOverNewLink("show", from: origin, n: 2), "a new link, a new uid")
    }

    func testARefusedJoinClaimsAgainAndClosesALinkThatPullsNothingElse() {
        var relays = book()
        let uid = RelayLinkIdentity.firstUID + 1
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.host("live", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        _ = relays.viewerJoined("live")
        XCTAssertEqual(relays.channelLost("show", onLink: uid, to: origin.endpoint, now: .seconds(1)), [.claim(channel: "show")])
        XCTAssertTrue(relays.isDown("show"))
        XCTAssertFalse(relays.isDown("live"), "the link still runs for live")
        XCTAssertEqual(relays.channelLost("live", onLink: uid, to: origin.endpoint, now: .seconds(1)),
                       [.claim(channel: "live"), .closeLink(origin: origin, uid: uid)])
        // An answer naming the origin again links anew.
        XCTAssertEqual(relays.host("show", origin: origin, now: .seconds(2)), pulledOverNewLink("show", from: origin, n: 2))
    }

    func testABrokenLinkIsForgottenAndWhatArrivesOnIt() throws {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        let standIn = try XCTUnwrap(opened(relays.publisherJoined("show", uid: 1)))
        XCTAssertEqual(relays.standIn(ofFrameIn: "show", uid: 1, from: origin.endpoint), standIn)
        XCTAssertEqual(relays.linkDown(endpoint: origin.endpoint, now: .seconds(1)), [.claim(channel: "show")])
        XCTAssertNil(relays.standIn(ofFrameIn: "show", uid: 1, from: origin.endpoint), "the stand-in stays, the link's frames do not")
        XCTAssertEqual(relays.standIn(of: RelayedPublisher(channel: "show", uid: 1)), standIn)
        XCTAssertEqual(relays.leaveAnswered(onLink: RelayLinkIdentity.firstUID + 1, to: origin.endpoint), [], "a late answer")
        XCTAssertEqual(relays.host("show", origin: origin, now: .seconds(2)), pulledOverNewLink("show", from: origin, n: 2))
    }

    /// What an origin's link says is the origin's to choose: channels, uids and links it never
    /// had change nothing.
    func testWhatALinkSaysOfChannelsAndLinksItDoesNotCarryChangesNothing() {
        var relays = book()
        let uid = RelayLinkIdentity.firstUID + 1
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        _ = relays.publisherJoined("other", uid: 9)
        XCTAssertNil(relays.standIn(ofFrameIn: "other", uid: 9, from: origin.endpoint), "a channel not pulled over the link")
        XCTAssertNil(relays.standIn(ofFrameIn: "show", uid: .max, from: origin.endpoint), "a publisher never announced")
        XCTAssertNil(relays.standIn(ofFrameIn: "show", uid: 9, from: newOrigin.endpoint), "another edge's link")
        XCTAssertEqual(relays.channelLost("other", onLink: uid, to: origin.endpoint, now: .zero), [])
        XCTAssertEqual(relays.channelLost(String(repeating: "x", count: 10_000), onLink: uid, to: origin.endpoint, now: .zero), [])
        XCTAssertEqual(relays.channelLost("show", onLink: uid &+ 1, to: origin.endpoint, now: .zero), [], "another link's uid")
        XCTAssertEqual(relays.channelLost("show", onLink: .max, to: "tcp://nowhere", now: .zero), [])
        XCTAssertEqual(relays.leaveAnswered(onLink: .max, to: origin.endpoint), [])
        XCTAssertTrue(relays.pulls("show", from: origin.endpoint))
        XCTAssertFalse(relays.isDown("show"))
    }

    // MARK: - Claims' answers

    func testAClaimAnswerNamingAnOriginHostsTheChannelAsARelay() {
        var relays = book()
        XCTAssertEqual(relays.claimAnswered("show", .relay(origin), hostedHere: false, now: .zero),
                       [.hosted(channel: "show", origin: origin)])
        XCTAssertTrue(relays.isRelayed("show"))
        XCTAssertEqual(relays.claimAnswered("own", .relay(origin), hostedHere: true, now: .zero), [],
                       "a channel that became hosted here meanwhile stays an origin")
        XCTAssertFalse(relays.isRelayed("own"))
        XCTAssertEqual(relays.claimAnswered("free", .admit, hostedHere: false, now: .zero), [])
        XCTAssertEqual(relays.claimAnswered("free", .refuse(.unavailable("no")), hostedHere: false, now: .zero), [])
        XCTAssertFalse(relays.isRelayed("free"))
    }

    func testAClaimAnswerPlacingARunningRelayHereEndsRelaying() {
        var relays = book()
        _ = relays.claimAnswered("show", .relay(origin), hostedHere: false, now: .zero)
        _ = relays.viewerJoined("show")
        XCTAssertEqual(relays.claimAnswered("show", .admit, hostedHere: true, now: .zero), [], "an admit while the link runs changes nothing")
        XCTAssertEqual(relays.claimAnswered("show", .placed, hostedHere: true, now: .seconds(1)),
                       [.unlink(channel: "show", origin: origin), .release(channel: "show")])
        XCTAssertFalse(relays.isRelayed("show"))
    }

    func testClaimAnswersAfterTheLinkBrokeLinkAgainEndRelayingOrWait() {
        var relays = book()
        for channel in ["a", "b", "c"] {
            _ = relays.claimAnswered(channel, .relay(origin), hostedHere: false, now: .zero)
            _ = relays.viewerJoined(channel)
        }
        _ = relays.linkDown(endpoint: origin.endpoint, now: .seconds(1))
        XCTAssertEqual(relays.claimAnswered("a", .refuse(.unavailable("no coordinator")), hostedHere: true, now: .seconds(1)), [])
        XCTAssertTrue(relays.isDown("a"), "waits for the next claim")
        XCTAssertEqual(relays.claimAnswered("b", .admit, hostedHere: true, now: .seconds(1)), [.release(channel: "b")])
        XCTAssertFalse(relays.isRelayed("b"))
        XCTAssertEqual(relays.claimAnswered("c", .relay(newOrigin), hostedHere: true, now: .seconds(1)),
                       [.hosted(channel: "c", origin: newOrigin)] + pulledOverNewLink("c", from: newOrigin, n: 2))
    }

    func testARelayLinkMayNotJoinAChannelThisEdgeRelaysItself() throws {
        var relays = book()
        _ = relays.host("show", origin: origin, now: .zero)
        let join = EdgeRequest.join(channel: "show", uid: RelayLinkIdentity.firstUID, token: "t", role: .audience, options: MediaOptions())
        XCTAssertNil(relays.refusal(of: join), "a viewer's join")
        XCTAssertEqual(try XCTUnwrap(relays.refusal(of: join, fromRelayLink: true)).code, .unavailable)
        let elsewhere = EdgeRequest.join(channel: "own", uid: RelayLinkIdentity.firstUID, token: "t", role: .audience, options: MediaOptions())
        XCTAssertNil(relays.refusal(of: elsewhere, fromRelayLink: true), "a channel hosted here is pulled from here")
    }

    // MARK: - What links say

    func testWhatTheOriginSaysOverTheLinkOpensAndEndsStandInsAndTheirTracks() throws {
        var relays = book()
        let link = RelayLinkIdentity.firstUID + 1
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        let id = try XCTUnwrap(opened(relays.linkEvent(.userJoined(channel: "show", uid: 7), onLink: link, from: origin.endpoint, now: .zero)))
        let video = TrackID(channel: "show", uid: 7, kind: .video)
        XCTAssertEqual(relays.linkEvent(.remoteTrackPublished(video), onLink: link, from: origin.endpoint, now: .zero),
                       [.standInTrack(id, video, published: true)])
        XCTAssertEqual(relays.linkEvent(.remoteTrackUnpublished(video), onLink: link, from: origin.endpoint, now: .zero),
                       [.standInTrack(id, video, published: false)])
        XCTAssertEqual(relays.linkEvent(.userOffline(channel: "show", uid: 7, reason: .quit), onLink: link, from: origin.endpoint, now: .zero),
                       [.endStandIn(id, dropped: false)])
        XCTAssertEqual(relays.linkEvent(.remoteTrackPublished(video), onLink: link, from: origin.endpoint, now: .zero), [],
                       "a publisher with no stand-in publishes nothing here")
    }

    func testAConnectionTheOriginClosesClaimsTheChannelAgain() {
        var relays = book()
        let link = RelayLinkIdentity.firstUID + 1
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        let directives = relays.linkEvent(.connectionClosed(channel: "show", reason: ShowroomError(.privilegeExpired, "token")), onLink: link,
                                          from: origin.endpoint, now: .seconds(1))
        guard case .log(let entry) = directives.first else { return XCTFail("\(directives)") }
        XCTAssertEqual(entry.level, .warning)
        XCTAssertTrue(entry.message.contains("edge-1"), entry.message)
        XCTAssertEqual(Array(directives.dropFirst()), [.claim(channel: "show"), .closeLink(origin: origin, uid: link)])
        XCTAssertTrue(relays.isDown("show"))
    }

    /// What an origin's link says of channels it does not carry, through another link's uid or
    /// from another edge, changes nothing.
    func testWhatALinkSaysOfOtherChannelsOrOverAnotherLinkChangesNothing() {
        var relays = book()
        let link = RelayLinkIdentity.firstUID + 1
        _ = relays.host("show", origin: origin, now: .zero)
        _ = relays.viewerJoined("show")
        let video = TrackID(channel: "other", uid: 7, kind: .video)
        let events: [(EdgeEvent, UInt32, String)] = [
            (.userJoined(channel: "other", uid: 7), link, origin.endpoint),
            (.userJoined(channel: "show", uid: 7), link, newOrigin.endpoint),
            (.userJoined(channel: String(repeating: "x", count: 10_000), uid: .max), link, origin.endpoint),
            (.remoteTrackPublished(video), link, origin.endpoint),
            (.userOffline(channel: "other", uid: 7, reason: .dropped), link, origin.endpoint),
            (.connectionClosed(channel: "other", reason: .unavailable("gone")), link, origin.endpoint),
            (.connectionClosed(channel: "show", reason: .unavailable("gone")), link, newOrigin.endpoint),
            (.sessionClosed(reason: .unavailable("gone")), link, origin.endpoint),
            (.userJoined(channel: "", uid: 0), .max, "tcp://nowhere"),
        ]
        for (event, uid, endpoint) in events {
            XCTAssertEqual(relays.linkEvent(event, onLink: uid, from: endpoint, now: .zero), [], "\(event) from \(endpoint)")
        }
        // Another link's uid: logged, nothing lost (the link it names is not this one).
        let stale = relays.linkEvent(.connectionClosed(channel: "show", reason: .unavailable("gone")), onLink: link &+ 1,
                                     from: origin.endpoint, now: .zero)
        XCTAssertTrue(stale.allSatisfy { if case .log = $0 { true } else { false } }, "\(stale)")
        XCTAssertTrue(relays.pulls("show", from: origin.endpoint))
        XCTAssertFalse(relays.isDown("show"))
    }
}
