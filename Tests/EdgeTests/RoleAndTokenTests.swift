import Edge
import ShowroomWire
import XCTest

/// Roles, privileges and the life of a token: refusals, role switches, renewal, expiry.
final class RoleAndTokenTests: XCTestCase {
    /// A host publishing in "room" with `grant`, and two audience members.
    private func room(hostGrant: ChannelGrant = .publisher()) -> TestEdge {
        var edge = TestEdge()
        for session in [host, viewer1, viewer2] { edge.open(session) }
        XCTAssertNil(edge.join(host, "room", uid: 100, as: .broadcaster, grant: hostGrant).failure)
        edge.join(viewer1, "room", uid: 1, as: .audience)
        edge.join(viewer2, "room", uid: 2, as: .audience)
        return edge
    }

    func testAudiencePublishIsRefusedWithItsCodeAndNothingIsForwarded() {
        var edge = room()
        let before = edge.delivered.count
        let first = edge.publish(viewer1, "room", uid: 1, .video, key: true)
        XCTAssertEqual(first.events(to: viewer1).errorCodes, [.roleForbidsPublish])
        XCTAssertEqual(first.events(to: viewer1).first, .error(
            .roleForbidsPublish("uid 1 is audience in channel room and cannot publish video; switch to broadcaster first"),
            channel: "room", track: .video))
        // 30 more frames within the second: still refused, reported no more than once a second.
        var repeated: [EdgeDirective] = []
        for _ in 0..<30 {
            repeated += edge.publish(viewer1, "room", uid: 1, .video)
            edge.now += .milliseconds(20)
        }
        XCTAssertEqual(repeated.events.errorCodes, [])
        edge.now += .milliseconds(500)
        XCTAssertEqual(edge.publish(viewer1, "room", uid: 1, .audio).events(to: viewer1).errorCodes, [.roleForbidsPublish])
        // Stream messages too.
        let message = edge.run(edge.plane.sendStreamMessage(viewer1, requestID: 8, channel: "room", streamID: 1, data: [1], now: edge.now))
        XCTAssertEqual(message.failure?.code, .roleForbidsPublish)

        XCTAssertEqual(edge.delivered.count, before, "nothing reached anyone")
        XCTAssertEqual(edge.plane.statistics.framesRefused, 32)
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 1, kind: .video), nil)
    }

    func testAudienceBecomesBroadcasterWithinItsPrivilegesAndPublishes() {
        var edge = room()
        edge.open(guest)
        edge.join(guest, "room", uid: 50, as: .audience, options: MediaOptions(publishAudio: true, publishVideo: true), grant: .publisher())
        let up = edge.run(edge.plane.setRole(guest, requestID: 3, channel: "room", role: .broadcaster, now: edge.now))
        XCTAssertEqual(up.replies(to: guest).first?.body, .roleSet(channel: "room", role: .broadcaster))
        for other in [host, viewer1, viewer2] {
            XCTAssertEqual(up.events(to: other), [
                .userJoined(channel: "room", uid: 50),
                .remoteTrackPublished(audio("room", 50)),
                .remoteTrackPublished(video("room", 50)),
                .remoteVideoStateChanged(video("room", 50), state: .starting, reason: .remoteUnmuted),
            ])
        }
        XCTAssertEqual(up.keyframeRequests, [video("room", 50)])
        let start = edge.delivered.count
        edge.publish(guest, "room", uid: 50, .video, key: true)
        XCTAssertEqual(Set(edge.delivered[start...].map(\.to)), [host, viewer1, viewer2])
    }

    func testRoleSwitchBeyondTheGrantIsRefusedAndChangesNothing() {
        var edge = room()
        edge.open(guest)
        edge.join(guest, "room", uid: 50, as: .audience, grant: .subscriber())
        let refused = edge.run(edge.plane.setRole(guest, requestID: 1, channel: "room", role: .broadcaster, now: edge.now))
        XCTAssertEqual(refused.failure?.code, .tokenMissingPrivilege)
        XCTAssertEqual(refused.events, [])

        // updateChannelEx with a role switch is all or nothing.
        let update = MediaOptionsUpdate(role: .broadcaster, publishAudio: true, autoSubscribeVideo: false)
        let updated = edge.run(edge.plane.updateOptions(guest, requestID: 2, channel: "room", update: update, now: edge.now))
        XCTAssertEqual(updated.failure?.code, .tokenMissingPrivilege)
        XCTAssertEqual(edge.plane.connection(guest, channel: "room")?.options, .defaults(for: .audience))
        XCTAssertEqual(edge.plane.connection(guest, channel: "room")?.role, .audience)
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.subscribers.contains(guest), true)

        // Joining as broadcaster with a subscriber token is refused the same way.
        edge.open(viewer3)
        XCTAssertEqual(edge.join(viewer3, "room", uid: 51, as: .broadcaster, grant: .subscriber()).failure?.code, .tokenMissingPrivilege)

        // Publish privileges that have expired: PRIVILEGE_EXPIRED.
        var expired = ChannelGrant.publisher()
        expired.privileges[.publishAudio] = .at(.seconds(1))
        expired.privileges[.publishVideo] = .at(.seconds(1))
        edge.now = .seconds(2)
        edge.heartbeat(viewer3)
        XCTAssertEqual(edge.join(viewer3, "room", uid: 51, as: .broadcaster, grant: expired).failure?.code, .privilegeExpired)
    }

    func testGrantForAnotherChannelOrUIDIsRefusedAndWildcardsMatch() {
        var edge = TestEdge()
        edge.open(viewer1)
        XCTAssertEqual(edge.join(viewer1, "a", uid: 1, as: .audience, grant: .subscriber(channel: "b")).failure?.code, .tokenChannelMismatch)
        XCTAssertEqual(edge.join(viewer1, "a", uid: 1, as: .audience, grant: .subscriber(uid: 2)).failure?.code, .tokenUidMismatch)
        XCTAssertEqual(edge.join(viewer1, "a", uid: 1, as: .audience, grant: ChannelGrant(privileges: [.publishAudio: .never])).failure?.code, .tokenMissingPrivilege)
        XCTAssertEqual(edge.join(viewer1, "a", uid: 1, as: .audience, grant: .subscriber(expiry: .at(.zero))).failure?.code, .tokenExpired)
        XCTAssertNil(edge.join(viewer1, "a", uid: 1, as: .audience, grant: .subscriber(channel: "", uid: 0)).failure)
        XCTAssertNil(edge.join(viewer1, "b", uid: 1, as: .audience, grant: .subscriber(channel: "b", uid: 1)).failure)
    }

    func testTokenWillExpireThirtySecondsBeforeAndTheJoinPrivilegeEndsTheConnection() {
        var edge = room(hostGrant: .publisher(expiry: .at(.seconds(100))))
        let out = edge.advance(by: .seconds(101), alive: [host, viewer1, viewer2])
        let warnings = out.filter { if case .send(.tokenWillExpire, host) = $0.directive { true } else { false } }
        XCTAssertEqual(warnings.map(\.at), [.seconds(70)])
        XCTAssertEqual(warnings.first?.directive, .send(.tokenWillExpire(channel: "room", expiresIn: .seconds(30)), to: host))

        let atExpiry = out.filter { $0.at == .seconds(100) }.directives
        XCTAssertEqual(atExpiry.events(to: host).first, .privilegeExpired(channel: "room", privilege: .join))
        XCTAssertEqual(atExpiry.events(to: host).last?.code, .privilegeExpired)
        XCTAssertEqual(atExpiry.events(to: viewer1), [
            .remoteVideoStateChanged(video("room", 100), state: .stopped, reason: .remoteOffline),
            .userOffline(channel: "room", uid: 100, reason: .dropped),
        ])
        XCTAssertEqual(edge.plane.session(host)?.channels, [], "the session stays open; only the connection ended")
        XCTAssertEqual(edge.publish(host, "room", uid: 100, .audio).events(to: host).errorCodes, [.notJoined])
    }

    func testRenewTokenInPlaceRearmsTheWarningWithoutTouchingTheOthers() {
        var edge = room(hostGrant: .publisher(expiry: .at(.seconds(60))))
        var out = edge.advance(by: .seconds(40), alive: [host, viewer1, viewer2])
        XCTAssertEqual(out.directives.events(to: host), [.tokenWillExpire(channel: "room", expiresIn: .seconds(30))])
        XCTAssertEqual(out.first { $0.directive.isTokenWarning }?.at, .seconds(30))

        let renew = edge.run(edge.plane.renewToken(host, requestID: 11, channel: "room", grant: .publisher(channel: "room", uid: 100, expiry: .at(.seconds(200))), now: edge.now))
        XCTAssertEqual(renew.replies(to: host).first?.body, .tokenRenewed(channel: "room"))
        XCTAssertEqual(renew.events, [], "nobody else notices")
        XCTAssertEqual(edge.plane.connection(host, channel: "room")?.grant.privileges[.join], .at(.seconds(200)))

        out = edge.advance(by: .seconds(140), alive: [host, viewer1, viewer2])
        XCTAssertEqual(out.filter { $0.directive.isTokenWarning }.map(\.at), [.seconds(170)])
        XCTAssertFalse(out.directives.events.contains { if case .privilegeExpired = $0 { true } else { false } })
        let start = edge.delivered.count
        edge.publish(host, "room", uid: 100, .audio)
        XCTAssertEqual(edge.delivered.count, start + 2, "still publishing to both viewers")
    }

    func testRenewalIsRefusedForAnotherChannelOrUIDOrWithoutJoin() {
        var edge = room()
        let wrongChannel = edge.run(edge.plane.renewToken(host, requestID: 1, channel: "room", grant: .publisher(channel: "other"), now: edge.now))
        XCTAssertEqual(wrongChannel.failure?.code, .tokenChannelMismatch)
        let wrongUID = edge.run(edge.plane.renewToken(host, requestID: 2, channel: "room", grant: .publisher(uid: 5), now: edge.now))
        XCTAssertEqual(wrongUID.failure?.code, .tokenUidMismatch)
        let noJoin = edge.run(edge.plane.renewToken(host, requestID: 3, channel: "room", grant: ChannelGrant(privileges: [.publishVideo: .never]), now: edge.now))
        XCTAssertEqual(noJoin.failure?.code, .tokenMissingPrivilege)
        let notJoined = edge.run(edge.plane.renewToken(host, requestID: 4, channel: "elsewhere", grant: .publisher(), now: edge.now))
        XCTAssertEqual(notJoined.failure?.code, .notJoined)
    }

    func testPublishPrivilegeExpiryStopsItsTrackAndRenewalRestoresIt() {
        var grant = ChannelGrant.publisher()
        grant.privileges[.publishVideo] = .at(.seconds(50))
        var edge = room(hostGrant: grant)
        let out = edge.advance(by: .seconds(51), alive: [host, viewer1, viewer2])
        XCTAssertEqual(out.filter { $0.directive.isTokenWarning }.map(\.at), [.seconds(20)])
        let atExpiry = out.filter { $0.at == .seconds(50) }.directives
        XCTAssertEqual(atExpiry.events(to: host), [.privilegeExpired(channel: "room", privilege: .publishVideo)])
        XCTAssertEqual(atExpiry.events(to: viewer1), [
            .remoteVideoStateChanged(video("room", 100), state: .stopped, reason: .remoteMuted),
            .remoteTrackUnpublished(video("room", 100)),
        ])
        XCTAssertEqual(edge.plane.connection(host, channel: "room")?.publishing, [.audio])
        XCTAssertEqual(edge.plane.connection(host, channel: "room")?.role, .broadcaster, "still a visible broadcaster")

        XCTAssertEqual(edge.publish(host, "room", uid: 100, .video, key: true).events(to: host).errorCodes, [.privilegeExpired])
        let start = edge.delivered.count
        edge.publish(host, "room", uid: 100, .audio)
        XCTAssertEqual(edge.delivered.count, start + 2, "audio goes on")

        let renew = edge.run(edge.plane.renewToken(host, requestID: 1, channel: "room", grant: .publisher(), now: edge.now))
        XCTAssertEqual(renew.events(to: viewer1), [
            .remoteTrackPublished(video("room", 100)),
            .remoteVideoStateChanged(video("room", 100), state: .starting, reason: .remoteUnmuted),
        ])
    }
}

