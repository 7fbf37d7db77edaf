import Edge
import ShowroomWire
import XCTest

/// Bans from the room-coordinators: a join ban kicks at once and refuses rejoining until it ends;
/// a publish ban stops that media and refuses becoming broadcaster; ended bans stop applying.
final class BanTests: XCTestCase {
    /// 2030-01-01T00:00:00Z, the wall-clock end the tests' bans name.
    private let endMs: Int64 = 1_893_456_000_000

    private func ban(_ uid: UInt32, _ privileges: Set<Privilege>, for seconds: Int, from now: Duration, channel: String = "show") -> ChannelBan {
        ChannelBan(channel: channel, uid: uid, privileges: privileges, until: now + .seconds(seconds), untilMs: endMs)
    }

    /// A host publishing audio and video in "show", two audience members.
    private func show() -> TestEdge {
        var edge = TestEdge()
        for session in [host, viewer1, viewer2, guest] { edge.open(session) }
        XCTAssertNil(edge.join(host, "show", uid: 100, as: .broadcaster).failure)
        XCTAssertNil(edge.join(viewer1, "show", uid: 1, as: .audience, grant: .publisher()).failure)
        XCTAssertNil(edge.join(viewer2, "show", uid: 2, as: .audience).failure)
        edge.activities = []
        return edge
    }

    func testAJoinBanClosesTheConnectionAtOnceAndRefusesRejoiningUntilItEnds() {
        var edge = show()
        edge.now = .seconds(10)
        XCTAssertNil(edge.join(host, "other", uid: 100, as: .audience).failure)
        edge.activities = []

        let (closed, directives) = edge.plane.applyBans([ban(100, [.join], for: 60, from: edge.now)], now: edge.now)
        let out = edge.run(directives)
        XCTAssertEqual(closed, 1)
        let closing = out.events(to: host)
        XCTAssertEqual(closing.count, 1)
        guard case .connectionClosed(let channel, let reason) = closing.first else { return XCTFail("\(closing)") }
        XCTAssertEqual(channel, "show")
        XCTAssertEqual(reason.code, .banned)
        XCTAssertTrue(reason.message.contains("until 2030-01-01T00:00:00Z"), reason.message)
        for other in [viewer1, viewer2] {
            XCTAssertEqual(out.events(to: other), [
                .remoteVideoStateChanged(video("show", 100), state: .stopped, reason: .remoteOffline),
                .userOffline(channel: "show", uid: 100, reason: .dropped),
            ])
        }
        XCTAssertEqual(edge.activities, [ChannelActivity(.broadcasterLeft, channel: "show", uid: 100, reason: .kicked, at: .seconds(10))])
        XCTAssertNil(edge.plane.connection(host, channel: "show"))
        XCTAssertNotNil(edge.plane.connection(host, channel: "other"), "only the banned channel is closed")
        XCTAssertEqual(edge.plane.channel("show")?.broadcasters, [])

        // Rejoining during the ban, as any role, from any session: refused with BANNED.
        edge.now += .seconds(30)
        let again = edge.join(host, "show", uid: 100, as: .audience)
        XCTAssertEqual(again.failure?.code, .banned)
        XCTAssertTrue(again.failure?.message.contains("banned from channel show until 2030-01-01T00:00:00Z") == true, "\(again)")
        XCTAssertEqual(edge.join(guest, "show", uid: 100, as: .broadcaster).failure?.code, .banned)
        XCTAssertNil(edge.join(guest, "show", uid: 101, as: .broadcaster).failure, "other uids are not banned")
        XCTAssertEqual(edge.plane.activeBans.map(\.uid), [100])

        // The timer forgets the ended ban; rejoining works.
        edge.advance(by: .seconds(31), alive: [host, viewer1, viewer2, guest])
        XCTAssertEqual(edge.plane.activeBans, [])
        XCTAssertNil(edge.join(host, "show", uid: 100, as: .broadcaster).failure)
    }

