import Edge
import ShowroomWire
import XCTest

/// Every configurable limit is refused with its own code, and nothing half-happens.
final class LimitsTests: XCTestCase {
    private func edge(_ limits: EdgeLimits) -> TestEdge {
        TestEdge(settings: EdgeSettings(limits: limits))
    }

    func testOversizeFramesAreRefusedAndNotForwarded() {
        var edge = edge(EdgeLimits(maxFrameBytes: 5000))
        for session in [host, viewer1] { edge.open(session) }
        edge.join(host, "room", uid: 100, as: .broadcaster)
        edge.join(viewer1, "room", uid: 1, as: .audience)
        let refused = edge.publish(host, "room", uid: 100, .video, key: true, size: 5001)
        XCTAssertEqual(refused.events(to: host).first?.code, .frameTooLarge)
        XCTAssertEqual(edge.delivered.count, 0)
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.cachedFrames, 0, "not cached either")
        edge.publish(host, "room", uid: 100, .video, key: true, size: 5000)
        XCTAssertEqual(edge.frames(to: viewer1).count, 1)
    }

    func testChannelsPerSession() {
        var edge = edge(EdgeLimits(maxChannelsPerSession: 2))
        edge.open(viewer1)
        edge.join(viewer1, "a", uid: 1, as: .audience)
        edge.join(viewer1, "b", uid: 1, as: .audience)
        let third = edge.join(viewer1, "c", uid: 1, as: .audience)
        XCTAssertEqual(third.failure?.code, .tooManyChannels)
        XCTAssertNil(edge.plane.channel("c"), "a refused join leaves no empty channel behind")
        _ = edge.run(edge.plane.leave(viewer1, channel: "a", now: edge.now))
        XCTAssertNil(edge.join(viewer1, "c", uid: 1, as: .audience).failure)
    }

    func testSubscribersPerChannel() {
        var edge = edge(EdgeLimits(maxSubscribersPerChannel: 3))
        for (i, session) in [host, viewer1, viewer2, viewer3].enumerated() {
            edge.open(session)
            let out = edge.join(session, "room", uid: UInt32(i + 1), as: i == 0 ? .broadcaster : .audience)
            XCTAssertEqual(out.failure?.code, i < 3 ? nil : .channelFull)
        }
        XCTAssertEqual(edge.plane.channel("room")?.connections.count, 3)
    }

    func testPublishersPerChannelForJoinsAndRoleSwitches() {
        var edge = edge(EdgeLimits(maxPublishersPerChannel: 2))
        for session in [host, guest, viewer1] { edge.open(session) }
        edge.join(host, "room", uid: 1, as: .broadcaster)
        edge.join(guest, "room", uid: 2, as: .broadcaster)
        XCTAssertEqual(edge.join(viewer1, "room", uid: 3, as: .broadcaster).failure?.code, .tooManyPublishers)
        edge.join(viewer1, "room", uid: 3, as: .audience, grant: .publisher())
        let switchUp = edge.run(edge.plane.setRole(viewer1, requestID: 1, channel: "room", role: .broadcaster, now: edge.now))
        XCTAssertEqual(switchUp.failure?.code, .tooManyPublishers)
        XCTAssertEqual(switchUp.events, [])
        // A broadcaster stepping down makes room.
        _ = edge.run(edge.plane.setRole(guest, channel: "room", role: .audience, now: edge.now))
        XCTAssertNil(edge.run(edge.plane.setRole(viewer1, requestID: 2, channel: "room", role: .broadcaster, now: edge.now)).failure)
        XCTAssertEqual(edge.plane.channel("room")?.broadcasters, [1, 3])
    }
}
