import Rooms
import Routing
import ShowroomWire
import XCTest

/// The coordinator's decisions on channel events and its timers, driven with plain values and
/// times chosen by the test.
final class CoordinatorNodeTests: XCTestCase {
    /// Coordinator `c1` among `members`, caught up (every catch-up ask answered) at `nowMs`.
    private func coordinator(among members: [String] = ["c1"], nowMs: Int64 = 1_000, catchUp: Bool = true) -> CoordinatorNode {
        CoordinatorNode.caughtUp(among: members, relayThreshold: 100, nowMs: nowMs, catchUp: catchUp)
    }

    private func activity(_ type: RoomChannelEventType, _ channel: String = "show", uid: UInt32 = 0,
                          origin: String = "e1/1", sequence: UInt64) -> RoomChannelActivity {
        RoomChannelActivity.with {
            $0.type = type
            $0.channel = channel
            $0.uid = uid
            $0.origin = origin
            $0.originSequence = sequence
        }
    }

    private struct Refused: Error {}

    private func numbered(_ outcome: CoordinatorNode.ReportNumbering, file: StaticString = #filePath,
                          line: UInt = #line) throws -> CoordinatorNode.Numbered {
        guard case .numbered(let numbered) = outcome else {
            XCTFail("refused: \(outcome)", file: file, line: line)
            throw Refused()
        }
        return numbered
    }

    func testTheOwnerNumbersAReportOnceAndPublishesItsEventsOnceSettled() throws {
        var node = coordinator()
        let report = [activity(.channelCreated, sequence: 1), activity(.broadcasterJoined, uid: 7, sequence: 2)]
        let first = try numbered(node.number(report, from: "e1", seesMostOfTheCluster: true, nowMs: 2_000))
        XCTAssertEqual(first.events.map(\.sequence), [1, 2])
        XCTAssertEqual(first.events.map(\.type), [.channelCreated, .broadcasterJoined])
        XCTAssertEqual(first.activities, report)
        XCTAssertEqual(first.channels, ["show"])
        XCTAssertEqual(first.inherited, [])

        let again = try numbered(node.number(report, from: "e1", seesMostOfTheCluster: true, nowMs: 2_100))
        XCTAssertEqual(again.events, [], "a report sent again after a lost answer is numbered once")
        XCTAssertEqual(again.channels, ["show"], "its channel's record is still written")

        let writes = node.sequenceWrites(of: ["show"])
        XCTAssertEqual(writes.map(\.sequence.lastSequence), [2])
        XCTAssertEqual(writes.first?.batches, [:], "alone in the cluster: no replica to send to")
        XCTAssertEqual(node.settled([first.events[1]]), [], "the second waits for the first")
        XCTAssertEqual(node.settled([first.events[0]]).map(\.sequence), [1, 2])
        XCTAssertEqual(node.records.sequencer.unpublished(of: "show"), [])
        XCTAssertEqual(node.takeInherited(writes: { _ in true }), [], "published: nothing left to publish again")
    }

    func testAReportIsRefusedWholeWhereThisCoordinatorMayNotWrite() throws {
        var node = coordinator(among: ["c1", "c2"])
        let mine = try XCTUnwrap((0..<100).map { "ch-\($0)" }.first { node.ownership.owns($0) })
        let theirs = try XCTUnwrap((0..<100).map { "ch-\($0)" }.first { !node.ownership.owns($0) })
        let report = [activity(.broadcasterJoined, mine, uid: 1, sequence: 1), activity(.broadcasterJoined, theirs, uid: 1, sequence: 2)]

        XCTAssertEqual(node.number(report, from: "e1", seesMostOfTheCluster: true, nowMs: 2_000),
                       .refused(reason: "does not own channel \(theirs) (c2 does)"))
        XCTAssertEqual(node.number(Array(report.prefix(1)), from: "e1", seesMostOfTheCluster: false, nowMs: 2_000),
                       .refused(reason: "sees less than half of the cluster"))
        XCTAssertEqual(node.records.sequencer.count, 0, "nothing numbered")

        var catchingUp = coordinator(among: ["c1", "c2"], catchUp: false)
        XCTAssertEqual(catchingUp.number(Array(report.prefix(1)), from: "e1", seesMostOfTheCluster: true, nowMs: 2_000),
                       .refused(reason: "is taking over channel \(mine) from the others"))

        let owned = try numbered(node.number(Array(report.prefix(1)), from: "e1", seesMostOfTheCluster: true, nowMs: 2_000))
        XCTAssertEqual(owned.events.count, 1)
        XCTAssertEqual(node.sequenceWrites(of: [mine]).first?.batches.keys.sorted(), ["c2"], "the successor gets the numbers")
        XCTAssertEqual(node.sequenceWrites(of: [mine]).first?.batches["c2"]?.ownerWrite, true)
    }