    func testAnAudienceMemberIsKickedAndAKickWithoutABanAllowsRejoining() {
        var edge = show()
        // Banned from another channel: nothing happens here.
        XCTAssertEqual(edge.plane.applyBans([ban(1, [.join], for: 60, from: edge.now, channel: "elsewhere")], now: edge.now).connectionsClosed, 0)
        XCTAssertNotNil(edge.plane.connection(viewer1, channel: "show"))

        // A ban that has already ended kicks without banning.
        let (closed, directives) = edge.plane.applyBans([ban(1, [.join], for: 0, from: edge.now)], now: edge.now)
        let out = edge.run(directives)
        XCTAssertEqual(closed, 1)
        XCTAssertEqual(out.events(to: viewer1).map(\.code), [.banned])
        XCTAssertEqual(out.events(to: host), [], "audience members are invisible: nobody is told")
        XCTAssertEqual(edge.activities, [ChannelActivity(.audienceLeft, channel: "show", uid: 1, reason: .kicked, at: edge.now)])
        XCTAssertEqual(edge.plane.activeBans.map(\.channel), ["elsewhere"])
        XCTAssertNil(edge.join(viewer1, "show", uid: 1, as: .audience).failure)
    }

    func testAPublishBanRefusesThatMediaAndBecomingBroadcasterUntilItEnds() {
        var edge = show()
        edge.publish(host, "show", uid: 100, .video, key: true)
        let (closed, directives) = edge.plane.applyBans([ban(100, [.publishVideo], for: 20, from: edge.now)], now: edge.now)
        let out = edge.run(directives)
        XCTAssertEqual(closed, 0)
        XCTAssertNotNil(edge.plane.connection(host, channel: "show"), "a publish ban does not kick")
        XCTAssertEqual(out.events(to: host).map(\.code), [.banned])
        XCTAssertEqual(out.events(to: viewer2).first, .remoteVideoStateChanged(video("show", 100), state: .stopped, reason: .remoteMuted))
        XCTAssertTrue(out.events(to: viewer2).contains(.remoteTrackUnpublished(video("show", 100))))
        XCTAssertNotNil(edge.plane.channel("show")?.track(uid: 100, kind: .audio), "audio is not banned")
        XCTAssertNil(edge.plane.channel("show")?.track(uid: 100, kind: .video))

        // Its video is refused with BANNED (once a second), audio goes through.
        let start = edge.delivered.count
        let refused = edge.publish(host, "show", uid: 100, .video, key: true)
        XCTAssertEqual(refused.events(to: host).errorCodes, [.banned])
        XCTAssertEqual(edge.publish(host, "show", uid: 100, .video).events(to: host).errorCodes, [], "rate-limited")
        edge.publish(host, "show", uid: 100, .audio)
        XCTAssertEqual(edge.delivered[start...].map(\.frame.kind), [.audio, .audio])

        // An audience member with a publish ban may not become broadcaster, nor join as one.
        XCTAssertEqual(edge.plane.applyBans([ban(1, [.publishAudio], for: 20, from: edge.now)], now: edge.now).connectionsClosed, 0)
        let up = edge.run(edge.plane.setRole(viewer1, requestID: 40, channel: "show", role: .broadcaster, now: edge.now))
        XCTAssertEqual(up.failure?.code, .banned)
        XCTAssertTrue(up.failure?.message.contains("publishing audio") == true, "\(up)")
        let update = edge.run(edge.plane.updateOptions(
            viewer1, requestID: 41, channel: "show", update: MediaOptionsUpdate(role: .broadcaster), now: edge.now))
        XCTAssertEqual(update.failure?.code, .banned)
        _ = edge.run(edge.plane.leave(viewer1, requestID: 42, channel: "show", now: edge.now))
        XCTAssertEqual(edge.join(viewer1, "show", uid: 1, as: .broadcaster).failure?.code, .banned)
        XCTAssertNil(edge.join(viewer1, "show", uid: 1, as: .audience, grant: .publisher()).failure)

        // Both end: the host's video is published again, the audience member may go up.
        let after = edge.advance(by: .seconds(21), alive: [host, viewer1, viewer2, guest]).directives
        XCTAssertTrue(after.events(to: viewer2).contains(.remoteTrackPublished(video("show", 100))), "\(after)")
        XCTAssertNotNil(edge.plane.channel("show")?.track(uid: 100, kind: .video))
        XCTAssertNil(edge.run(edge.plane.setRole(viewer1, requestID: 43, channel: "show", role: .broadcaster, now: edge.now)).failure)
    }

