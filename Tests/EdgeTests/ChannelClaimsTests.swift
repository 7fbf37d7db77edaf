import Edge
import ShowroomWire
import XCTest

/// ``ChannelClaims``: the joins an edge holds while it asks for a channel (`CHANNEL_CLAIM`), with
/// plain values and a fake clock; which joins are held at all, and what each answer of the
/// coordinator means for them.
final class ChannelClaimsTests: XCTestCase {
    private let origin = RelayOrigin(id: "edge-1", endpoint: "tcp://127.0.0.1:1001")
    private let away = ChannelClaims.Arrival(linked: true, hosted: false)

    private func join(_ channel: String, uid: UInt32, role: ClientRole = .audience, token: String = "t") -> EdgeRequest {
        .join(channel: channel, uid: uid, token: token, role: role, options: .defaults(for: role))
    }

    private func held(_ channel: String, session: UInt64, role: ClientRole = .audience, request: UInt64 = 1) -> ChannelClaims.HeldJoin {
        ChannelClaims.HeldJoin(session: SessionID(session), requestID: request, request: join(channel, uid: UInt32(session), role: role),
                               channel: channel)
    }

    /// Holds `held`'s join with every token valid.
    private func hold(_ claims: inout ChannelClaims, _ held: ChannelClaims.HeldJoin, _ arrival: ChannelClaims.Arrival? = nil,
                      now: Duration = .zero) -> [ClaimDirective]? {
        claims.hold(held.request, from: held.session, requestID: held.requestID, arrival ?? away, now: now) { _, _, _ in true }
    }

    private func admitted(_ directives: [ClaimDirective]) -> [SessionID] {
        directives.compactMap { if case .admit(let join) = $0 { join.session } else { nil } }
    }

    private func refused(_ directives: [ClaimDirective]) -> [(SessionID, ShowroomError)] {
        directives.compactMap { if case .refuse(let join, let error) = $0 { (join.session, error) } else { nil } }
    }

    func testSeveralJoinsShareOneClaimAndAreAdmittedTogetherInOrder() {
        var claims = ChannelClaims(timeout: .seconds(5))
        XCTAssertEqual(hold(&claims, held("show", session: 1)), [.claim(channel: "show")])
        XCTAssertEqual(hold(&claims, held("show", session: 2), now: .milliseconds(10)), [], "waits for the claim under way")
        XCTAssertEqual(hold(&claims, held("show", session: 3), now: .milliseconds(20)), [])
        XCTAssertEqual(hold(&claims, held("other", session: 4), now: .milliseconds(20)), [.claim(channel: "other")], "its own claim")
        XCTAssertTrue(claims.isPending("show"))
        XCTAssertEqual(claims.heldJoins, 4)
        let answer = claims.answered("show", .placed, drain: EdgeDrain<Int>(), relays: RelayBook())
        XCTAssertEqual(answer, [1, 2, 3].map { .admit(held("show", session: $0)) })
        XCTAssertFalse(claims.isPending("show"))
        XCTAssertEqual(claims.answered("show", .placed, drain: EdgeDrain<Int>(), relays: RelayBook()), [],
                       "a late second answer releases nothing")
        XCTAssertEqual(claims.heldJoins, 1)
        // The next join after the answer claims again (the channel may have emptied meanwhile).
        XCTAssertEqual(hold(&claims, held("show", session: 5), now: .seconds(1)), [.claim(channel: "show")])
    }

    func testUnansweredClaimsExpireAndTheHoldIsBounded() {
        var claims = ChannelClaims(timeout: .seconds(5), maxHeldJoins: 3)
        XCTAssertEqual(hold(&claims, held("a", session: 1)), [.claim(channel: "a")])
        XCTAssertEqual(hold(&claims, held("b", session: 2), now: .seconds(2)), [.claim(channel: "b")])
        XCTAssertEqual(hold(&claims, held("a", session: 3), now: .seconds(3)), [])
        let full = refused(hold(&claims, held("c", session: 4), now: .seconds(3)) ?? [])
        XCTAssertEqual(full.map(\.0), [SessionID(4)], "beyond the bound: refused")
        XCTAssertEqual(full.first?.1.code, .unavailable)
        XCTAssertFalse(claims.isPending("c"), "a refused join sends no claim")
        XCTAssertTrue(claims.expire(now: .milliseconds(4999)).isEmpty)
        let late = refused(claims.expire(now: .seconds(5)))
        XCTAssertEqual(late.map(\.0), [SessionID(1), SessionID(3)], "a's claim is 5 s old")
        XCTAssertTrue(late.allSatisfy { $0.1.code == .unavailable && $0.1.message.contains("'a'") })
        XCTAssertEqual(refused(claims.expire(now: .seconds(7))).map(\.0), [SessionID(2)])
        XCTAssertEqual(claims.heldJoins, 0)
        XCTAssertEqual(claims.answered("a", .admit, drain: EdgeDrain<Int>(), relays: RelayBook()), [], "an answer after the timeout")
    }

