@testable import EdgeServer
import Routing
import ShowroomWire
import XCTest

/// The outbox of channel activities and summaries, with plain values and a fake clock: owners,
/// order, pacing, retries, the bound.
final class CoordinatorOutboxTests: XCTestCase {
    private func activity(_ channel: String, _ uid: UInt32) -> RoomChannelActivity {
        var activity = RoomChannelActivity()
        activity.type = .audienceJoined
        activity.channel = channel
        activity.uid = uid
        return activity
    }

    /// A channel name `coordinator` owns among `coordinators`.
    private func channel(ownedBy coordinator: String, among coordinators: [String]) -> String {
        (0..<1000).lazy.map { "channel-\($0)" }.first { ring(coordinators).owner(of: $0) == coordinator }!
    }

    private func ring(_ ids: [String]) -> OwnerRing {
        OwnerRing(.coordinator, memberIDs: ids)
    }

    private func labels(_ request: CoordinatorOutbox.Request) -> [String] {
        request.activities.map { "\($0.channel)#\($0.uid)" }
    }

    private let coordinators = ["coord-1", "coord-2"]

    func testActivitiesGoToTheirChannelsOwnerInOrderOneRequestAtATime() {
        let a = channel(ownedBy: "coord-1", among: coordinators)
        let b = channel(ownedBy: "coord-2", among: coordinators)
        var outbox = CoordinatorOutbox()
        _ = outbox.add([activity(a, 1), activity(b, 1), activity(a, 2)])
        let first = outbox.due(coordinators: ring(coordinators), now: .zero)
        XCTAssertEqual(first.map(\.coordinator), ["coord-1", "coord-2"])
        XCTAssertEqual(labels(first[0]), ["\(a)#1", "\(a)#2"])
        XCTAssertEqual(labels(first[1]), ["\(b)#1"])
        XCTAssertNil(first[0].channels, "no summary yet")

        // One request in flight per coordinator; then at most one per 50 ms.
        _ = outbox.add([activity(a, 3)])
        XCTAssertEqual(outbox.due(coordinators: ring(coordinators), now: .milliseconds(10)), [])
        outbox.completed(first[0].id, delivered: true, now: .milliseconds(20))
        XCTAssertEqual(outbox.due(coordinators: ring(coordinators), now: .milliseconds(30)), [])
        let next = outbox.due(coordinators: ring(coordinators), now: .milliseconds(50))
        XCTAssertEqual(next.map(labels), [["\(a)#3"]])
        XCTAssertEqual(outbox.queued, 0)
        XCTAssertEqual(outbox.inFlightCount, 2)
    }

    func testAFailedRequestIsRetriedFirstAndFollowsTheChannelsNewOwner() {
        let a = channel(ownedBy: "coord-1", among: coordinators)
        var outbox = CoordinatorOutbox()
        _ = outbox.add([activity(a, 1), activity(a, 2)])
        let sent = outbox.due(coordinators: ring(coordinators), now: .zero)
        XCTAssertEqual(sent.map(\.coordinator), ["coord-1"])
        // Later activities of the channel wait behind the request in flight, even if the owner
        // changes meanwhile.
        _ = outbox.add([activity(a, 3)])
        XCTAssertEqual(outbox.due(coordinators: ring(["coord-2"]), now: .milliseconds(60)), [])

        outbox.completed(sent[0].id, delivered: false, now: .milliseconds(100))
        // The failed coordinator rests; had it stayed the owner, nothing goes out for a while.
        XCTAssertEqual(outbox.due(coordinators: ring(coordinators), now: .milliseconds(200)), [])
        // coord-1 is gone: the activities go to the new owner, oldest first.
        let retry = outbox.due(coordinators: ring(["coord-2"]), now: .milliseconds(300))
        XCTAssertEqual(retry.map(\.coordinator), ["coord-2"])
        XCTAssertEqual(retry.map(labels), [["\(a)#1", "\(a)#2", "\(a)#3"]])
    }

    func testActivitiesWaitForACoordinatorAndTheOldestAreDroppedBeyondTheBound() {
        var settings = CoordinatorOutbox.Settings()
        settings.maximumQueued = 3
        settings.maximumBatch = 2
        var outbox = CoordinatorOutbox(settings: settings)
        XCTAssertEqual(outbox.add((1...5).map { activity("show", $0) }), 2)
        XCTAssertEqual(outbox.dropped, 2)
        XCTAssertEqual(outbox.due(coordinators: ring([]), now: .seconds(10)), [], "no coordinator alive: keep them")
        XCTAssertEqual(outbox.queued, 3)

        let first = outbox.due(coordinators: ring(["coord-1"]), now: .seconds(11))
        XCTAssertEqual(first.map(labels), [["show#3", "show#4"]], "batches are bounded too")
        outbox.completed(first[0].id, delivered: true, now: .seconds(11))
        let second = outbox.due(coordinators: ring(["coord-1"]), now: .seconds(12))
        XCTAssertEqual(second.map(labels), [["show#5"]])

        // A failed batch going back into a full queue pushes out the oldest waiting.
        XCTAssertEqual(outbox.add((6...8).map { activity("other", $0) }), 0)
        XCTAssertEqual(outbox.completed(second[0].id, delivered: false, now: .seconds(12)), 1)
        XCTAssertEqual(outbox.dropped, 3)
        XCTAssertEqual(outbox.queued, 3)
    }

    func testTheSummaryGoesToEveryCoordinatorAndAgainAfterAFailure() {
        var outbox = CoordinatorOutbox()
        var status = RoomChannelStatus()
        status.name = "show"
        status.subscribers = 3
        outbox.setSummary([status])
        let first = outbox.due(coordinators: ring(coordinators), now: .zero)
        XCTAssertEqual(first.map(\.coordinator), ["coord-1", "coord-2"])
        XCTAssertEqual(first.map { $0.channels?.map(\.name) }, [["show"], ["show"]])
        outbox.completed(first[0].id, delivered: true, now: .milliseconds(10))
        outbox.completed(first[1].id, delivered: false, now: .milliseconds(10))
        XCTAssertEqual(outbox.due(coordinators: ring(coordinators), now: .milliseconds(100)), [], "coord-2 rests after its failure")
        let again = outbox.due(coordinators: ring(coordinators), now: .milliseconds(600))
        XCTAssertEqual(again.map(\.coordinator), ["coord-2"])
        XCTAssertEqual(again.first?.channels?.first?.subscribers, 3)
        outbox.completed(again[0].id, delivered: true, now: .milliseconds(600))

        status.subscribers = 4
        outbox.setSummary([status])
        let changed = outbox.due(coordinators: ring(coordinators), now: .seconds(1))
        XCTAssertEqual(changed.map { $0.channels?.first?.subscribers }, [4, 4])
    }
}