    func testANewBanReplacesTheOldOneForTheSameUser() {
        var edge = show()
        _ = edge.plane.applyBans([ban(100, [.publishAudio, .publishVideo], for: 60, from: edge.now)], now: edge.now)
        XCTAssertNil(edge.plane.channel("show")?.track(uid: 100, kind: .audio))
        // Narrowed to video: audio comes back at once.
        let out = edge.run(edge.plane.applyBans([ban(100, [.publishVideo], for: 60, from: edge.now)], now: edge.now).directives)
        XCTAssertTrue(out.events(to: viewer1).contains(.remoteTrackPublished(audio("show", 100))))
        XCTAssertEqual(edge.plane.activeBans.map(\.privileges), [[.publishVideo]])
    }

    func testBansFromTheWireAreCheckedAndPlacedOnThePlaneClock() throws {
        var wire = RoomBan()
        wire.channel = "show"
        wire.uid = 7
        wire.privileges = [2, 3]
        wire.untilMs = 1_000_030_000
        let now: Duration = .seconds(500)
        let bans = try EdgeCodec.bans([wire], now: now, unixNowMs: 1_000_000_000)
        XCTAssertEqual(bans, [ChannelBan(channel: "show", uid: 7, privileges: [.publishAudio, .publishVideo], until: .seconds(530), untilMs: 1_000_030_000)])

        var everything = wire
        everything.privileges = []
        XCTAssertEqual(try EdgeCodec.bans([everything], now: now, unixNowMs: 1_000_000_000).first?.privileges, [.join])

        func refusal(_ edit: (inout RoomBan) -> Void) -> ShowroomError? {
            var bad = wire
            edit(&bad)
            do {
                _ = try EdgeCodec.bans([wire, bad], now: now, unixNowMs: 0)
                return nil
            } catch {
                return error
            }
        }
        let privilege = refusal { $0.privileges = [1, 4] }
        XCTAssertEqual(privilege?.code, .invalidArgument)
        XCTAssertTrue(privilege?.message.contains("ban 2") == true && privilege?.message.contains("privilege 4") == true, "\(String(describing: privilege))")
        // A rule may leave the uid or the channel open, not both.
        XCTAssertNil(refusal { $0.uid = 0 })
        XCTAssertNil(refusal { $0.channel = "" })
        XCTAssertEqual(refusal { $0.uid = 0; $0.channel = "" }?.code, .invalidArgument)
        // An end far in the future or past does not overflow.
        XCTAssertNoThrow(try EdgeCodec.bans([wire].map { var b = $0; b.untilMs = .max; return b }, now: now, unixNowMs: -5))
        XCTAssertNoThrow(try EdgeCodec.bans([wire].map { var b = $0; b.untilMs = .min; return b }, now: now, unixNowMs: 5))
    }

    func testARuleForEveryoneInAChannelKicksThemAllAndRefusesNewJoinsThere() {
        var edge = show()
        XCTAssertNil(edge.join(guest, "other", uid: 7, as: .audience).failure)
        let (closed, directives) = edge.plane.applyBans([ban(0, [.join], for: 60, from: edge.now)], now: edge.now)
        let out = edge.run(directives)
        XCTAssertEqual(closed, 3, "the host and both viewers")
        let closing = out.events(to: viewer2).filter { $0.code != nil }
        XCTAssertEqual(closing.map(\.code), [.banned], "besides the host going offline")
        XCTAssertTrue(closing.first?.message?.contains("uid 2") == true, "the message names the user, not uid 0")
        XCTAssertNotNil(edge.plane.connection(guest, channel: "other"), "another channel is not touched")
        XCTAssertEqual(edge.join(viewer1, "show", uid: 1, as: .audience).failure?.code, .banned)
        XCTAssertNil(edge.join(viewer1, "other", uid: 1, as: .audience).failure)
    }

