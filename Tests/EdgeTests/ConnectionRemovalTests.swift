import Edge
import EdgeProtocol
import ShowroomWire
import XCTest

/// A connection never vanishes silently: whatever removes it (its own leave, a kick, a stage
/// change, a replaced uid or session, an expired privilege, a drain) tells its client with a
/// reason and logs it, and the plane's books agree on both sides after every step. The first
/// test is the demo's sequence that lost two live shows: a PK's forwarded host is removed by the
/// stage change at the PK's end, then its forward link's own leave arrives late.
final class ConnectionRemovalTests: XCTestCase {
    private let forwardLink = SessionID(9)

    private func stage(_ uids: Set<UInt32>, version: UInt64) -> ChannelStage {
        ChannelStage(channel: "room-a", roomID: "room-a", uids: uids, version: version)
    }

    /// Room A's channel on this edge: host 1001 on stage and publishing, two viewers.
    private func liveRoom() -> TestEdge {
        var edge = TestEdge()
        edge.open(host)
        edge.open(viewer1)
        edge.open(viewer2)
        _ = edge.run(edge.plane.applyStages([stage([1001], version: 1)], now: edge.now).directives)
        XCTAssertNil(edge.join(host, "room-a", uid: 1001, as: .broadcaster).failure)
        XCTAssertNil(edge.join(viewer1, "room-a", uid: 2011, as: .audience).failure)
        XCTAssertNil(edge.join(viewer2, "room-a", uid: 2012, as: .audience).failure)
        edge.publish(host, "room-a", uid: 1001, .video, key: true)
        return edge
    }

    func testALateLeaveOfAForwardLinkTheStageRemovedLeavesTheShowAlone() {
        var edge = liveRoom()
        // The PK starts: host B's forward link joins room A's channel as uid 1002, on stage.
        _ = edge.run(edge.plane.applyStages([stage([1001, 1002], version: 2)], now: edge.now).directives)
        edge.open(forwardLink, client: ForwardLinkIdentity.clientIDPrefix + "room-b/1002/1")
        XCTAssertNil(edge.join(forwardLink, "room-a", uid: 1002, as: .broadcaster).failure)
        // The PK stops: the stage comes first and takes the forwarded host out, telling its link.
        let stopped = edge.run(edge.plane.applyStages([stage([1001], version: 3)], now: edge.now).directives)
        XCTAssertEqual(stopped.events(to: forwardLink).map(\.code), [.notOnStage])
        XCTAssertTrue(stopped.events(to: viewer1).contains(.userOffline(channel: "room-a", uid: 1002, reason: .forwardStopped)))
        XCTAssertEqual(edge.plane.inconsistencies, [])
        // Then the link's own leave, sent when its source edge stopped the forward.
        let late = edge.run(edge.plane.leave(forwardLink, requestID: edge.requestID(), channel: "room-a", now: edge.now))
        XCTAssertEqual(late.failure?.code, .notJoined)
        XCTAssertEqual(late.events, [], "nobody else hears of a leave that changed nothing")
        XCTAssertEqual(edge.plane.inconsistencies, [])
        XCTAssertEqual(edge.plane.channel("room-a")?.connections.map(\.uid).sorted(), [1001, 2011, 2012],
                       "the host and its viewers are still in the channel")
        let before = edge.delivered.count
        let sent = edge.publish(host, "room-a", uid: 1001, .video, key: true)
        XCTAssertEqual(sent.events(to: host), [], "the host's frames are not refused")
        XCTAssertEqual(Set(edge.frames(to: viewer1, from: before).map(\.uid) + edge.frames(to: viewer2, from: before).map(\.uid)), [1001])
        XCTAssertEqual(edge.frames(to: viewer1, from: before).count, 1)
    }