    func testOnlyJoinsOfChannelsNotHostedHereAreHeld() {
        var claims = ChannelClaims()
        let show = held("show", session: 1)
        XCTAssertNil(claims.hold(.leave(channel: "show"), from: SessionID(1), requestID: 1, away, now: .zero) { _, _, _ in true },
                     "not a join")
        XCTAssertNil(hold(&claims, show, ChannelClaims.Arrival(linked: false, hosted: false)), "a standalone edge asks nobody")
        XCTAssertNil(hold(&claims, show, ChannelClaims.Arrival(linked: true, hosted: true)), "hosted here already")
        XCTAssertNil(hold(&claims, show, ChannelClaims.Arrival(linked: true, hosted: false, sessionOpen: false)),
                     "no session: the plane refuses it")
        XCTAssertNil(claims.hold(show.request, from: show.session, requestID: 1, away, now: .zero) { _, _, _ in false },
                     "a bad token: the plane refuses it")
        let link = ChannelClaims.HeldJoin(session: SessionID(9), requestID: 1, request: join("show", uid: RelayLinkIdentity.firstUID + 3),
                                          channel: "show")
        XCTAssertNil(hold(&claims, link, ChannelClaims.Arrival(linked: true, hosted: false, fromRelayLink: true)),
                     "a relay link joins the origin's channel as placed")
        XCTAssertEqual(claims.heldJoins, 0)
        // A relay link's uid from a client's session, or a relay link with a client's uid: asked.
        XCTAssertEqual(hold(&claims, link), [.claim(channel: "show")])
        XCTAssertEqual(hold(&claims, held("show", session: 2), ChannelClaims.Arrival(linked: true, hosted: false, fromRelayLink: true)), [])
        // A broadcaster joining a relayed channel asks even though the channel is hosted.
        XCTAssertEqual(hold(&claims, held("relayed", session: 3, role: .broadcaster),
                            ChannelClaims.Arrival(linked: true, hosted: true, broadcasterInRelay: true)), [.claim(channel: "relayed")])
    }

    func testWhileAClaimIsUnderWayEveryJoinOfItsChannelWaitsForTheAnswer() {
        var claims = ChannelClaims()
        XCTAssertEqual(hold(&claims, held("show", session: 1)), [.claim(channel: "show")])
        // The channel became hosted meanwhile, or the join is one the plane would refuse: it waits
        // all the same, and the answer decides.
        var tokenAsked = false
        XCTAssertEqual(claims.hold(join("show", uid: 2), from: SessionID(2), requestID: 2, ChannelClaims.Arrival(linked: true, hosted: true),
                                   now: .zero) { _, _, _ in tokenAsked = true; return false }, [])
        XCTAssertFalse(tokenAsked, "the token is the plane's to check once admitted")
        XCTAssertEqual(claims.heldJoins, 2)
    }

    func testWhatEachAnswerMeansForTheHeldJoins() {
        let answers: [(ClaimOutcome, admitted: [UInt64])] = [
            (.admit, [1, 2]), (.placed, [1, 2]),
            (.relay(origin), [1]),  // the broadcaster is sent to the origin
            (.refuse(.channelElsewhere("placed on edge-2", redirect: WireRedirect())), []),
        ]
        for (outcome, admittedSessions) in answers {
            var claims = ChannelClaims()
            _ = hold(&claims, held("show", session: 1))
            _ = hold(&claims, held("show", session: 2, role: .broadcaster))
            var relays = RelayBook()
            _ = relays.claimAnswered("show", outcome, hostedHere: false, now: .zero)
            let directives = claims.answered("show", outcome, drain: EdgeDrain<Int>(), relays: relays)
            XCTAssertEqual(admitted(directives), admittedSessions.map(SessionID.init), "\(outcome)")
            XCTAssertEqual(directives.count, 2, "every held join is answered: \(outcome)")
            for (_, error) in refused(directives) {
                XCTAssertEqual(error.code, .channelElsewhere, "\(outcome)")
                if case .relay = outcome { XCTAssertEqual(error.redirect?.edgeID, "edge-1") }
            }
        }
    }

    func testADrainingEdgeRefusesWhatAnAnswerWouldAdmit() {
        var drain = EdgeDrain<Int>()
        _ = drain.begin(nodeID: "edge-1", waiter: 1)
        for outcome: ClaimOutcome in [.admit, .placed, .relay(origin)] {
            var claims = ChannelClaims()
            _ = hold(&claims, held("show", session: 1))
            let directives = claims.answered("show", outcome, drain: drain, relays: RelayBook())
            XCTAssertEqual(refused(directives).map(\.1.code), [.unavailable], "\(outcome)")
        }
    }

    func testARefusedJoinIsAFailedReplyOrForAOneWayJoinAnErrorEvent() {
        let error = ShowroomError.unavailable("no")
        XCTAssertEqual(held("show", session: 1, request: 7).refusal(error),
                       .reply(EdgeReply(requestID: 7, kind: .join, result: .failure(error)), to: SessionID(1)))
        XCTAssertEqual(held("show", session: 1, request: 0).refusal(error),
                       .send(.error(error, channel: "show", track: nil), to: SessionID(1)))
    }

