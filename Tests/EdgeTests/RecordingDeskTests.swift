import Edge
import ShowroomWire
import XCTest

/// The edge's recording decisions with plain values: which frames are recorded, when a recording
/// starts and stops, and hostile orders.
final class RecordingDeskTests: XCTestCase {
    typealias Order = RecordingDesk.Order
    typealias Key = RecordingDesk.Key

    func testAnOrderRecordsEveryBroadcasterOfItsChannelFromTheirFirstFrames() {
        var desk = RecordingDesk()
        XCTAssertTrue(desk.isIdle)
        XCTAssertEqual(desk.setOrders([Order(id: "rec-1", channel: "show")], from: "coordinator-1", now: .zero), [])
        XCTAssertFalse(desk.isIdle)
        XCTAssertEqual(desk.frame(channel: "show", uid: 7, forwarded: false, now: .seconds(1)), .start(orderID: "rec-1", segmentSeconds: 0))
        XCTAssertEqual(desk.frame(channel: "show", uid: 7, forwarded: false, now: .seconds(1)), .record)
        XCTAssertEqual(desk.frame(channel: "show", uid: 8, forwarded: false, now: .seconds(1)), .start(orderID: "rec-1", segmentSeconds: 0))
        XCTAssertEqual(desk.frame(channel: "other", uid: 7, forwarded: false, now: .seconds(1)), .skip)
        XCTAssertEqual(desk.recordedUIDs["show"], [7, 8])
        // A PK peer forwarded into the channel is not "every broadcaster": only when named.
        XCTAssertEqual(desk.frame(channel: "show", uid: 9, forwarded: true, now: .seconds(1)), .skip)
    }

    func testNamedUidsAndForwardedPeersAndPrefixes() {
        var desk = RecordingDesk()
        _ = desk.setOrders([Order(id: "rec-1", channel: "show", uids: [9], segmentSeconds: 60),
                            Order(id: "rule-calls", channelPrefix: "call-")], from: "coordinator-1", now: .zero)
        XCTAssertEqual(desk.frame(channel: "show", uid: 7, forwarded: false, now: .zero), .skip)
        XCTAssertEqual(desk.frame(channel: "show", uid: 9, forwarded: true, now: .zero), .start(orderID: "rec-1", segmentSeconds: 60))
        XCTAssertEqual(desk.frame(channel: "call-5-abc", uid: 5, forwarded: false, now: .zero), .start(orderID: "rule-calls", segmentSeconds: 0))
        XCTAssertEqual(desk.frame(channel: "call-5-abc", uid: 6, forwarded: false, now: .zero), .start(orderID: "rule-calls", segmentSeconds: 0))
        XCTAssertEqual(desk.frame(channel: "callx", uid: 6, forwarded: false, now: .zero), .skip)
    }

    func testRecordingsStopWhenThePublisherLeavesTheOrderGoesOrItsCoordinatorFallsSilent() {
        var desk = RecordingDesk(forgetAfter: .seconds(10), idleAfter: .seconds(30))
        _ = desk.setOrders([Order(id: "rec-1", channel: "show")], from: "coordinator-1", now: .zero)
        _ = desk.setOrders([Order(id: "rec-2", channel: "talk")], from: "coordinator-2", now: .zero)
        _ = desk.frame(channel: "show", uid: 1, forwarded: false, now: .zero)
        _ = desk.frame(channel: "show", uid: 2, forwarded: false, now: .zero)
        _ = desk.frame(channel: "talk", uid: 3, forwarded: false, now: .zero)
        XCTAssertEqual(desk.publisherLeft(channel: "show", uid: 1), [.stop(Key(channel: "show", uid: 1))])
        XCTAssertEqual(desk.publisherLeft(channel: "show", uid: 1), [])
        // Its next frame (it came back) starts a new recording.
        XCTAssertEqual(desk.frame(channel: "show", uid: 1, forwarded: false, now: .seconds(1)), .start(orderID: "rec-1", segmentSeconds: 0))
        // The same orders again change nothing; none stops the channel's recordings.
        XCTAssertEqual(desk.setOrders([Order(id: "rec-1", channel: "show")], from: "coordinator-1", now: .seconds(8)), [])
        XCTAssertEqual(desk.setOrders([], from: "coordinator-1", now: .seconds(9)),
                       [.stop(Key(channel: "show", uid: 1)), .stop(Key(channel: "show", uid: 2))])
        // coordinator-2 was last heard at 0: forgotten at 10 s, with its recording.
        XCTAssertEqual(desk.tick(now: .seconds(9)), [])
        XCTAssertEqual(desk.tick(now: .seconds(10)), [.stop(Key(channel: "talk", uid: 3))])
        XCTAssertTrue(desk.isIdle)
    }