    func testLeavingAChannelOneIsNotInChangesNothingForAnyone() {
        var edge = liveRoom()
        edge.open(guest)
        XCTAssertNil(edge.join(guest, "elsewhere", uid: 7, as: .audience).failure)
        for channel in ["room-a", "nowhere"] {
            let out = edge.run(edge.plane.leave(guest, requestID: edge.requestID(), channel: channel, now: edge.now))
            XCTAssertEqual(out.failure?.code, .notJoined)
            XCTAssertEqual(out.events, [])
            XCTAssertEqual(edge.plane.inconsistencies, [])
        }
        XCTAssertEqual(edge.plane.channel("room-a")?.connections.count, 3)
        XCTAssertEqual(edge.plane.session(guest)?.channels, ["elsewhere"])
    }

    /// Every way an edge takes a connection away, each checked the same way: the connection's
    /// session is told (connection closed, session closed, or the answer to its own leave), a log
    /// line names the channel, and the books agree.
    func testEveryRemovalIsToldAndLogged() {
        let cases: [(String, (inout TestEdge) -> [EdgeDirective])] = [
            ("leave", { edge in edge.plane.leave(viewer1, requestID: 99, channel: "room-a", now: edge.now) }),
            ("kick", { edge in
                edge.plane.applyBans([ChannelBan(channel: "room-a", uid: 2011, privileges: [.join], until: edge.now + .seconds(60), untilMs: 1)],
                                     now: edge.now).directives
            }),
            ("uid replaced", { edge in
                edge.plane.join(guest, requestID: 98, channel: "room-a", uid: 2011, role: .audience, options: .defaults(for: .audience),
                                grant: .subscriber(), now: edge.now)
            }),
            ("session replaced", { edge in edge.plane.openSession(guest, requestID: 97, clientID: "client-2", sdkVersion: "t", now: edge.now) }),
            ("session closed", { edge in edge.plane.closeSession(viewer1, requestID: 96, now: edge.now) }),
            ("unreachable", { edge in edge.plane.sessionUnreachable(viewer1, now: edge.now) }),
            ("co-host unseated", { edge in
                _ = edge.plane.applyStages([self.stage([1001, 2011], version: 2)], now: edge.now)
                _ = edge.plane.setRole(viewer1, requestID: 95, channel: "room-a", role: .broadcaster, now: edge.now)
                return edge.plane.applyStages([self.stage([1001], version: 3)], now: edge.now).directives
            }),
            ("drain", { edge in edge.plane.closeAllSessions(reason: .unavailable("draining"), now: edge.now) }),
        ]
        for (name, remove) in cases {
            var edge = liveRoom()
            edge.open(guest)
            let before = Set(edge.plane.session(viewer1)?.channels ?? [])
            let directives = remove(&edge)
            XCTAssertEqual(edge.plane.inconsistencies, [], name)
            let after = Set(edge.plane.session(viewer1)?.channels ?? [])
            let logs = directives.compactMap { if case .log(let entry) = $0 { entry.message } else { nil } }
            for channel in before.subtracting(after) {
                let told = directives.contains { directive in
                    switch directive {
                    case .send(.connectionClosed(channel, _), viewer1), .send(.sessionClosed, viewer1): true
                    case .reply(let reply, viewer1): reply.kind == .leave || reply.kind == .closeSession
                    case .closeSession(viewer1): name == "unreachable"  // nobody is there to tell
                    default: false
                    }
                }
                XCTAssertTrue(told, "\(name): uid 2011 is told it is out of \(channel)")
                XCTAssertTrue(logs.contains { $0.contains("out of channel \(channel)") }, "\(name): a log line names \(channel): \(logs)")
            }
            if name == "co-host unseated" {
                XCTAssertEqual(edge.plane.channel("room-a")?.connections.first { $0.uid == 2011 }?.role, .audience, "demoted, not removed")
                XCTAssertTrue(directives.events(to: viewer1).contains { $0.code == .notOnStage }, "and told why")
            } else {
                XCTAssertEqual(after, [], "\(name) takes uid 2011 out")
            }
        }
    }
}