    func testHostileReportsNumberNothingTheyShouldNotAndNeverTrap() throws {
        var node = coordinator()
        node.records.directory.edgeReported("e2", draining: false, channels: [RoomChannelStatus.with { $0.name = "show" }],
                                    edgeAlive: true, nowMs: 1_500)
        // Another edge claims the end of a channel that e2 still hosts, from the top of its numbers.
        let forged = [activity(.channelDestroyed, sequence: .max), activity(.audienceJoined, uid: .max, sequence: .max)]
        let outcome = try numbered(node.number(forged, from: "e1", seesMostOfTheCluster: true, nowMs: 2_000))
        XCTAssertEqual(outcome.events.map(\.type), [.audienceJoined], "an end another edge's hosting contradicts is not announced")
        XCTAssertEqual(outcome.events.first?.uid, .max)
        // Its run's marks are at the top: everything it sends again, or lower, is skipped.
        let replay = try numbered(node.number([activity(.audienceLeft, uid: 3, sequence: 0)], from: "e1",
                                              seesMostOfTheCluster: true, nowMs: 2_100))
        XCTAssertEqual(replay.events, [])
        // Many channels at once: each numbered from 1.
        let flood = (0..<2_000).map { activity(.audienceJoined, "flood-\($0)", uid: UInt32($0 + 1), origin: "e3/1", sequence: UInt64($0 + 1)) }
        let flooded = try numbered(node.number(flood, from: "e3", seesMostOfTheCluster: true, nowMs: 3_000))
        XCTAssertEqual(flooded.events.count, 2_000)
        XCTAssertTrue(flooded.events.allSatisfy { $0.sequence == 1 })
    }

    func testTheUsersOfAGoneRunLeaveOnceAndTheChannelEnds() throws {
        var node = coordinator()
        _ = try numbered(node.number([activity(.channelCreated, sequence: 1), activity(.audienceJoined, uid: 5, sequence: 2)],
                                     from: "e1", seesMostOfTheCluster: true, nowMs: 2_000))
        XCTAssertNil(node.departGoneRuns(seesMostOfTheCluster: true, nowMs: 2_500), "its run lives: nobody left")
        node.records.directory.edgeReported("e1", run: "e1/1", draining: false, channels: [], edgeAlive: true, nowMs: 2_600)
        node.records.directory.edgeReported("e1", run: "e1/2", draining: false, channels: [], edgeAlive: true, nowMs: 3_000)

        XCTAssertNil(node.departGoneRuns(seesMostOfTheCluster: false, nowMs: 3_100), "cut off from most of the cluster: left to the owner")
        let departed = try XCTUnwrap(node.departGoneRuns(seesMostOfTheCluster: true, nowMs: 3_100))
        XCTAssertEqual(departed.channels, ["show"])
        XCTAssertEqual(departed.events.map(\.type), [.audienceLeft, .channelDestroyed])
        XCTAssertEqual(departed.events.map(\.sequence), [3, 4])
        XCTAssertEqual(departed.activities.map(\.uid), [5, 0])
        XCTAssertEqual(departed.activities.map(\.reason), departed.events.map(\.reason))
        XCTAssertNil(node.departGoneRuns(seesMostOfTheCluster: true, nowMs: 3_200), "each leave is numbered once")
    }

    func testEventsNumberedBeforeARestartArePublishedOnceByTheOwner() throws {
        var before = coordinator()
        let numbered = try numbered(before.number([activity(.audienceJoined, uid: 5, sequence: 1)], from: "e1",
                                                  seesMostOfTheCluster: true, nowMs: 2_000))
        // Restarted with the records it held: the event never went out.
        var after = CoordinatorNode(records: before.replicas.records, selfID: "c1", startedAtMs: 3_000)
        XCTAssertEqual(after.takeInherited(writes: { _ in false }), [], "only where it may write")
        XCTAssertEqual(after.takeInherited(writes: { _ in true }).map(\.noticeID), numbered.events.map(\.noticeID))
        XCTAssertEqual(after.takeInherited(writes: { _ in true }), [])
    }

