import Rooms
import Routing
import ShowroomTesting
import ShowroomWire
import XCTest
@testable import Coordinator

/// The coordinator's request handling, on an in-process network with a clock moved by hand:
/// routing to a room's owner, replication before an answer, listing, hand-over when an owner dies,
/// catch-up after a restart, expiry, placement, kick and edge reports. No process is started.
final class CoordinatorShellTests: XCTestCase {
    let ids = ["coord-a", "coord-b", "coord-c"]

    /// A room id whose owner and successor are `owner` and `successor`.
    func roomID(ownedBy owner: String, successor: String, among members: [String]) -> String {
        let ring = OwnerRing(.coordinator, memberIDs: members)
        for n in 0..<10_000 {
            let id = "room-\(n)"
            if ring.holders(of: id, count: 2) == [owner, successor] { return id }
        }
        preconditionFailure("no room id with owner \(owner) and successor \(successor)")
    }

    func testRequestsAtAnyCoordinatorAreServedByTheRoomsOwnerAndHeldByItsSuccessor() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        let room = try cluster.create(at: "coord-a")
        let holders = cluster.holders(of: room.roomID)
        XCTAssertEqual(holders.count, 2)
        let other = ids.first { !holders.contains($0) }!
        for id in ids { XCTAssertEqual(try cluster.get(room.roomID, at: id).name, "Friday show", "get at \(id)") }

        XCTAssertEqual(try cluster.join(room.roomID, uid: 7, at: other).audienceCount, 1)
        XCTAssertEqual(try cluster.join(room.roomID, uid: 8, at: holders[1]).audienceCount, 2)
        XCTAssertEqual(try cluster.leave(room.roomID, uid: 7, at: holders[0]).audienceUids, [8])
        let message = try cluster.chat(room.roomID, uid: 8, text: "hello", at: other)
        XCTAssertEqual(message.sequence, 1)
        XCTAssertEqual(try cluster.history(room.roomID, at: holders[1]).map(\.text), ["hello"])

        // Owner and successor hold the same version; the third coordinator holds nothing.
        let atOwner = try XCTUnwrap(cluster.room(room.roomID, at: holders[0]))
        XCTAssertEqual(cluster.room(room.roomID, at: holders[1]), atOwner)
        XCTAssertNil(cluster.room(room.roomID, at: other))
        // Only the owner publishes the notices.
        XCTAssertFalse(cluster.sinks[holders[0]]!.roomNotices.isEmpty)
        XCTAssertTrue(cluster.sinks[holders[1]]!.roomNotices.isEmpty)
        XCTAssertTrue(cluster.sinks[other]!.roomNotices.isEmpty)

