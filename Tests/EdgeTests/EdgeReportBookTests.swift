import Edge
import ShowroomWire
import XCTest

/// ``EdgeReportBook`` and ``EdgeDrain`` with plain values and a fake clock.
final class EdgeReportBookTests: XCTestCase {
    private func activity(_ uid: UInt32) -> RoomChannelActivity {
        var activity = RoomChannelActivity()
        activity.channel = "show"
        activity.uid = uid
        return activity
    }

    func testActivitiesWaitForTheLinkAndTheOldestGoBeyondTheBoundLoggedOncePerOverflow() {
        var book = EdgeReportBook(maxHeldActivities: 3)
        for uid: UInt32 in 1...3 { XCTAssertEqual(book.hold(activity(uid)).dropped, 0) }
        let first = book.hold(activity(4))
        XCTAssertEqual(first.dropped, 1)
        XCTAssertTrue(first.overflowBegan)
        let second = book.hold(activity(5))
        XCTAssertEqual(second.dropped, 1)
        XCTAssertFalse(second.overflowBegan, "logged once per overflow")
        XCTAssertEqual(book.handOver(now: .zero).activities.map(\.uid), [3, 4, 5], "the newest kept, in order")
        XCTAssertEqual(book.handOver(now: .zero).activities, [], "taken once")
        for uid: UInt32 in 6...9 { _ = book.hold(activity(uid)) }
        XCTAssertEqual(book.hold(activity(10)).overflowBegan, false)
        _ = book.handOver(now: .zero)
        for uid: UInt32 in 1...3 { _ = book.hold(activity(uid)) }
        XCTAssertTrue(book.hold(activity(4)).overflowBegan, "a new overflow after a hand-over is logged again")
    }

    func testTheSummaryIsDueEverySecondSoonAfterAChangeAndAtOnceForANewLink() {
        var book = EdgeReportBook()
        XCTAssertTrue(book.handOver(now: .zero).summaryDue, "the first one at once")
        XCTAssertFalse(book.handOver(now: .milliseconds(500)).summaryDue)
        XCTAssertTrue(book.handOver(now: .seconds(1)).summaryDue)
        book.channelsDidChange()
        XCTAssertFalse(book.handOver(now: .seconds(1) + .milliseconds(50)).summaryDue, "not more than every 100 ms")
        XCTAssertTrue(book.handOver(now: .seconds(1) + .milliseconds(100)).summaryDue)
        XCTAssertFalse(book.handOver(now: .seconds(1) + .milliseconds(300)).summaryDue)
        _ = book.hold(activity(1))
        XCTAssertTrue(book.handOver(now: .seconds(1) + .milliseconds(300)).summaryDue, "an activity changes the channels")
        book.linked()
        XCTAssertTrue(book.handOver(now: .seconds(1) + .milliseconds(301)).summaryDue)
    }

    func testTheLoadIsReportedOnAChangeAtMostEveryInterval() {
        var book = EdgeReportBook(loadReportInterval: .milliseconds(250))
        XCTAssertTrue(book.shouldReportLoad(channels: 0, connections: 0, now: .zero))
        XCTAssertFalse(book.shouldReportLoad(channels: 0, connections: 0, now: .seconds(5)), "unchanged")
        XCTAssertTrue(book.shouldReportLoad(channels: 1, connections: 1, now: .seconds(5)))
        XCTAssertFalse(book.shouldReportLoad(channels: 1, connections: 2, now: .seconds(5) + .milliseconds(100)), "too soon")
        XCTAssertTrue(book.shouldReportLoad(channels: 1, connections: 2, now: .seconds(5) + .milliseconds(250)))
    }