    func testARuleForAUidInEveryChannelKicksItEverywhereAndALiftedRuleLetsItBack() {
        var edge = show()
        XCTAssertNil(edge.join(viewer1, "other", uid: 1, as: .audience).failure)
        let everywhere = ban(1, [.join], for: 60, from: edge.now, channel: "")
        let (closed, directives) = edge.plane.applyBans([everywhere], now: edge.now)
        _ = edge.run(directives)
        XCTAssertEqual(closed, 2, "both of its channels")
        XCTAssertNotNil(edge.plane.connection(viewer2, channel: "show"), "others stay")
        XCTAssertEqual(edge.join(viewer1, "third", uid: 1, as: .audience).failure?.code, .banned)
        // Lifted (no privilege left): nobody is kicked and the uid may join again at once.
        var lifted = everywhere
        lifted.privileges = []
        XCTAssertTrue(lifted.isLifted)
        XCTAssertEqual(edge.plane.applyBans([lifted], now: edge.now).connectionsClosed, 0)
        XCTAssertEqual(edge.plane.activeBans, [])
        XCTAssertNil(edge.join(viewer1, "third", uid: 1, as: .audience).failure)
        XCTAssertNotNil(edge.plane.connection(viewer2, channel: "show"))
    }

    func testAnAddressBanKicksAndRefusesOnlyConnectionsFromThatAddress() {
        var edge = show()
        edge.plane.setAddress("10.0.0.5", of: viewer1)
        edge.plane.setAddress("::ffff:10.0.0.5", of: host)  // IPv4-mapped: the same address
        edge.plane.setAddress("10.0.0.6", of: viewer2)
        XCTAssertNil(edge.join(viewer1, "other", uid: 1, as: .audience).failure)
        // A link from another edge on the same address is the cluster, not a client: never matched.
        let link = SessionID(40)
        edge.open(link, client: ForwardLinkIdentity.clientIDPrefix + "edge-2")
        edge.plane.setAddress("10.0.0.5", of: link)
        XCTAssertNil(edge.join(link, "show", uid: 500, as: .audience).failure)

        // Everyone from 10.0.0.5 in "show": the host and viewer 1 there, not their other channels.
        var inShow = ban(0, [.join], for: 60, from: edge.now)
        inShow.ip = "10.0.0.5"
        let (closed, directives) = edge.plane.applyBans([inShow], now: edge.now)
        let out = edge.run(directives)
        XCTAssertEqual(closed, 2)
        XCTAssertEqual(out.events(to: viewer1).compactMap(\.code), [.banned])
        XCTAssertNil(edge.plane.connection(host, channel: "show"))
        XCTAssertNotNil(edge.plane.connection(viewer1, channel: "other"))
        XCTAssertNotNil(edge.plane.connection(viewer2, channel: "show"), "another address stays")
        XCTAssertNotNil(edge.plane.connection(link, channel: "show"), "an edge's link stays")
        XCTAssertEqual(edge.join(viewer1, "show", uid: 7, as: .audience).failure?.code, .banned, "any uid from that address")
        XCTAssertNil(edge.join(guest, "show", uid: 8, as: .audience).failure, "a session whose address is not known is not matched")

        // An address in every channel, for one uid: that uid from there, not the same uid elsewhere.
        var uidFromThere = ban(2, [.join], for: 60, from: edge.now, channel: "")
        uidFromThere.ip = "10.0.0.6"
        XCTAssertEqual(edge.plane.applyBans([uidFromThere], now: edge.now).connectionsClosed, 1)
        XCTAssertNil(edge.join(viewer1, "third", uid: 2, as: .audience).failure, "uid 2 from 10.0.0.5 is another user")
        XCTAssertEqual(edge.plane.activeBans.map(\.ip), ["10.0.0.6", "10.0.0.5"])

        // The address rule ends: the address may come back.
        edge.advance(by: .seconds(61), alive: [host, viewer1, viewer2, guest, link])
        XCTAssertEqual(edge.plane.activeBans, [])
        XCTAssertNil(edge.join(viewer1, "show", uid: 1, as: .audience).failure)
    }

    func testAnAddressBanFromTheWireMustBeSpelledAsTheCoordinatorsSpellIt() throws {
        var wire = RoomBan()
        wire.ip = "2001:db8::1"
        wire.privileges = [1]
        wire.untilMs = 1_000_030_000
        XCTAssertEqual(try EdgeCodec.bans([wire], now: .zero, unixNowMs: 1_000_000_000).first?.ip, "2001:db8::1", "an address alone is a filter")
        for bad in ["2001:DB8::1", "::ffff:10.0.0.1", "10.0.0.1:80", "example.com", String(repeating: "1", count: 4_000)] {
            wire.ip = bad
            XCTAssertThrowsError(try EdgeCodec.bans([wire], now: .zero, unixNowMs: 0), bad) {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
            }
        }
    }
}
