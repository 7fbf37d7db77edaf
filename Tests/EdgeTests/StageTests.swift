import Edge
import ShowroomWire
import XCTest

/// The stage of a room's channel: only the uids the room's coordinator seats publish there,
/// whatever their tokens say; a seat lets a subscriber token publish; losing it cuts the user off
/// at once.
final class StageTests: XCTestCase {
    private func stage(_ uids: Set<UInt32>, version: UInt64, channel: String = "show", removed: Bool = false) -> ChannelStage {
        ChannelStage(channel: channel, roomID: "room-1", uids: uids, version: version, removed: removed)
    }

    /// Host 100 on stage publishing video; viewer 1 with a subscriber token, viewer 2 with a
    /// publisher token, both audience.
    private func show() -> TestEdge {
        var edge = TestEdge()
        for session in [host, viewer1, viewer2, viewer3] { edge.open(session) }
        _ = edge.run(edge.plane.applyStages([stage([100], version: 1)], now: edge.now).directives)
        XCTAssertNil(edge.join(host, "show", uid: 100, as: .broadcaster).failure)
        // Ready to publish once it is a broadcaster (as an app going on stage joins).
        XCTAssertNil(edge.join(viewer1, "show", uid: 1, as: .audience, options: .defaults(for: .broadcaster)).failure)
        XCTAssertNil(edge.join(viewer2, "show", uid: 2, as: .audience, grant: .publisher()).failure)
        XCTAssertNil(edge.join(viewer3, "show", uid: 3, as: .audience).failure)
        edge.publish(host, "show", uid: 100, .video, key: true)
        return edge
    }

    func testAPublisherTokenWithoutASeatIsRefused() {
        var edge = show()
        let up = edge.run(edge.plane.setRole(viewer2, requestID: 40, channel: "show", role: .broadcaster, now: edge.now))
        XCTAssertEqual(up.failure?.code, .notOnStage)
        _ = edge.run(edge.plane.leave(viewer2, requestID: 41, channel: "show", now: edge.now))
        XCTAssertEqual(edge.join(viewer2, "show", uid: 2, as: .broadcaster, grant: .publisher()).failure?.code, .notOnStage)
        XCTAssertNil(edge.join(viewer2, "elsewhere", uid: 2, as: .broadcaster, grant: .publisher()).failure,
                     "a channel without a room keeps the token rules")
    }

    func testASeatLetsASubscriberTokenPublishAndItsRevocationCutsItOffAtOnce() {
        var edge = show()
        XCTAssertEqual(edge.run(edge.plane.setRole(viewer1, requestID: 40, channel: "show", role: .broadcaster, now: edge.now)).failure?.code,
                       .notOnStage)
        _ = edge.run(edge.plane.applyStages([stage([100, 1], version: 2)], now: edge.now).directives)
        XCTAssertNil(edge.run(edge.plane.setRole(viewer1, requestID: 41, channel: "show", role: .broadcaster, now: edge.now)).failure,
                     "seated: a subscriber token broadcasts")
        XCTAssertNotNil(edge.plane.channel("show")?.track(uid: 1, kind: .video))
        let start = edge.delivered.count
        edge.publish(viewer1, "show", uid: 1, .video, key: true)
        XCTAssertTrue(edge.delivered[start...].contains { $0.to == viewer3 && $0.frame.uid == 1 }, "the audience gets the co-host")

        // An older stage changes nothing; the revocation cuts the co-host off.
        XCTAssertEqual(edge.plane.applyStages([stage([100], version: 1)], now: edge.now).demoted, 0)
        let (demoted, directives) = edge.plane.applyStages([stage([100], version: 3)], now: edge.now)
        let out = edge.run(directives)
        XCTAssertEqual(demoted, 1)
        XCTAssertEqual(out.events(to: viewer1).errorCodes, [.notOnStage], "the co-host is told why")
        XCTAssertTrue(out.events(to: viewer3).contains(.userOffline(channel: "show", uid: 1, reason: .becameAudience)))
        XCTAssertNil(edge.plane.channel("show")?.track(uid: 1, kind: .video))
        let after = edge.delivered.count
        let refused = edge.publish(viewer1, "show", uid: 1, .video, key: true)
        XCTAssertFalse(edge.delivered[after...].contains { $0.frame.uid == 1 }, "whatever its client keeps sending, nothing goes out")
        XCTAssertFalse(refused.events(to: viewer1).errorCodes.isEmpty)
        XCTAssertNotNil(edge.plane.channel("show")?.track(uid: 100, kind: .video), "the owner stays on stage")

        // The room closes: the channel keeps the token rules again.
        _ = edge.run(edge.plane.applyStages([stage([], version: 4, removed: true)], now: edge.now).directives)
        XCTAssertEqual(edge.plane.activeStages, [])
        XCTAssertNil(edge.run(edge.plane.setRole(viewer2, requestID: 42, channel: "show", role: .broadcaster, now: edge.now)).failure)
    }

    func testStagesFromTheWireAreChecked() throws {
        let good = RoomStage.with {
            $0.channel = "show"
            $0.roomID = "room-1"
            $0.uids = [100, 1]
            $0.version = 3
        }
        XCTAssertEqual(try EdgeCodec.stages([good]).first?.uids, [100, 1])
        var noChannel = good
        noChannel.channel = ""
        var longRoom = good
        longRoom.roomID = String(repeating: "r", count: 300)
        var uidZero = good
        uidZero.uids = [0]
        var crowded = good
        crowded.uids = Array(1...17)
        for bad in [noChannel, longRoom, uidZero, crowded] {
            XCTAssertThrowsError(try EdgeCodec.stages([good, bad])) { XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument) }
        }
    }
}