    func testADrainBeginsOnceTellsTheClientsOnceAndEndsWhenNobodyIsLeftOrAtItsDeadline() {
        var drain = EdgeDrain<String>()
        XCTAssertFalse(drain.clientsTold(now: .zero, within: .seconds(5)), "not draining")
        XCTAssertNil(drain.finishes(now: .seconds(100), awaitsMovingClients: false))
        XCTAssertTrue(drain.begin(nodeID: "edge-1", waiter: "first"))
        XCTAssertFalse(drain.begin(nodeID: "edge-2", waiter: "second"), "once")
        XCTAssertEqual(drain.nodeID, "edge-1")
        XCTAssertNil(drain.finishes(now: .seconds(1), awaitsMovingClients: false), "the clients are not told yet")
        XCTAssertTrue(drain.clientsTold(now: .seconds(1), within: .seconds(5)))
        XCTAssertFalse(drain.clientsTold(now: .seconds(2), within: .seconds(5)), "told once")
        XCTAssertNil(drain.finishes(now: .seconds(5), awaitsMovingClients: true))
        XCTAssertEqual(drain.finishes(now: .seconds(6), awaitsMovingClients: true), ["first", "second"], "the deadline: both told")
        XCTAssertNil(drain.finishes(now: .seconds(7), awaitsMovingClients: false), "ended once")
        XCTAssertTrue(drain.isDraining, "still refusing joins")

        var early = EdgeDrain<String>()
        _ = early.begin(nodeID: "edge-1", waiter: "only")
        _ = early.clientsTold(now: .zero, within: .seconds(30))
        XCTAssertEqual(early.finishes(now: .seconds(1), awaitsMovingClients: false), ["only"], "everyone moved")
    }

    func testTheSummariesCarryTheForwardedPublishersAndTheOriginOfRelayedChannels() throws {
        var forwards = ForwardBook()
        var out: [ForwardDirective] = []
        _ = try forwards.apply(.start([ForwardDestination(channel: "peer", token: "t")]), to: ForwardKey(channel: "show", uid: 1),
                               from: SessionID(1), now: .zero, &out)
        var relays = RelayBook()
        let origin = RelayOrigin(id: "edge-9", endpoint: "tcp://9")
        _ = relays.host("relayed", origin: origin, now: .zero)
        let plane = ["show", "relayed", "plain"].map { ChannelSummary(name: $0, broadcasters: [], connections: 1) }
        let summaries = EdgeReportBook.summaries(plane, forwards: forwards, relays: relays)
        XCTAssertEqual(summaries.map(\.name), ["show", "relayed", "plain"])
        XCTAssertEqual(summaries.map { $0.forwardedPublishers.map(\.uid) }, [[1], [], []])
        XCTAssertEqual(summaries.map(\.originEdge), ["", "edge-9", ""])
        XCTAssertEqual(EdgeReportBook.summaries(plane, forwards: ForwardBook(), relays: RelayBook()), plane, "nothing added")
    }

    func testADrainRefusesJoinsOnlyAndNamesTheEdgeAtTheEnd() {
        var drain = EdgeDrain<String>()
        let join = EdgeRequest.join(channel: "show", uid: 1, token: "t", role: .audience, options: .defaults(for: .audience))
        XCTAssertNil(drain.refusal(of: join), "not draining")
        _ = drain.begin(nodeID: "edge-7", waiter: "w")
        XCTAssertEqual(drain.refusal(of: join)?.code, .unavailable)
        XCTAssertNil(drain.refusal(of: .leave(channel: "show")), "leaving is always allowed")
        XCTAssertNil(drain.refusal(of: .setRole(channel: "show", role: .broadcaster)), "a connection already here is served")
        XCTAssertEqual(drain.closing.code, .unavailable)
        XCTAssertTrue(drain.closing.message.contains("edge-7"))
    }

    func testTheSummariesCarryThePublishersRecordedHere() {
        var desk = RecordingDesk()
        _ = desk.setOrders([RecordingDesk.Order(id: "rec-1", channel: "show")], from: "coordinator-1", now: .zero)
        _ = desk.frame(channel: "show", uid: 8, forwarded: false, now: .zero)
        _ = desk.frame(channel: "show", uid: 3, forwarded: false, now: .zero)
        _ = desk.frame(channel: "elsewhere", uid: 5, forwarded: false, now: .zero)  // no order: not recorded
        let plane = ["show", "plain"].map { ChannelSummary(name: $0, broadcasters: [], connections: 1) }
        let summaries = EdgeReportBook.summaries(plane, forwards: ForwardBook(), relays: RelayBook(), recordings: desk)
        XCTAssertEqual(summaries.map(\.recording), [[3, 8], []])
        XCTAssertEqual(EdgeReportBook.summaries(plane, forwards: ForwardBook(), relays: RelayBook(), recordings: RecordingDesk()), plane)
    }
}