        // Only the owner may close it, and then it stays closed everywhere.
        XCTAssertThrowsError(try cluster.close(room.roomID, uid: 99, at: other)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .notRoomOwner)
        }
        XCTAssertEqual(try cluster.close(room.roomID, uid: 42, at: other).state, .closed)
        XCTAssertEqual(cluster.room(room.roomID, at: holders[1])?.state, .closed)
    }

    func testBadRequestsGetTheirErrorAndChangeNothing() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        XCTAssertThrowsError(try cluster.get("no-such-room", at: "coord-b")) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .roomNotFound)
        }
        XCTAssertThrowsError(try cluster.create(at: "coord-a", name: String(repeating: "x", count: 10_000))) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
        }
        // A body that is not the kind's message.
        var garbage = try WireEnvelope(request: .roomJoin, id: 1, body: RoomGetRoomRequest())
        garbage.body = Data([0xFF, 0xFF, 0xFF])
        let answer = try cluster.node("coord-c").request(garbage)
        XCTAssertEqual(answer.failure?.code, .malformedMessage)
        XCTAssertFalse(answer.failure?.message.isEmpty ?? true)
        XCTAssertEqual(try cluster.list(at: "coord-a").rooms.count, 0)
    }

    func testAWriteIsAnsweredOnlyOnceTheSuccessorHoldsIt() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        let roomID = roomID(ownedBy: "coord-a", successor: "coord-b", among: ids)
        cluster.network.hold("coord-b")
        let answer = try beginCreate(roomID, named: "held", at: "coord-a", in: cluster)
        XCTAssertNil(answer.result, "answered before the successor held the room")
        XCTAssertNotNil(cluster.room(roomID, at: "coord-a"))
        XCTAssertNil(cluster.room(roomID, at: "coord-b"))
        XCTAssertEqual(cluster.network.heldCount(for: "coord-b"), 1)

        cluster.network.release("coord-b")
        let envelope = try XCTUnwrap(answer.result).get()
        XCTAssertNil(envelope.failure)
        XCTAssertEqual(try envelope.decodeBody(RoomCreateRoomResponse.self).room.roomID, roomID)
        XCTAssertEqual(cluster.room(roomID, at: "coord-b")?.name, "held")
    }

    func testTheDeliberatelyBrokenRuleAnswersBeforeTheSuccessorHoldsTheWrite() throws {
        let cluster = try CoordinatorHarness(coordinators: [])
        cluster.faults = [.answerBeforeReplicated]
        for id in ids { try cluster.start(id, announce: false) }
        cluster.network.membershipChanged()
        let roomID = roomID(ownedBy: "coord-a", successor: "coord-b", among: ids)
        cluster.network.hold("coord-b")
        let answer = try beginCreate(roomID, named: "unsafe", at: "coord-a", in: cluster)
        XCTAssertNil(try XCTUnwrap(answer.result, "the mutant answers at once").get().failure)
        XCTAssertNil(cluster.room(roomID, at: "coord-b"), "while the successor holds nothing")
    }

    func testAWriteWhoseSuccessorDiesIsAnsweredWhenTheMembershipSaysSo() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        let roomID = roomID(ownedBy: "coord-a", successor: "coord-b", among: ids)
        cluster.network.hold("coord-b")
        let answer = try beginCreate(roomID, named: "orphan", at: "coord-a", in: cluster)
        XCTAssertNil(answer.result)
        cluster.network.dropHeld("coord-b")
        cluster.kill("coord-b")
        XCTAssertNil(try XCTUnwrap(answer.result).get().failure)
        // The new successor got the room in the hand-over.
        XCTAssertEqual(cluster.room(roomID, at: "coord-c")?.name, "orphan")
    }

    func testWhenTheOwnerDiesItsSuccessorServesTheRoomAtOnce() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        let roomID = roomID(ownedBy: "coord-a", successor: "coord-b", among: ids)
        _ = try cluster.create(at: "coord-c", roomID: roomID)
        _ = try cluster.join(roomID, uid: 5, at: "coord-c")
        _ = try cluster.chat(roomID, uid: 5, text: "before", at: "coord-b")

        cluster.kill("coord-a")
        XCTAssertEqual(cluster.holders(of: roomID), ["coord-b", "coord-c"])
        // The old successor owns it now and has handed it to its new successor.
        XCTAssertEqual(cluster.room(roomID, at: "coord-c")?.audienceUids, [5])
        XCTAssertEqual(try cluster.history(roomID, at: "coord-c").map(\.text), ["before"])
        XCTAssertEqual(try cluster.join(roomID, uid: 6, at: "coord-c").audienceCount, 2)
        XCTAssertEqual(try cluster.chat(roomID, uid: 6, text: "after", at: "coord-b").sequence, 2)
        XCTAssertFalse(cluster.sinks["coord-b"]!.roomNotices.isEmpty, "the new owner publishes")
    }

    func testARequestHeldForACatchUpGoesToTheOwnerWhenTheMembersChangeMeanwhile() throws {
        // Four coordinators and two edges: with two coordinators gone, the others still see most
        // of the cluster and write.
        let all = ["coord-a", "coord-b", "coord-c", "coord-d"]
        let cluster = try CoordinatorHarness(coordinators: all, edges: ["edge-1", "edge-2"])
        let holders = { (members: [String], id: String) in OwnerRing(.coordinator, memberIDs: members).holders(of: id, count: 2) }
        let roomID = try XCTUnwrap((0..<10_000).lazy.map { "room-\($0)" }.first { id in
            holders(all, id) == ["coord-a", "coord-b"] && holders(["coord-b", "coord-c"], id) == ["coord-b", "coord-c"]
        })
        _ = try cluster.create(at: "coord-a", roomID: roomID)
        // coord-b takes the room over from coord-a and holds a join until coord-c answers the
        // catch-up.
        cluster.network.hold("coord-c")
        cluster.kill("coord-a")
        cluster.kill("coord-d")
        let answer = PendingAnswer()
        try cluster.node("coord-b").begin(.roomJoin, RoomJoinRoomRequest.with {
            $0.roomID = roomID
            $0.uid = 7
        }) { answer.result = $0 }
        cluster.network.run()
        XCTAssertNil(answer.result)

        // Meanwhile coord-a comes back: the held join is its to serve.
        try cluster.start("coord-a")
        try cluster.start("coord-d")
        let noticesAtB = cluster.sinks["coord-b"]!.roomNotices.count
        cluster.network.release("coord-c")
        cluster.network.advance(by: .seconds(1))
        let envelope = try XCTUnwrap(answer.result).get()
        XCTAssertNil(envelope.failure)
        XCTAssertEqual(try envelope.decodeBody(RoomJoinRoomResponse.self).room.audienceUids, [7])
        XCTAssertEqual(cluster.room(roomID, at: "coord-a")?.audienceUids, [7])
        XCTAssertEqual(cluster.room(roomID, at: "coord-b")?.audienceUids, [7])
        XCTAssertEqual(cluster.sinks["coord-b"]!.roomNotices.count, noticesAtB, "served by a coordinator that no longer owned the room")
        XCTAssertEqual(cluster.sinks["coord-a"]!.roomNotices.last?.room.audienceUids, [7])
    }

    func testAReplicaThatMissedAChatMessageRefusesTheNextAndIsSentTheRoomWhole() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        let roomID = roomID(ownedBy: "coord-a", successor: "coord-b", among: ids)
        _ = try cluster.create(at: "coord-a", roomID: roomID)
        // #1 does not reach the successor.
        cluster.network.hold("coord-b")
        let first = try beginChat(roomID, text: "one", at: "coord-a", in: cluster)
        cluster.network.dropHeld("coord-b")
        XCTAssertNil(first.result, "answered before the successor held it")

        // #2 alone would leave the successor's chat skipping #1: it refuses it.
        let second = try beginChat(roomID, text: "two", at: "coord-a", in: cluster)
        XCTAssertNil(second.result)
        XCTAssertEqual(cluster.shells["coord-b"]!.machine.records.registry.messages(in: roomID).map(\.sequence), [])

        // The repair sends the room whole; both writes are answered then.
        cluster.network.advance(by: .seconds(1))
        XCTAssertNil(try XCTUnwrap(first.result).get().failure)
        XCTAssertNil(try XCTUnwrap(second.result).get().failure)
        XCTAssertEqual(cluster.shells["coord-b"]!.machine.records.registry.messages(in: roomID).map(\.text), ["one", "two"])
    }

    func testARestartedCoordinatorReloadsItsDatabaseAndCatchesUp() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        let roomID = roomID(ownedBy: "coord-a", successor: "coord-b", among: ids)
        _ = try cluster.create(at: "coord-a", roomID: roomID)
        _ = try cluster.join(roomID, uid: 1, at: "coord-a")

        cluster.kill("coord-a")
        _ = try cluster.join(roomID, uid: 2, at: "coord-b")
        _ = try cluster.chat(roomID, uid: 2, text: "while a was away", at: "coord-c")
        let latest = try XCTUnwrap(cluster.room(roomID, at: "coord-b"))

        try cluster.start("coord-a")
        // It owns the room again, with what was written while it was away.
        XCTAssertEqual(cluster.holders(of: roomID), ["coord-a", "coord-b"])
        XCTAssertEqual(cluster.room(roomID, at: "coord-a")?.version, latest.version)
        XCTAssertEqual(cluster.room(roomID, at: "coord-a")?.audienceUids, [1, 2])
        XCTAssertEqual(try cluster.history(roomID, at: "coord-a").map(\.text), ["while a was away"])
        XCTAssertEqual(try cluster.join(roomID, uid: 3, at: "coord-c").audienceCount, 3)
        // coord-c held it only while coord-a was away.
        XCTAssertNil(cluster.room(roomID, at: "coord-c"))
    }

    func testTheListingIsNewestFirstAcrossEveryCoordinatorInPages() throws {
        let cluster = try CoordinatorHarness(coordinators: ids)
        var created: [String] = []
        for n in 0..<7 {
            created.append(try cluster.create(at: ids[n % 3], name: "show \(n)").roomID)
            cluster.network.advance(by: .seconds(1))
        }
        var seen: [String] = []
        var token = ""
        repeat {
            let page = try cluster.list(at: "coord-b", pageSize: 3, pageToken: token)
            XCTAssertLessThanOrEqual(page.rooms.count, 3)
            XCTAssertEqual(page.total, 7)
            seen += page.rooms.map(\.roomID)
            token = page.nextPageToken
        } while !token.isEmpty
        XCTAssertEqual(seen, created.reversed())
        // The largest page a client may ask for (the gatherer asks the others for one more).
        XCTAssertEqual(try cluster.list(at: "coord-c", pageSize: 100).rooms.map(\.roomID), created.reversed())
        XCTAssertThrowsError(try cluster.list(at: "coord-a", pageSize: 10_000)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
        }
    }

    func testARoomExpiresOnTheClockAndOnlyItsOwnerAnnouncesIt() throws {
        let cluster = try CoordinatorHarness(coordinators: [])
        cluster.settings = (roomExpirySeconds: 60, ownerGraceSeconds: 600)
        for id in ids { try cluster.start(id) }
        let room = try cluster.create(at: "coord-a")
        let owner = cluster.holders(of: room.roomID)[0]
        cluster.network.advance(by: .seconds(59))
        XCTAssertEqual(try cluster.get(room.roomID, at: "coord-c").state, .open)
        cluster.network.advance(by: .seconds(2))
        let closed = try cluster.get(room.roomID, at: "coord-c")
        XCTAssertEqual(closed.state, .closed)
        XCTAssertEqual(closed.closeReason, .expired)
        for id in ids {
            let expired = cluster.sinks[id]!.roomNotices.filter { $0.kind == .roomExpired }
            XCTAssertEqual(expired.count, id == owner ? 1 : 0, "expiry notices at \(id)")
        }
    }

    func testACoordinatorCutOffFromMostOfTheClusterLetsNoTimerWriteUntilItSeesMore() throws {
        let cluster = try CoordinatorHarness(coordinators: [])
        cluster.settings = (roomExpirySeconds: 60, ownerGraceSeconds: 600)
        for id in ids { try cluster.start(id) }
        let roomID = roomID(ownedBy: "coord-a", successor: "coord-b", among: ids)
        _ = try cluster.create(at: "coord-a", roomID: roomID)
        // coord-a alone: its copy may be stale, and the others may have written since.
        cluster.kill("coord-b")
        cluster.kill("coord-c")
        cluster.network.advance(by: .seconds(61))
        XCTAssertEqual(cluster.room(roomID, at: "coord-a")?.state, .open, "expired by a coordinator that sees a third of the cluster")
        XCTAssertTrue(cluster.sinks["coord-a"]!.roomNotices.filter { $0.kind == .roomExpired }.isEmpty)

        // Once it sees most of the cluster again, the clock's writes go on.
        try cluster.start("coord-b")
        cluster.network.advance(by: .seconds(2))
        XCTAssertEqual(cluster.room(roomID, at: "coord-a")?.state, .closed)
        XCTAssertEqual(cluster.room(roomID, at: "coord-b")?.state, .closed)
        XCTAssertEqual(cluster.sinks["coord-a"]!.roomNotices.filter { $0.kind == .roomExpired }.count, 1)
    }

    func testPlacementIsStickyAndMovesOffAnEdgeNobodyCanReach() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1", "edge-2"])
        let first = try cluster.place("show-1", at: "coord-a")
        XCTAssertTrue(["edge-1", "edge-2"].contains(first.edgeID))
        for id in ids { XCTAssertEqual(try cluster.place("show-1", at: id).edgeID, first.edgeID) }
        // Every coordinator holds the placement.
        for id in ids { XCTAssertEqual(cluster.shells[id]!.machine.records.directory.placements.placements["show-1"]?.edgeID, first.edgeID) }

        // A client reports the edge unreachable while it still answers: the channel stays.
        XCTAssertEqual(try cluster.place("show-1", at: "coord-b", unreachableEdge: first.edgeID).edgeID, first.edgeID)
        // The edge stops answering (not yet declared dead): the next report moves the channel.
        cluster.network.kill(first.edgeID)
        let moved = try cluster.place("show-1", at: "coord-b", unreachableEdge: first.edgeID)
        XCTAssertNotEqual(moved.edgeID, first.edgeID)
        for id in ids { XCTAssertEqual(cluster.shells[id]!.machine.records.directory.placements.placements["show-1"]?.edgeID, moved.edgeID) }
    }

    func testPlacementNeedsAValidToken() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        XCTAssertThrowsError(try cluster.node("coord-a").ask(.channelPlace, RoomPlaceChannelRequest.with {
            $0.channel = "show-1"
            $0.uid = 7
        }, as: RoomPlaceChannelResponse.self)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .tokenMalformed)
        }
        XCTAssertThrowsError(try cluster.node("coord-a").ask(.channelPlace, RoomPlaceChannelRequest.with {
            $0.channel = "show-1"
            $0.uid = 7
            $0.token = (try? TestApp.token(channel: "other", uid: 7)) ?? ""
        }, as: RoomPlaceChannelResponse.self)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .tokenChannelMismatch)
        }
        for id in ids { XCTAssertTrue(cluster.shells[id]!.machine.records.directory.placements.placements.isEmpty) }
    }

    func testAKickBansEverywhereAndEveryEdgeIsTold() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1", "edge-2"])
        let answer = try cluster.kick("show-1", uid: 9, banSeconds: 60, at: "coord-c")
        XCTAssertEqual(answer.edges, 2)
        XCTAssertEqual(cluster.edgeBans["edge-1"]?.map(\.uid), [9])
        XCTAssertEqual(cluster.edgeBans["edge-2"]?.map(\.uid), [9])
        for id in ids {
            XCTAssertEqual(cluster.shells[id]!.machine.records.bans.active(nowMs: cluster.network.now).map(\.uid), [9], "bans at \(id)")
        }
        // The ban lapses on the clock.
        cluster.network.advance(by: .seconds(61))
        for id in ids { XCTAssertTrue(cluster.shells[id]!.machine.records.bans.active(nowMs: cluster.network.now).isEmpty) }

        // A kick signed with another certificate is refused and bans nobody.
        XCTAssertThrowsError(try cluster.kick("show-1", uid: 10, banSeconds: 60, at: "coord-a",
                                              certificate: "00000000000000000000000000000000")) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .adminUnauthorized)
        }
        XCTAssertEqual(cluster.edgeBans["edge-1"]?.map(\.uid), [9])
    }

    func testJoinsAndLeavesOfACallChannelGoOnToTheCallsOwner() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        for id in ["signal-1", "signal-2", "signal-3"] { cluster.addCallSignal(id) }
        let callee: UInt32 = 1001
        let channel = Names.callChannel(callee: callee, random: "0123456789abcdef")
        let owner = OwnerRing(.callsignal, memberIDs: ["signal-1", "signal-2", "signal-3"]).owner(of: "uid/\(callee)")!
        let coordinator = cluster.holders(of: channel)[0]
        let now = cluster.network.now
        try cluster.report(from: "edge-1", to: coordinator, [
            activity(.channelCreated, channel: channel, uid: 2001, number: 1, atMs: now),
            activity(.broadcasterJoined, channel: channel, uid: 2001, number: 2, atMs: now),
            activity(.broadcasterLeft, channel: channel, uid: 2001, number: 3, atMs: now),
            activity(.broadcasterJoined, channel: "show-1", uid: 7, number: 4, atMs: now),
        ])
        XCTAssertEqual(cluster.callActivities[owner]?.map(\.joined), [true, false])
        XCTAssertEqual(cluster.callActivities[owner]?.map(\.uid), [2001, 2001])
        XCTAssertEqual(cluster.callActivities.count, 1, "only the call's owner hears of it")
        // Sent again after a lost answer: passed on once.
        try cluster.report(from: "edge-1", to: coordinator, [activity(.broadcasterLeft, channel: channel, uid: 2001, number: 3, atMs: now)])
        XCTAssertEqual(cluster.callActivities[owner]?.count, 2)
    }

    func testEdgeActivitiesAreNumberedOnceAndPublishedOnlyAfterTheSuccessorHoldsTheNumbers() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        let channel = "show-7"
        let holders = cluster.holders(of: channel)
        let now = cluster.network.now
        let joined = [
            activity(.channelCreated, channel: channel, uid: 1, number: 1, atMs: now),
            activity(.broadcasterJoined, channel: channel, uid: 1, number: 2, atMs: now),
        ]
        // The report reaches a coordinator that does not own the channel's numbers, while the
        // successor is held: nothing is published yet.
        cluster.network.hold(holders[1])
        var answered = false
        try cluster.node(holders[0]).begin(.edgeChannelReport, RoomEdgeChannelReport.with {
            $0.edgeID = "edge-1"
            $0.activities = joined
        }) { _ in answered = true }
        cluster.network.run()
        XCTAssertFalse(answered)
        XCTAssertTrue(cluster.sinks[holders[0]]!.channelEvents.isEmpty)
        cluster.network.release(holders[1])
        XCTAssertTrue(answered)
        XCTAssertEqual(cluster.sinks[holders[0]]!.channelEvents.map(\.sequence), [1, 2])
        XCTAssertEqual(cluster.sinks[holders[0]]!.channelEvents.map(\.type), [.channelCreated, .broadcasterJoined])
        XCTAssertEqual(cluster.shells[holders[1]]!.machine.records.sequencer.sequence(of: channel).lastSequence, 2)

        // The same report again (its answer was lost) numbers nothing new; a new activity is 3.
        try cluster.report(from: "edge-1", to: holders[0], joined)
        try cluster.report(from: "edge-1", to: holders[0], [
            activity(.audienceJoined, channel: channel, uid: 5, number: 3, atMs: now),
        ])
        XCTAssertEqual(cluster.sinks[holders[0]]!.channelEvents.map(\.sequence), [1, 2, 3])

        // The owner dies: its successor numbers on in a new, later series (the old owner, were it
        // only cut off, could still number in the old one), and skips what was numbered already.
        // The old owner's last event, which the successor cannot know went out, goes out again
        // first under the same notice id (receivers de-duplicate on it).
        let last = try XCTUnwrap(cluster.sinks[holders[0]]!.channelEvents.last)
        cluster.kill(holders[0])
        let next = cluster.holders(of: channel)[0]
        XCTAssertEqual(next, holders[1])
        try cluster.report(from: "edge-1", to: next, [
            activity(.audienceJoined, channel: channel, uid: 5, number: 3, atMs: now),
            activity(.audienceLeft, channel: channel, uid: 5, number: 4, atMs: now),
        ])
        let events = cluster.sinks[next]!.channelEvents
        XCTAssertEqual(events.first, last)
        XCTAssertEqual(events.dropFirst().map(\.sequence), [1])
        XCTAssertEqual(events.dropFirst().map(\.type), [.audienceLeft])
        XCTAssertGreaterThan(try XCTUnwrap(events.last).series, last.series)
    }

    /// The owner numbers an edge's activities and its successor holds the numbers, but the owner
    /// dies before it publishes them: the edge's resend is numbered already at the successor,
    /// which publishes the events the record says were not out yet.
    func testEventsAnOwnerNumberedButDidNotPublishArePublishedByTheCoordinatorTakingOver() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        let channel = "show-8"
        let (owner, successor) = (cluster.holders(of: channel)[0], cluster.holders(of: channel)[1])
        let now = cluster.network.now
        let joined = [
            activity(.channelCreated, channel: channel, uid: 0, number: 1, atMs: now),
            activity(.broadcasterJoined, channel: channel, uid: 42, number: 2, atMs: now),
        ]
        cluster.network.hold(successor)
        try cluster.node(owner).begin(.edgeChannelReport, RoomEdgeChannelReport.with {
            $0.edgeID = "edge-1"
            $0.activities = joined
        }) { _ in }
        // The successor takes the numbers; the owner's process is gone before the answer comes.
        cluster.network.kill(owner)
        cluster.network.release(successor)
        XCTAssertEqual(cluster.shells[successor]!.machine.records.sequencer.sequence(of: channel).lastSequence, 2)
        cluster.kill(owner)
        XCTAssertTrue(cluster.sinks[owner]!.channelEvents.isEmpty)

        try cluster.report(from: "edge-1", to: successor, joined)
        XCTAssertEqual(cluster.sinks[successor]!.channelEvents.map(\.type), [.channelCreated, .broadcasterJoined])
        XCTAssertEqual(cluster.sinks[successor]!.channelEvents.map(\.sequence), [1, 2])
        XCTAssertEqual(cluster.shells[successor]!.machine.records.sequencer.unpublished(of: channel), [])
        // Once out, they do not go out again.
        try cluster.report(from: "edge-1", to: successor, joined)
        cluster.network.advance(by: .seconds(2))
        XCTAssertEqual(cluster.sinks[successor]!.channelEvents.count, 2)
    }

    /// The owner numbers an edge's activities (its database holds the numbers) and dies before
    /// its successor holds them; restarted before the others noticed much, it owns the channel
    /// again, and publishes the events its database says were not out yet, the edge's resend
    /// being numbered already.
    func testARestartedOwnerPublishesWhatItNumberedButDidNotPublish() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        let channel = "show-8"
        let (owner, successor) = (cluster.holders(of: channel)[0], cluster.holders(of: channel)[1])
        let now = cluster.network.now
        let joined = [activity(.broadcasterJoined, channel: channel, uid: 42, number: 1, atMs: now)]
        cluster.network.hold(successor)
        try cluster.node(owner).begin(.edgeChannelReport, RoomEdgeChannelReport.with {
            $0.edgeID = "edge-1"
            $0.activities = joined
        }) { _ in }
        cluster.network.dropHeld(successor)
        cluster.kill(owner)
        try cluster.start(owner)
        XCTAssertEqual(cluster.holders(of: channel)[0], owner)

        // The tick publishes them without waiting for a resend.
        cluster.network.advance(by: .seconds(1))
        XCTAssertEqual(cluster.sinks[owner]!.channelEvents.map(\.type), [.broadcasterJoined])
        try cluster.report(from: "edge-1", to: owner, joined)
        XCTAssertEqual(cluster.sinks[owner]!.channelEvents.map(\.uid), [42])
    }

    /// A channel gone (destroyed, then an hour) is forgotten by every coordinator holding its
    /// numbers, and by their databases; when it comes back it is numbered from 1 in a new series
    /// whose notice ids were never used.
    func testTheNumbersOfAChannelGoneArePrunedEverywhereAndItComesBackInANewSeries() throws {
        let cluster = try CoordinatorHarness(coordinators: ids, edges: ["edge-1"])
        let channel = "call-1001-ab12"
        let owner = cluster.holders(of: channel)[0]
        let now = cluster.network.now
        try cluster.report(from: "edge-1", to: owner, [
            activity(.channelCreated, channel: channel, uid: 0, number: 1, atMs: now),
            activity(.broadcasterJoined, channel: channel, uid: 1001, number: 2, atMs: now),
            activity(.broadcasterLeft, channel: channel, uid: 1001, number: 3, atMs: now),
            activity(.channelDestroyed, channel: channel, uid: 0, number: 4, atMs: now),
        ])
        let old = cluster.sinks[owner]!.channelEvents
        XCTAssertEqual(old.map(\.sequence), [1, 2, 3, 4])
        for holder in cluster.holders(of: channel) { XCTAssertEqual(cluster.shells[holder]!.machine.records.sequencer.count, 1) }

        cluster.network.advance(by: .seconds(3_599))
        XCTAssertEqual(cluster.shells[owner]!.machine.records.sequencer.count, 1, "within the retention")
        cluster.network.advance(by: .seconds(2))
        for id in ids { XCTAssertEqual(cluster.shells[id]!.machine.records.sequencer.count, 0, "\(id) holds nothing any more") }

        // A restart loads nothing of it, and no other coordinator hands it back.
        cluster.kill(owner)
        try cluster.start(owner)
        XCTAssertEqual(cluster.shells[owner]!.machine.records.sequencer.count, 0)
        try cluster.report(from: "edge-1", to: owner, [
            activity(.channelCreated, channel: channel, uid: 0, origin: "edge-1#2", number: 1, atMs: cluster.network.now),
        ])
        let again = try XCTUnwrap(cluster.sinks[owner]!.channelEvents.last)
        XCTAssertEqual(again.sequence, 1)
        XCTAssertGreaterThan(again.series, old[0].series)
        XCTAssertFalse(old.map(\.noticeID).contains(again.noticeID))
    }

    func testCallEventsArePublishedUnderTheCallAndMalformedReportsChangeNothing() throws {
        let cluster = try CoordinatorHarness(coordinators: ["coord-a"])
        var event = SignalCallNotification()
        event.callID = "1001-ab12"
        event.noticeID = "1001-ab12-203"
        event.eventType = 203
        event.caller = 2001
        event.callee = 1001
        event.channel = "call-1001-cd34"
        event.endReason = "hungUp"
        event.durationMs = 5_000
        let node = cluster.node("coord-a")
        _ = try node.ask(.callEvent, SignalCallEventReport.with { $0.events = [event] }, as: SignalCallEventReportResponse.self)
        let published = cluster.sinks["coord-a"]!.published.filter { $0.kind == .callEvent }
        XCTAssertEqual(published.map(\.topic), ["call/1001-ab12"])
        XCTAssertEqual(try SignalCallNotification(serializedBytes: published[0].body), event)

        func malformed(_ change: (inout SignalCallNotification) -> Void) -> SignalCallEventReport {
            var bad = event
            change(&bad)
            return SignalCallEventReport.with { $0.events = [event, bad] }
        }
        let hostile: [SignalCallEventReport] = [
            malformed { $0.eventType = 101 },
            malformed { $0.callee = 0 },
            malformed { $0.channel = "room-1" },
            malformed { $0.callID = "9999-ab12" },
            malformed { $0.noticeID = "forged" },
            malformed { $0.endReason = String(repeating: "x", count: 100) },
            SignalCallEventReport.with { $0.events = Array(repeating: event, count: 1_001) },
        ]
        for report in hostile {
            XCTAssertThrowsError(try node.ask(.callEvent, report, as: SignalCallEventReportResponse.self)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
            }
        }
        XCTAssertEqual(cluster.sinks["coord-a"]!.published.filter { $0.kind == .callEvent }.count, 1, "nothing of a bad report went out")
    }

    /// Where the answer to a request lands once the network delivers it.
    final class PendingAnswer {
        var result: Result<WireEnvelope, ShowroomError>?
    }

    /// Starts sending a chat message to room `roomID` at coordinator `id` and delivers what can be
    /// delivered now.
    func beginChat(_ roomID: String, text: String, at id: String, in cluster: CoordinatorHarness) throws -> PendingAnswer {
        let answer = PendingAnswer()
        try cluster.node(id).begin(.roomChatSend, RoomSendChatRequest.with {
            $0.roomID = roomID
            $0.uid = 5
            $0.text = text
        }) { answer.result = $0 }
        cluster.network.run()
        return answer
    }

    /// Starts creating room `roomID` at coordinator `id` and delivers what can be delivered now.
    func beginCreate(_ roomID: String, named name: String, at id: String, in cluster: CoordinatorHarness) throws -> PendingAnswer {
        let answer = PendingAnswer()
        try cluster.node(id).begin(.roomCreate, RoomCreateRoomRequest.with {
            $0.roomID = roomID
            $0.name = name
            $0.ownerUid = 1
        }) { answer.result = $0 }
        cluster.network.run()
        return answer
    }
}