    func testAQuietPublisherIsStoppedAndAFailedRecordingWaitsForNewOrders() {
        var desk = RecordingDesk(forgetAfter: .seconds(100), idleAfter: .seconds(30))
        _ = desk.setOrders([Order(id: "rec-1", channel: "show")], from: "c", now: .zero)
        _ = desk.frame(channel: "show", uid: 1, forwarded: false, now: .zero)
        _ = desk.frame(channel: "show", uid: 2, forwarded: false, now: .zero)
        _ = desk.frame(channel: "show", uid: 2, forwarded: false, now: .seconds(20))
        XCTAssertEqual(desk.tick(now: .seconds(30)), [.stop(Key(channel: "show", uid: 1))])
        desk.failed(Key(channel: "show", uid: 2))
        XCTAssertEqual(desk.frame(channel: "show", uid: 2, forwarded: false, now: .seconds(31)), .skip)
        _ = desk.setOrders([Order(id: "rec-1", channel: "show"), Order(id: "rec-3", channel: "talk")], from: "c", now: .seconds(32))
        XCTAssertEqual(desk.frame(channel: "show", uid: 2, forwarded: false, now: .seconds(33)), .start(orderID: "rec-1", segmentSeconds: 0))
        XCTAssertEqual(desk.stopAll(), [.stop(Key(channel: "show", uid: 2))])
    }

    func testTwoCoordinatorsOrdersForOneChannelPickTheSameOrder() {
        var desk = RecordingDesk()
        _ = desk.setOrders([Order(id: "rec-b", channel: "show")], from: "c1", now: .zero)
        _ = desk.setOrders([Order(id: "rec-a", channel: "show")], from: "c2", now: .zero)
        XCTAssertEqual(desk.frame(channel: "show", uid: 1, forwarded: false, now: .zero), .start(orderID: "rec-a", segmentSeconds: 0))
        // rec-a goes: the recording goes on for rec-b, not stopped.
        XCTAssertEqual(desk.setOrders([], from: "c2", now: .zero), [])
        XCTAssertEqual(desk.running[Key(channel: "show", uid: 1)]?.orderID, "rec-b")
    }

    func testAnOlderSetArrivingLateIsIgnored() {
        var desk = RecordingDesk()
        _ = desk.setOrders([Order(id: "rec-1", channel: "show")], from: "c", version: 10, now: .zero)
        _ = desk.frame(channel: "show", uid: 1, forwarded: false, now: .zero)
        XCTAssertEqual(desk.setOrders([], from: "c", version: 12, now: .zero), [.stop(Key(channel: "show", uid: 1))])
        // The set of version 11 was overtaken on the way: it brings nothing back.
        XCTAssertEqual(desk.setOrders([Order(id: "rec-1", channel: "show")], from: "c", version: 11, now: .zero), [])
        XCTAssertEqual(desk.frame(channel: "show", uid: 1, forwarded: false, now: .zero), .skip)
        XCTAssertTrue(desk.isIdle)
    }