final class ChannelGrantTests: XCTestCase {
    func testUnixExpiriesArePlacedOnTheMonotonicClock() {
        let grant = ChannelGrant(
            channel: "room", uid: 7, tokenExpiresAt: 1_700_000_600,
            privilegeExpiries: [.join: 1_700_000_600, .publishVideo: 1_700_000_060],
            unixNow: 1_700_000_000, now: .seconds(5000))
        XCTAssertEqual(grant.tokenExpiry, .at(.seconds(5600)))
        XCTAssertEqual(grant.privileges, [.join: .at(.seconds(5600)), .publishVideo: .at(.seconds(5060))])
        XCTAssertTrue(grant.allows(.publishVideo, at: .seconds(5059)))
        XCTAssertFalse(grant.allows(.publishVideo, at: .seconds(5060)))
        XCTAssertFalse(grant.allows(.publishAudio, at: .seconds(5000)))
        XCTAssertEqual(grant.refusal(of: .publishAudio, at: .seconds(5000), for: "x")?.code, .tokenMissingPrivilege)
        XCTAssertEqual(grant.refusal(of: .publishVideo, at: .seconds(5060), for: "x")?.code, .privilegeExpired)
        XCTAssertNil(grant.refusal(of: .join, at: .seconds(5060), for: "x"))
        XCTAssertTrue(grant.covers(channel: "room", uid: 7))
        XCTAssertFalse(grant.covers(channel: "room", uid: 8))
    }
}

extension EdgeDirective {
    var isTokenWarning: Bool {
        if case .send(.tokenWillExpire, _) = self { true } else { false }
    }
}
