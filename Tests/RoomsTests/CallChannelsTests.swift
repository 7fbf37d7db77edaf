import Rooms
import Routing
import ShowroomWire
import XCTest

/// What a coordinator passes on of call channels to the call-signal nodes, and which call event
/// reports it publishes.
final class CallChannelsTests: XCTestCase {
    private let ring = OwnerRing(.callsignal, memberIDs: ["s1", "s2", "s3"])

    private func activity(_ type: RoomChannelEventType, _ channel: String, uid: UInt32) -> RoomChannelActivity {
        RoomChannelActivity.with {
            $0.type = type
            $0.channel = channel
            $0.uid = uid
        }
    }

    private func event(callee: UInt32 = 1001, caller: UInt32 = 2001, type: UInt32 = 201) -> SignalCallNotification {
        SignalCallNotification.with {
            $0.eventType = type
            $0.caller = caller
            $0.callee = callee
            $0.callID = "\(callee)-abc"
            $0.channel = Names.callChannel(callee: callee, random: "f00d")
            $0.noticeID = "\(callee)-abc-\(type)"
        }
    }

    func testJoinsAndLeavesOfCallChannelsGoToTheCalleesOwner() throws {
        let channel = Names.callChannel(callee: 1001, random: "f00d")
        let other = Names.callChannel(callee: 42, random: "beef")
        let owner = try XCTUnwrap(ring.owner(of: "uid/1001"))
        let passed = CallChannels.activitiesByOwner([
            activity(.broadcasterJoined, channel, uid: 2001),
            activity(.channelCreated, channel, uid: 0),
            activity(.audienceJoined, "show", uid: 5),
            activity(.audienceLeft, channel, uid: 1001),
            activity(.broadcasterJoined, other, uid: 42),
        ], ring: ring)
        let byOwner = Dictionary(passed.map { ($0.owner, $0.batch.activities.map { "\($0.channel)/\($0.uid)/\($0.joined)" }) }) { $0 + $1 }
        XCTAssertEqual(passed.map(\.owner), passed.map(\.owner).sorted(), "in node order")
        XCTAssertEqual(Array(byOwner[owner, default: []].filter { $0.hasPrefix(channel) }),
                       ["\(channel)/2001/true", "\(channel)/1001/false"], "joins and leaves, in order; not the channel's creation")
        XCTAssertFalse(byOwner.values.joined().contains { $0.hasPrefix("show/") }, "not a call's channel")
        XCTAssertEqual(byOwner.values.joined().count, 3)
        XCTAssertTrue(CallChannels.activitiesByOwner([activity(.audienceJoined, channel, uid: 1)],
                                                     ring: OwnerRing(.callsignal, memberIDs: [])).isEmpty, "no call-signal node: nobody to tell")
    }

    func testHostileCallChannelNamesArePassedToNobody() {
        let names = ["call-", "call--x", "call-4294967296-x", "call-99999999999999999999999-x", "call-12", "call- 1-x", "call-1x",
                     String(repeating: "call-", count: 40)]
        XCTAssertTrue(CallChannels.activitiesByOwner(names.map { activity(.audienceJoined, $0, uid: .max) }, ring: ring).isEmpty)
    }

    func testACallEventReportIsPublishedOnlyWhenEveryEventIsWellFormed() throws {
        try CallChannels.validate(SignalCallEventReport.with { $0.events = [event(), event(type: 202), event(type: 203)] })
        let malformed: [SignalCallNotification] = [
            event(type: 200), event(type: 204), event(caller: 0), event(callee: 0),
            { var e = event(); e.callID = "7-abc"; e.noticeID = "7-abc-201"; return e }(),
            { var e = event(); e.channel = "show"; return e }(),
            { var e = event(); e.noticeID = "1001-abc-203"; return e }(),
            { var e = event(); e.endReason = String(repeating: "x", count: 33); return e }(),
            { var e = event(); e.nodeID = String(repeating: "n", count: 129); return e }(),
            { var e = event(); e.callID = "1001-" + String(repeating: "a", count: 60); e.noticeID = e.callID + "-201"; return e }(),
        ]
        for bad in malformed {
            XCTAssertThrowsError(try CallChannels.validate(SignalCallEventReport.with { $0.events = [event(), bad] }),
                                 "\(bad.noticeID) \(bad.eventType)") { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
            }
        }
        let flood = SignalCallEventReport.with { $0.events = Array(repeating: event(), count: CallChannels.maxEventsPerReport + 1) }
        XCTAssertThrowsError(try CallChannels.validate(flood))
        try CallChannels.validate(SignalCallEventReport.with { $0.events = Array(repeating: event(), count: CallChannels.maxEventsPerReport) })
    }
}