    func testTimersPruneOnlyOnceReportsSettledAndCheckPKsEveryFewSeconds() {
        var node = coordinator(nowMs: 1_000)
        let destroyed = [activity(.channelCreated, sequence: 1), activity(.channelDestroyed, sequence: 2)]
        _ = node.number(destroyed, from: "e1", seesMostOfTheCluster: true, nowMs: 1_000)
        let long = node.records.sequencer.retention.endedMs
        XCTAssertEqual(node.pruneSequences(nowMs: 1_000 + CoordinatorNode.reportsSettleMs - 1), [])
        XCTAssertEqual(node.records.sequencer.count, 1)
        XCTAssertEqual(node.pruneSequences(nowMs: 1_000 + max(long, CoordinatorNode.reportsSettleMs) + 1), ["show"])

        XCTAssertEqual(node.pkChecksDue(nowMs: 1_000, writes: { _ in true }).count, 0)
        XCTAssertEqual(node.nextPKCheckMs, 1_000 + CoordinatorNode.pkCheckEveryMs)
        _ = node.pkChecksDue(nowMs: 1_000 + CoordinatorNode.pkCheckEveryMs - 1, writes: { _ in true })
        XCTAssertEqual(node.nextPKCheckMs, 1_000 + CoordinatorNode.pkCheckEveryMs, "not due yet: unchanged")
        _ = node.pkChecksDue(nowMs: 1_000 + CoordinatorNode.pkCheckEveryMs, writes: { _ in true })
        XCTAssertEqual(node.nextPKCheckMs, 1_000 + 2 * CoordinatorNode.pkCheckEveryMs)
    }
    func testStagesGoOutWhenRoomsChangeAndOnTheRefreshAndAPurgedRoomIsToldNothingMore() throws {
        var node = coordinator()
        var random = SeededGenerator(seed: 3)
        let created = try node.records.registry.create(Requests.create(id: "a", channel: "show-a"), nowMs: 1_000, using: &random)
        let first = node.roomsChanged([created])
        XCTAssertEqual(first.stages.map(\.channel), ["show-a"])
        XCTAssertFalse(first.reconcileForwards)
        XCTAssertEqual(node.roomsChanged([created]).stages, [], "unchanged: not sent again")

        XCTAssertEqual((1..<5).map { _ in node.tickStages().count }, [0, 0, 0, 0])
        XCTAssertEqual(node.tickStages().map(\.channel), ["show-a"], "every fifth tick refreshes every stage")

        var closed = created
        closed.room.state = .closed
        XCTAssertTrue(node.roomsChanged([closed]).reconcileForwards, "a closed room's forwards stop")
        var purged = closed
        purged.purged = true
        XCTAssertEqual(node.roomsChanged([purged]).stages, [], "a purged room's channel is told nothing more")
        XCTAssertEqual(node.edgeInstructions.stagesSent, 0)
    }

    func testRoomsHandedOverToTheirNewHoldersAreForgottenWithTheirStages() throws {
        var node = coordinator(among: ["c1", "c2", "c3"])
        var random = SeededGenerator(seed: 5)
        // A room c1 owns while c2 and c3 are away, held by c3 and c2 once they are back.
        let members = ["c1", "c2", "c3"]
        let ring = OwnerRing(.coordinator, memberIDs: Set(members))
        let id = try XCTUnwrap((0..<200).map { "room-\($0)" }.first { !ring.holders(of: $0, count: 2).contains("c1") })
        _ = node.replicas.membersChanged(to: ["c1"])
        let created = try node.records.registry.create(Requests.create(id: id), nowMs: 1_000, using: &random)
        XCTAssertEqual(node.roomsChanged([created]).stages.count, 1)
        XCTAssertEqual(node.edgeInstructions.stagesSent, 1)

        let handOver = node.coordinatorsChanged(to: members)
        XCTAssertEqual(handOver.forget, [id])
        XCTAssertEqual(Set(handOver.batches.map(\.member)), ["c2", "c3"], "handed to its owner and successor")
        XCTAssertEqual(node.edgeInstructions.stagesSent, 0, "its channel is told nothing more from here")
    }

    func testABatchIsRefusedFromAFalseOwnerAndANewerCopyAbandonsTheWritesOfTheRoomItReplaces() throws {
        var node = coordinator(among: ["c1", "c2"])
        var random = SeededGenerator(seed: 11)
        let mine = try XCTUnwrap((0..<100).map { "room-\($0)" }.first { node.ownership.owns($0) })
        let created = try node.records.registry.create(Requests.create(id: mine), nowMs: 1_000, using: &random)
        let batch = RoomStateBatch.with { $0.rooms = [created.room] }
        let (write, _) = node.replicas.write(mine, sends: ["c2": (keys: [mine], records: [batch])], isLatest: false)

        var forged = batch
        forged.from = "c2"
        forged.ownerWrite = true
        guard case .refused(let error, let sendBack) = node.receive(forged, nowMs: 2_000) else { return XCTFail("taken") }
        XCTAssertEqual(error.code, .unavailable, "c2 does not own the room")
        XCTAssertNil(sendBack)

        var newer = created.room
        newer.version &+= 5
        newer.name = "The other side's"
        let copy = RoomStateBatch.with {
            $0.from = "c2"
            $0.rooms = [newer]
        }
        guard case .taken(let received, let abandoned) = node.receive(copy, nowMs: 2_000) else { return XCTFail("refused") }
        XCTAssertEqual(received.replaced, [mine])
        XCTAssertEqual(abandoned, [write], "the write of the record replaced is never acknowledged")
        XCTAssertEqual(node.records.registry.room(mine)?.name, "The other side's")

        var older = newer
        older.version = 0
        older.name = "Stale"
        guard case .taken(let stale, let none) = node.receive(RoomStateBatch.with { $0.from = "c2"; $0.rooms = [older] }, nowMs: 2_100)
        else { return XCTFail("refused") }
        XCTAssertEqual(stale.changes, [], "an older copy changes nothing")
        XCTAssertEqual(none, [])
    }
}