    func testHostileOrdersAreRefusedWhole() {
        func refused(_ orders: [RoomRecordingOrder], file: StaticString = #filePath, line: UInt = #line) {
            let request = RoomEdgeRecordingsRequest.with { $0.coordinator = "c"; $0.orders = orders }
            XCTAssertThrowsError(try EdgeCodec.recordingOrders(request), file: file, line: line) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, file: file, line: line)
            }
        }
        let good = RoomRecordingOrder.with { $0.id = "rec-1"; $0.channel = "show" }
        XCTAssertEqual(try EdgeCodec.recordingOrders(RoomEdgeRecordingsRequest.with { $0.coordinator = "c"; $0.orders = [good] }).map(\.id),
                       ["rec-1"])
        for coordinator in ["", String(repeating: "c", count: 129)] {
            XCTAssertThrowsError(try EdgeCodec.recordingOrders(RoomEdgeRecordingsRequest.with { $0.coordinator = coordinator; $0.orders = [good] }),
                                 "a request naming no usable coordinator")
        }
        refused([good, RoomRecordingOrder.with { $0.id = ""; $0.channel = "show" }])
        refused([RoomRecordingOrder.with { $0.id = String(repeating: "x", count: 65); $0.channel = "show" }])
        refused([RoomRecordingOrder.with { $0.id = "a" }])
        refused([RoomRecordingOrder.with { $0.id = "a"; $0.channel = "show"; $0.channelPrefix = "s" }])
        refused([RoomRecordingOrder.with { $0.id = "a"; $0.channel = "bad/name" }])
        refused([RoomRecordingOrder.with { $0.id = "a"; $0.channelPrefix = "bad\u{0}" }])
        refused([RoomRecordingOrder.with { $0.id = "a"; $0.channel = "show"; $0.uids = Array(1...33) }])
        refused([RoomRecordingOrder.with { $0.id = "a"; $0.channel = "show"; $0.segmentSeconds = 59 }])
        refused([RoomRecordingOrder.with { $0.id = "a"; $0.channel = "show"; $0.segmentSeconds = .max }])
        refused(Array(repeating: good, count: EdgeCodec.maxRecordingOrders + 1))
    }

    func testOnlyAPublisherLeavingOrBecomingAudienceEndsItsRecording() {
        var desk = RecordingDesk()
        _ = desk.setOrders([Order(id: "rec-1", channel: "show")], from: "c", now: .zero)
        _ = desk.frame(channel: "show", uid: 1, forwarded: false, now: .zero)
        _ = desk.frame(channel: "show", uid: 2, forwarded: false, now: .zero)
        for kind: ChannelActivity.Kind in [.channelCreated, .broadcasterJoined, .audienceJoined, .audienceLeft, .roleToBroadcaster] {
            XCTAssertEqual(desk.see(ChannelActivity(kind, channel: "show", uid: 1, at: .seconds(1))), [], "\(kind)")
        }
        XCTAssertEqual(desk.see(ChannelActivity(.broadcasterLeft, channel: "other", uid: 1, at: .seconds(1))), [], "another channel's")
        XCTAssertEqual(desk.see(ChannelActivity(.broadcasterLeft, channel: "show", uid: 1, reason: .dropped, at: .seconds(1))),
                       [.stop(Key(channel: "show", uid: 1))])
        XCTAssertEqual(desk.see(ChannelActivity(.roleToAudience, channel: "show", uid: 2, at: .seconds(1))), [.stop(Key(channel: "show", uid: 2))])
        XCTAssertEqual(desk.see(ChannelActivity(.roleToAudience, channel: "show", uid: 2, at: .seconds(2))), [], "stopped once")
        XCTAssertEqual(desk.running.count, 0)
    }

    func testAFailureNamesTheOrderItRanForOnce() {
        var desk = RecordingDesk()
        _ = desk.setOrders([Order(id: "rec-1", channel: "show")], from: "c", now: .zero)
        _ = desk.frame(channel: "show", uid: 1, forwarded: false, now: .zero)
        XCTAssertEqual(desk.failed(Key(channel: "show", uid: 1)), "rec-1")
        XCTAssertNil(desk.failed(Key(channel: "show", uid: 1)), "a second failure of the same recording names no order")
        XCTAssertNil(desk.failed(Key(channel: "show", uid: 9)), "a recording that never ran")
        XCTAssertEqual(desk.frame(channel: "show", uid: 9, forwarded: false, now: .seconds(1)), .skip, "and it does not start until the orders change")
    }

    func testARecordingStartedAtAnythingButAVideoKeyframeAsksForOne() {
        func info(_ kind: TrackKind?, keyframe: Bool) -> MediaFrameInfo {
            MediaFrameInfo(channel: "show", publisherUID: 7, kind: kind, isKeyframe: keyframe, payloadSize: 10)
        }
        XCTAssertFalse(RecordingDesk.startAsksKeyframe(at: info(.video, keyframe: true)))
        XCTAssertTrue(RecordingDesk.startAsksKeyframe(at: info(.video, keyframe: false)))
        XCTAssertTrue(RecordingDesk.startAsksKeyframe(at: info(.audio, keyframe: false)))
        XCTAssertTrue(RecordingDesk.startAsksKeyframe(at: info(.audio, keyframe: true)), "an audio frame marked key starts no file")
        XCTAssertTrue(RecordingDesk.startAsksKeyframe(at: info(nil, keyframe: true)))
    }
}