    // MARK: Arrival: the drain, the relays, then the claim

    /// `request` arriving from `session` on `edge`, every token valid unless `tokens` says no.
    private func arrive(
        _ claims: inout ChannelClaims, _ request: EdgeRequest, from session: UInt64, on edge: TestEdge, linked: Bool = true,
        relays: RelayBook = RelayBook(), drain: EdgeDrain<Int> = EdgeDrain<Int>(), tokens: Bool = true
    ) -> ChannelClaims.Admission {
        claims.arrive(request, from: SessionID(session), requestID: 1, linked: linked, plane: edge.plane, relays: relays, drain: drain,
                      now: .zero) { _, _, _ in tokens }
    }

    func testAJoinOfAChannelNotHostedHereIsHeldAndEverythingElseGoesToThePlane() {
        var edge = TestEdge()
        edge.open(SessionID(1))
        edge.open(SessionID(2))
        edge.join(SessionID(2), "hosted", uid: 2, as: .broadcaster)
        var claims = ChannelClaims()
        XCTAssertEqual(arrive(&claims, join("show", uid: 1), from: 1, on: edge), .held([.claim(channel: "show")]))
        XCTAssertEqual(arrive(&claims, join("hosted", uid: 1), from: 1, on: edge), .handOver, "hosted here already")
        XCTAssertEqual(arrive(&claims, join("free", uid: 1), from: 1, on: edge, linked: false), .handOver, "a standalone edge asks nobody")
        XCTAssertEqual(arrive(&claims, join("free", uid: 1), from: 1, on: edge, tokens: false), .handOver, "the plane refuses a bad token")
        XCTAssertEqual(arrive(&claims, join("free", uid: 9), from: 9, on: edge), .handOver, "the plane refuses a join without a session")
        XCTAssertEqual(arrive(&claims, .leave(channel: "show"), from: 1, on: edge), .handOver)
        XCTAssertEqual(arrive(&claims, .openSession(clientID: "c", sdkVersion: "1"), from: 3, on: edge), .handOver)
        XCTAssertEqual(claims.heldJoins, 1)
    }

    func testADrainingEdgeRefusesJoinsAsTheyArriveAndServesTheRest() {
        var edge = TestEdge()
        edge.open(SessionID(1))
        var drain = EdgeDrain<Int>()
        _ = drain.begin(nodeID: "edge-9", waiter: 1)
        var claims = ChannelClaims()
        guard case .refuse(let error) = arrive(&claims, join("show", uid: 1), from: 1, on: edge, drain: drain) else {
            return XCTFail("a join is refused while draining")
        }
        XCTAssertEqual(error, drain.refusal(of: join("show", uid: 1)))
        XCTAssertEqual(arrive(&claims, .leave(channel: "show"), from: 1, on: edge, drain: drain), .handOver)
        XCTAssertEqual(claims.heldJoins, 0, "nothing asked for")
    }

    func testInARelayedChannelABroadcasterAsksTheCoordinatorAndIsElseSentToTheOrigin() {
        var edge = TestEdge()
        edge.open(SessionID(1))
        edge.open(SessionID(7), client: "\(RelayLinkIdentity.clientIDPrefix)x")
        var relays = RelayBook()
        _ = relays.claimAnswered("relayed", .relay(origin), hostedHere: false, now: .zero)
        var claims = ChannelClaims()
        XCTAssertEqual(arrive(&claims, join("relayed", uid: 1), from: 1, on: edge, relays: relays), .handOver,
                       "the audience of a relayed channel is served here")
        XCTAssertEqual(arrive(&claims, join("relayed", uid: 1, role: .broadcaster), from: 1, on: edge, relays: relays),
                       .held([.claim(channel: "relayed")]), "the origin may be gone: the coordinator is asked")
        guard case .refuse(let elsewhere) = arrive(&claims, join("relayed", uid: 2, role: .broadcaster), from: 1, on: edge, linked: false,
                                                   relays: relays)
        else { return XCTFail("with nobody to ask, a broadcaster is sent to the origin") }
        XCTAssertEqual(elsewhere.code, .channelElsewhere)
        XCTAssertEqual(elsewhere.redirect?.edgeID, "edge-1")
        guard case .refuse(let role) = arrive(&claims, .setRole(channel: "relayed", role: .broadcaster), from: 1, on: edge, relays: relays)
        else { return XCTFail("becoming broadcaster in a relayed channel is refused without asking") }
        XCTAssertEqual(role.code, .channelElsewhere)
        guard case .refuse(let linkError) = arrive(&claims, join("relayed", uid: RelayLinkIdentity.firstUID), from: 7, on: edge, relays: relays)
        else { return XCTFail("a relay link may not pull a channel this edge relays itself") }
        XCTAssertEqual(linkError.code, .unavailable)
        XCTAssertEqual(claims.heldJoins, 1)
    }
}
