import Rooms
import ShowroomWire
import XCTest

final class ChannelEventSequencerTests: XCTestCase {
    func testNumbersPerChannelFromOne() throws {
        var sequencer = ChannelEventSequencer()
        var activity = RoomChannelActivity()
        activity.type = .audienceLeft
        activity.channel = "show"
        activity.uid = 42
        activity.reason = .dropped
        activity.atMs = 1000

        let first = try XCTUnwrap(sequencer.number(activity, edge: "edge-a", nowMs: 1005))
        XCTAssertEqual(first.sequence, 1)
        XCTAssertEqual(first.series, 1005, "a series is dated by its first event")
        XCTAssertEqual(first.noticeID, "show/1005-1")
        XCTAssertEqual(first.type, .audienceLeft)
        XCTAssertEqual(first.channel, "show")
        XCTAssertEqual(first.uid, 42)
        XCTAssertEqual(first.reason, .dropped)
        XCTAssertEqual(first.atMs, 1000)
        XCTAssertEqual(first.edge, "edge-a")
        XCTAssertEqual(first.notifiedAtMs, 1005)

        XCTAssertEqual(sequencer.number(activity, edge: "edge-a", nowMs: 1006)?.noticeID, "show/1005-2")
        activity.channel = "other"
        XCTAssertEqual(sequencer.number(activity, edge: "edge-b", nowMs: 1007)?.sequence, 1, "each channel counts on its own")
        XCTAssertEqual(sequencer.lastSequence, ["show": 2, "other": 1])
        XCTAssertEqual(sequencer.sequences.map(\.channel), ["other", "show"])
        XCTAssertEqual(sequencer.sequence(of: "show").lastSequence, 2)
    }

    func testACoordinatorTakingOverBeginsANewSeriesAndStillNumbersAnActivityOnce() throws {
        var sequencer = ChannelEventSequencer()
        var activity = RoomChannelActivity()
        activity.channel = "show"
        activity.origin = "edge-a#1"
        activity.originSequence = 1
        _ = sequencer.number(activity, edge: "edge-a", nowMs: 1_000)
        activity.originSequence = 2
        let taken = try XCTUnwrap(sequencer.number(activity, edge: "edge-a", nowMs: 500, newSeriesAtMs: 500))
        XCTAssertEqual(taken.series, 1_001, "a later series even on a clock behind the old one's")
        XCTAssertEqual(taken.sequence, 1)
        XCTAssertNil(sequencer.number(activity, edge: "edge-a", nowMs: 1_002, newSeriesAtMs: 1_002),
                     "an activity numbered already is not numbered again in the new series")
        var fresh = ChannelEventSequencer()
        XCTAssertEqual(fresh.number(activity, edge: "edge-a", nowMs: 7, newSeriesAtMs: 7)?.series, 7,
                       "a channel with nothing numbered needs no new series")
    }

    func testMergeKeepsTheHigherNumber() {
        var sequencer = ChannelEventSequencer()
        var activity = RoomChannelActivity()
        activity.channel = "show"
        for _ in 0..<5 { _ = sequencer.number(activity, edge: "e", nowMs: 0) }

        let series = sequencer.sequence(of: "show").series
        let taken = sequencer.merge([sequence("show", 3, series: series), sequence("new", 7), sequence("late", 9)], nowMs: 0)
        XCTAssertEqual(taken.map(\.channel), ["late", "new"], "a lower number never goes back")
        XCTAssertEqual(sequencer.lastSequence["show"], 5)
        XCTAssertEqual(sequencer.merge([sequence("show", 8, series: series)], nowMs: 0).map(\.lastSequence), [8])
        activity.channel = "show"
        XCTAssertEqual(sequencer.number(activity, edge: "e", nowMs: 0)?.sequence, 9, "numbering goes on after the merged number")
        activity.channel = "new"
        XCTAssertEqual(sequencer.number(activity, edge: "e", nowMs: 0)?.noticeID, "new-8",
                       "a series begun before series were dated keeps its ids")
    }

    /// An edge sends again what was not answered: each (origin, origin sequence) is numbered once,
    /// a restarted edge (a new origin) starts over, and activities without an origin are never
    /// taken for repeats.
    func testAnActivitySentAgainIsNumberedOnce() {
        var sequencer = ChannelEventSequencer()
        let first = activity("show", origin: "edge-a/1", 1)
        let second = activity("show", origin: "edge-a/1", 2)
        XCTAssertEqual(sequencer.number(first, edge: "edge-a", nowMs: 0)?.sequence, 1)
        XCTAssertEqual(sequencer.number(second, edge: "edge-a", nowMs: 0)?.sequence, 2)
        XCTAssertNil(sequencer.number(first, edge: "edge-a", nowMs: 0), "the first, sent again")
        XCTAssertNil(sequencer.number(second, edge: "edge-a", nowMs: 0), "the second, sent again")
        XCTAssertEqual(sequencer.number(activity("show", origin: "edge-a/1", 5), edge: "edge-a", nowMs: 0)?.sequence, 3,
                       "numbers of one run may skip (they count across channels)")
        XCTAssertEqual(sequencer.number(activity("show", origin: "edge-a/2", 7), edge: "edge-a", nowMs: 0)?.sequence, 4,
                       "the edge restarted: a new run")
        XCTAssertEqual(sequencer.number(activity("other", origin: "edge-a/1", 2), edge: "edge-a", nowMs: 0)?.sequence, 1,
                       "marks are per channel")
        var unmarked = activity("show", origin: "", 0)
        unmarked.type = .audienceLeft
        XCTAssertEqual(sequencer.number(unmarked, edge: "old-edge", nowMs: 0)?.sequence, 5)
        XCTAssertEqual(sequencer.number(unmarked, edge: "old-edge", nowMs: 0)?.sequence, 6)
        XCTAssertEqual(sequencer.sequence(of: "show").origins.map(\.origin), ["edge-a/1", "edge-a/2"])
        XCTAssertEqual(sequencer.sequence(of: "show").origins.map(\.originSequence), [5, 7])
    }

    /// A user moving to another edge joins there before the old edge's leave arrives, or an old
    /// join held through a partition arrives after a new one: the channel's events say it joined
    /// with its first connection and left with its last, and what is no news is not numbered
    /// (nor taken when sent again).
    func testAUserOnTwoEdgesJoinsWithItsFirstConnectionAndLeavesWithItsLast() {
        var sequencer = ChannelEventSequencer()
        func event(_ type: RoomChannelEventType, uid: UInt32, on edge: String, _ number: UInt64) -> RoomChannelEvent? {
            var activity = activity("show", origin: "\(edge)/1", number)
            activity.type = type
            activity.uid = uid
            return sequencer.number(activity, edge: edge, nowMs: 0)
        }
        XCTAssertEqual(event(.audienceJoined, uid: 7, on: "edge-a", 1)?.sequence, 1)
        XCTAssertEqual(event(.broadcasterJoined, uid: 8, on: "edge-a", 2)?.sequence, 2)
        XCTAssertNil(event(.audienceJoined, uid: 7, on: "edge-b", 1), "it moves to edge-b: it is in the channel already")
        XCTAssertNil(event(.audienceLeft, uid: 7, on: "edge-a", 3), "edge-a's leave is not its last connection's")
        XCTAssertNil(event(.audienceLeft, uid: 7, on: "edge-a", 3), "nor when sent again")
        XCTAssertEqual(event(.broadcasterLeft, uid: 8, on: "edge-a", 4)?.sequence, 3)
        XCTAssertEqual(event(.audienceLeft, uid: 7, on: "edge-b", 2)?.sequence, 4, "its last connection")
        XCTAssertEqual(event(.audienceLeft, uid: 9, on: "edge-c", 1)?.sequence, 5, "a user whose join this coordinator never saw")
        XCTAssertEqual(sequencer.sequence(of: "show").origins.first { $0.origin == "edge-a/1" }?.originSequence, 4)

        // Joined on edge-b, then edge-a's older join (held through a partition) arrives, then
        // edge-a's leave: still present.
        XCTAssertEqual(event(.audienceJoined, uid: 10, on: "edge-b", 3)?.sequence, 6)
        XCTAssertNil(event(.audienceJoined, uid: 10, on: "edge-a", 5))
        XCTAssertNil(event(.audienceLeft, uid: 10, on: "edge-a", 6))
        XCTAssertEqual(sequencer.presence.count(in: "show"), 1)
        // Edge-b dies: its connection goes without an event (uid 10 is still on edge-a), and the
        // leave on edge-a is then its last.
        XCTAssertNil(event(.audienceJoined, uid: 10, on: "edge-a", 7))
        XCTAssertEqual(sequencer.depart(from: "show", isGone: { edge, _ in edge == "edge-b" }, endsChannel: { _ in true }, nowMs: 0), [])
        XCTAssertEqual(event(.audienceLeft, uid: 10, on: "edge-a", 8)?.sequence, 7)
        XCTAssertEqual(sequencer.presence.count(in: "show"), 0)
    }

    /// An edge run that is gone (the edge died, or restarted) before its users' leaves got
    /// through: each user whose every connection was there leaves, once, as what it was; a user
    /// connected on a run that lives stays; the channel ends when nobody is left and no other
    /// edge hosts it.
    func testTheUsersOfAGoneRunLeaveOnce() throws {
        var sequencer = ChannelEventSequencer()
        XCTAssertNotNil(event(.broadcasterJoined, uid: 7, run: "edge-a/1", 1, in: &sequencer))
        XCTAssertNotNil(event(.audienceJoined, uid: 8, run: "edge-a/1", 2, in: &sequencer))
        XCTAssertNotNil(event(.audienceJoined, uid: 9, run: "edge-a/1", 3, in: &sequencer))
        XCTAssertNil(event(.audienceJoined, uid: 9, run: "edge-b/1", 1, in: &sequencer), "also on edge-b")
        XCTAssertNotNil(event(.audienceJoined, uid: 10, run: "edge-b/1", 2, in: &sequencer))
        // Edge-a restarted: its new run's join of uid 8 is no news, the old run's users are still in.
        XCTAssertNil(event(.audienceJoined, uid: 8, run: "edge-a/2", 1, in: &sequencer))
        XCTAssertEqual(sequencer.presence.count(in: "show"), 4)

        let runA1Gone: (String, String) -> Bool = { _, run in run == "edge-a/1" }
        XCTAssertEqual(sequencer.channelsWithDepartures(isGone: runA1Gone), ["show"])
        let left = sequencer.depart(from: "show", isGone: runA1Gone, endsChannel: { _ in true }, nowMs: 2_000)
        XCTAssertEqual(left.map(\.uid), [7], "uid 8 is on edge-a's new run, uid 9 on edge-b")
        let leave = try XCTUnwrap(left.first)
        XCTAssertEqual(leave.type, .broadcasterLeft)
        XCTAssertEqual(leave.reason, .server)
        XCTAssertEqual(leave.edge, "edge-a")
        XCTAssertEqual(leave.sequence, 5)
        XCTAssertEqual(leave.atMs, 2_000)
        XCTAssertEqual(sequencer.unpublished(of: "show").last, leave, "held until published, like any event")
        XCTAssertEqual(sequencer.depart(from: "show", isGone: runA1Gone, endsChannel: { _ in true }, nowMs: 2_001), [], "once")
        XCTAssertEqual(sequencer.channelsWithDepartures(isGone: runA1Gone), [])

        // Edge-b dies while another edge hosts the channel: its users leave, the channel goes on.
        let edgeBGone: (String, String) -> Bool = { edge, _ in edge == "edge-b" }
        XCTAssertEqual(sequencer.depart(from: "show", isGone: edgeBGone, endsChannel: { _ in false }, nowMs: 2_002).map(\.uid), [9, 10],
                       "uid 9's other connection was on edge-a's old run")
        XCTAssertEqual(sequencer.presence.count(in: "show"), 1)
        XCTAssertEqual(sequencer.sequence(of: "show").lastSequence, 7)

        // Then edge-a's new run dies too, and nothing else hosts the channel: the channel ends.
        let all = sequencer.depart(from: "show", isGone: { _, _ in true }, endsChannel: { $0 == "edge-a" }, nowMs: 2_003)
        XCTAssertEqual(all.map(\.type), [.audienceLeft, .channelDestroyed])
        XCTAssertEqual(all.map(\.uid), [8, 0])
        XCTAssertTrue(sequencer.sequence(of: "show").ended)
    }

    /// Who is where travels with the record: a successor that takes the channel over numbers
    /// the leaves of a run that died under the old owner, and a move the old owner saw (no
    /// event: a join on a second edge) keeps its user in.
    func testPresenceTravelsWithTheRecordToTheNextOwner() throws {
        var owner = ChannelEventSequencer()
        XCTAssertNotNil(event(.audienceJoined, uid: 7, run: "edge-a/1", 1, in: &owner))
        XCTAssertNotNil(event(.audienceJoined, uid: 8, run: "edge-a/1", 2, in: &owner))
        var successor = ChannelEventSequencer()
        _ = successor.merge(owner.sequences, nowMs: 1_000)
        // Uid 8 moves to edge-b: no event, yet the record changed, and the successor takes it.
        XCTAssertNil(event(.audienceJoined, uid: 8, run: "edge-b/1", 1, in: &owner))
        XCTAssertEqual(successor.merge(owner.sequences, nowMs: 1_001).map(\.channel), ["show"])
        XCTAssertEqual(successor.sequence(of: "show").present.map(\.uid), [7, 8, 8])
        XCTAssertEqual(successor.merge([owner.sequence(of: "show")], nowMs: 1_002), [], "the same record again changes nothing")

        // The owner dies; edge-a dies: the successor, owner now, numbers uid 7's leave in its series.
        let left = successor.depart(from: "show", isGone: { edge, _ in edge == "edge-a" }, endsChannel: { _ in true },
                                    nowMs: 3_000, newSeriesAtMs: 3_000)
        XCTAssertEqual(left.map(\.uid), [7])
        XCTAssertEqual(left.first?.series, 3_000)
        XCTAssertEqual(left.first?.sequence, 1)
        XCTAssertEqual(successor.sequence(of: "show").present.map(\.run), ["edge-b/1"])

        // An older record (the dead owner's last one, handed over late) does not bring them back.
        XCTAssertEqual(successor.merge(owner.sequences, nowMs: 3_001), [])
        XCTAssertEqual(successor.presence.count(in: "show"), 1)

        // A store reload brings presence back too.
        var reloaded = ChannelEventSequencer()
        _ = reloaded.merge(successor.sequences, nowMs: 3_002)
        XCTAssertEqual(reloaded.sequence(of: "show").present, successor.sequence(of: "show").present)
    }

    /// An edge the channel moved away from reports its end late (the coordinator forgot the
    /// placement while the edges were cut off, so the directory cannot tell): users connected on
    /// the other edge keep the channel going, and its end there is news.
    func testAChannelsEndOnAnEdgeItMovedAwayFromIsNoNews() {
        var sequencer = ChannelEventSequencer()
        XCTAssertNotNil(event(.channelCreated, uid: 0, run: "edge-a/1", 1, in: &sequencer))
        XCTAssertNotNil(event(.broadcasterJoined, uid: 42, run: "edge-a/1", 2, in: &sequencer))
        XCTAssertNotNil(event(.audienceJoined, uid: 7, run: "edge-b/1", 1, in: &sequencer))
        XCTAssertNotNil(event(.broadcasterLeft, uid: 42, run: "edge-a/1", 3, in: &sequencer))
        XCTAssertNotNil(event(.broadcasterJoined, uid: 42, run: "edge-b/1", 2, in: &sequencer))
        XCTAssertNil(event(.channelDestroyed, uid: 0, run: "edge-a/1", 4, in: &sequencer), "the channel goes on on edge-b")
        XCTAssertEqual(sequencer.presence.count(in: "show"), 2)
        XCTAssertNotNil(event(.audienceLeft, uid: 7, run: "edge-b/1", 3, in: &sequencer))
        XCTAssertNotNil(event(.broadcasterLeft, uid: 42, run: "edge-b/1", 4, in: &sequencer))
        XCTAssertEqual(event(.channelDestroyed, uid: 0, run: "edge-b/1", 5, in: &sequencer)?.type, .channelDestroyed)
    }

    /// A peer's record may carry anything: its presence is bounded, each connection once, none
    /// without an edge and a run.
    func testAPeersPresenceIsBoundedAndWellFormed() {
        var peer = sequence("show", 1, series: 500, at: 1_000)
        let entry = { (uid: UInt32, edge: String, run: String) in
            RoomChannelPresentUser.with {
                $0.uid = uid
                $0.edge = edge
                $0.run = run
            }
        }
        peer.present = [entry(1, "edge-a", "edge-a/1"), entry(1, "edge-a", "edge-a/1"), entry(2, "", "edge-a/1"), entry(3, "edge-a", "")]
            + (10..<UInt32(10 + ChannelPresence.connectionsKept + 50)).map { entry($0, "edge-b", "edge-b/1") }
        var sequencer = ChannelEventSequencer()
        _ = sequencer.merge([peer], nowMs: 1_000)
        let held = sequencer.sequence(of: "show").present
        XCTAssertEqual(held.count, ChannelPresence.connectionsKept)
        XCTAssertEqual(held.filter { $0.uid == 1 }.count, 1)
        XCTAssertTrue(held.allSatisfy { !$0.edge.isEmpty && !$0.run.isEmpty })
    }

    /// The marks travel with the numbers: a coordinator that merged another's state (a successor,
    /// or one reloading its store) skips what the other numbered; a merge that only brings marks
    /// still reports the channel as changed, so it is persisted.
    func testMarksTravelWithTheNumbers() {
        var owner = ChannelEventSequencer()
        _ = owner.number(activity("show", origin: "edge-a/1", 7), edge: "edge-a", nowMs: 0)
        var successor = ChannelEventSequencer()
        XCTAssertEqual(successor.merge(owner.sequences, nowMs: 0).map(\.channel), ["show"])
        XCTAssertNil(successor.number(activity("show", origin: "edge-a/1", 7), edge: "edge-a", nowMs: 0))
        XCTAssertEqual(successor.number(activity("show", origin: "edge-a/1", 8), edge: "edge-a", nowMs: 0)?.sequence, 2)

        var marksOnly = RoomChannelSequence()
        marksOnly.channel = "show"
        marksOnly.lastSequence = 1
        marksOnly.series = owner.sequence(of: "show").series
        var mark = RoomActivityOriginMark()
        mark.origin = "edge-b/1"
        mark.originSequence = 3
        marksOnly.origins = [mark]
        XCTAssertEqual(successor.merge([marksOnly], nowMs: 0).map(\.lastSequence), [2], "changed: a new mark; the higher number kept")
        XCTAssertEqual(successor.merge([marksOnly], nowMs: 0), [], "nothing new the second time")
        XCTAssertNil(successor.number(activity("show", origin: "edge-b/1", 3), edge: "edge-b", nowMs: 0))
    }

    /// Only the most recent runs are remembered per channel.
    func testOnlyTheMostRecentRunsAreRemembered() {
        var sequencer = ChannelEventSequencer()
        for run in 0...ChannelEventSequencer.originsKept {
            _ = sequencer.number(activity("show", origin: "edge/\(run)", 1), edge: "edge", nowMs: 0)
        }
        let origins = sequencer.sequence(of: "show").origins.map(\.origin)
        XCTAssertEqual(origins.count, ChannelEventSequencer.originsKept)
        XCTAssertFalse(origins.contains("edge/0"), "the oldest run is forgotten")
        XCTAssertNil(sequencer.number(activity("show", origin: "edge/1", 1), edge: "edge", nowMs: 0))
    }

    // MARK: - Pruning

    private let hour: Int64 = 3_600_000
    private let notHosted: (String) -> Bool = { _ in false }

    /// A channel destroyed is forgotten once the retention passed (not a moment before), and
    /// numbered again from 1 in a new series whose notice ids differ from the old ones.
    func testAChannelGoneIsPrunedAndComesBackInANewSeries() throws {
        var sequencer = ChannelEventSequencer()
        let start: Int64 = 1_767_000_000_000
        var old: [String] = []
        for (offset, type) in [RoomChannelEventType.channelCreated, .broadcasterJoined, .broadcasterLeft, .channelDestroyed].enumerated() {
            old.append(try XCTUnwrap(sequencer.number(typed("room-1", type, origin: "edge-a/1", UInt64(offset + 1)),
                                                      edge: "edge-a", nowMs: start + Int64(offset))).noticeID)
        }
        let destroyedAt = start + 3
        XCTAssertEqual(sequencer.prune(nowMs: destroyedAt + hour - 1, hosted: notHosted), [], "within the retention")
        XCTAssertEqual(sequencer.prune(nowMs: destroyedAt + hour, hosted: notHosted), ["room-1"])
        XCTAssertEqual(sequencer.count, 0, "back to nothing held")

        let back = start + 2 * hour
        let again = try XCTUnwrap(sequencer.number(typed("room-1", .channelCreated, origin: "edge-b/1", 1), edge: "edge-b", nowMs: back))
        XCTAssertEqual(again.sequence, 1)
        XCTAssertEqual(again.series, back)
        XCTAssertEqual(again.noticeID, "room-1/\(back)-1")
        XCTAssertFalse(old.contains(again.noticeID))
        XCTAssertEqual(sequencer.number(typed("room-1", .audienceJoined, origin: "edge-b/1", 2), edge: "edge-b", nowMs: back + 1)?.sequence, 2)
    }

    /// A channel some edge hosts (or a placement names) is kept whatever its last event; one whose
    /// edge died without reporting it destroyed goes after the longer retention; one that came back
    /// before the retention passed goes on in its series.
    func testOnlyChannelsGoneArePruned() {
        var sequencer = ChannelEventSequencer()
        _ = sequencer.number(typed("live", .broadcasterJoined, origin: "e/1", 1), edge: "e", nowMs: 1_000)
        _ = sequencer.number(typed("crashed", .audienceJoined, origin: "e/1", 2), edge: "e", nowMs: 1_000)
        _ = sequencer.number(typed("hosted-again", .channelDestroyed, origin: "e/1", 3), edge: "e", nowMs: 1_000)
        _ = sequencer.number(typed("back", .channelDestroyed, origin: "e/1", 4), edge: "e", nowMs: 1_000)
        _ = sequencer.number(typed("back", .channelCreated, origin: "e/1", 5), edge: "e", nowMs: 1_000 + hour / 2)
        let hosted: (String) -> Bool = { ["live", "hosted-again"].contains($0) }

        XCTAssertEqual(sequencer.prune(nowMs: 1_000 + 2 * hour, hosted: hosted), [], "nothing ended and idle past the retention")
        XCTAssertEqual(sequencer.prune(nowMs: 1_000 + hour / 2 + 24 * hour, hosted: hosted), ["back", "crashed"],
                       "no event for the longer retention and no edge hosts it")
        XCTAssertEqual(sequencer.sequences.map(\.channel), ["hosted-again", "live"])
        XCTAssertEqual(sequencer.prune(nowMs: 1_000 + 100 * hour, hosted: { $0 == "live" }), ["hosted-again"])
        XCTAssertEqual(sequencer.prune(nowMs: .max, hosted: { $0 == "live" }), [], "a hosted channel stays")
    }

    /// Holders prune on their own: a replica handing over a record the retention would prune does
    /// not bring the channel back; a record that ended recently is taken (and pruned in its turn).
    func testAMergeDoesNotBringAPrunedChannelBack() {
        var owner = ChannelEventSequencer()
        let stale = sequence("call-1001-ab", 4, series: 500, at: 1_000, ended: true)
        XCTAssertEqual(owner.merge([stale], nowMs: 1_000 + hour), [], "ended a retention ago: not taken")
        XCTAssertEqual(owner.count, 0)
        XCTAssertEqual(owner.merge([stale], nowMs: 1_000 + hour - 1).map(\.channel), ["call-1001-ab"], "ended just now: taken")
        XCTAssertEqual(owner.prune(nowMs: 1_000 + hour, hosted: notHosted), ["call-1001-ab"])

        var undated = sequence("old-room", 9)
        undated.lastNumberedAtMs = 0
        XCTAssertEqual(owner.merge([undated], nowMs: 5_000).map(\.lastNumberedAtMs), [5_000],
                       "a record not saying when it was numbered counts from now")
        XCTAssertEqual(owner.prune(nowMs: 5_000 + 24 * hour - 1, hosted: notHosted), [])
        XCTAssertEqual(owner.prune(nowMs: 5_000 + 24 * hour, hosted: notHosted), ["old-room"])
    }

    /// A later series wins over an earlier one whatever their numbers, in both directions of a
    /// merge; a merge never goes back to an earlier series nor a lower number.
    func testALaterSeriesWinsAndAMergeNeverRegresses() throws {
        var owner = ChannelEventSequencer()
        _ = owner.number(typed("show", .channelCreated, origin: "e/2", 1), edge: "e", nowMs: 9_000)
        XCTAssertEqual(owner.sequence(of: "show").series, 9_000)
        XCTAssertEqual(owner.merge([sequence("show", 57, series: 100, at: 8_000)], nowMs: 9_001), [], "an earlier series is over")
        XCTAssertEqual(owner.sequence(of: "show").lastSequence, 1)

        var successor = ChannelEventSequencer()
        _ = successor.merge([sequence("show", 57, series: 100, at: 8_000)], nowMs: 9_001)
        let taken = successor.merge(owner.sequences, nowMs: 9_002)
        XCTAssertEqual(taken.map(\.series), [9_000])
        XCTAssertEqual(taken.map(\.lastSequence), [1], "the later series, from its own number")
        XCTAssertEqual(taken.first?.origins.map(\.origin), ["e/2"], "the earlier series' marks are dropped with it")
        let next = try XCTUnwrap(successor.number(typed("show", .audienceJoined, origin: "e/2", 2), edge: "e", nowMs: 9_003))
        XCTAssertEqual(next.noticeID, "show/9000-2")
    }

    /// Many 1v1 calls come and go: once each call's channel ended and the retention passed, the
    /// sequencer holds nothing again; a name seen again then starts a new series.
    func testCallChannelsLeaveNothingBehind() {
        var sequencer = ChannelEventSequencer()
        for call in 0..<1_000 {
            let channel = "call-1001-\(String(call, radix: 16))"
            let at = Int64(call) * 10
            _ = sequencer.number(typed(channel, .channelCreated, origin: "e/1", UInt64(2 * call + 1)), edge: "e", nowMs: at)
            _ = sequencer.number(typed(channel, .channelDestroyed, origin: "e/1", UInt64(2 * call + 2)), edge: "e", nowMs: at + 5)
        }
        XCTAssertEqual(sequencer.count, 1_000)
        XCTAssertEqual(sequencer.prune(nowMs: 5_000 + hour, hosted: notHosted).count, 500, "those ended a retention ago")
        XCTAssertEqual(sequencer.prune(nowMs: 10_000 + hour, hosted: notHosted).count, 500)
        XCTAssertEqual(sequencer.count, 0)
    }

    private func typed(_ channel: String, _ type: RoomChannelEventType, origin: String, _ number: UInt64) -> RoomChannelActivity {
        var made = activity(channel, origin: origin, number)
        made.type = type
        return made
    }

    /// An owner numbers an activity, its record (mark and all) reaches the successor, and it
    /// dies before publishing: the edge's resend is skipped as numbered at the successor, which
    /// still holds the event to publish.
    func testAnEventNumberedAndNotPublishedTravelsWithItsRecord() throws {
        var owner = ChannelEventSequencer()
        let joined = try XCTUnwrap(owner.number(activity("show", origin: "edge-a#1", 1), edge: "edge-a", nowMs: 1_000))
        XCTAssertEqual(owner.unpublished(of: "show"), [joined])
        XCTAssertEqual(owner.channelsWithUnpublished, ["show"])

        var successor = ChannelEventSequencer()
        _ = successor.merge(owner.sequences, nowMs: 1_001)
        XCTAssertNil(successor.number(activity("show", origin: "edge-a#1", 1), edge: "edge-a", nowMs: 1_002, newSeriesAtMs: 1_002),
                     "the resend is numbered already")
        XCTAssertEqual(successor.unpublished(of: "show"), [joined], "and its event is still to go out")
        XCTAssertEqual(successor.channelsWithUnpublished, ["show"])

        // The next event, in the successor's own series, keeps the old one until it is out.
        let next = try XCTUnwrap(successor.number(activity("show", origin: "edge-a#1", 2), edge: "edge-a", nowMs: 1_003, newSeriesAtMs: 1_003))
        XCTAssertGreaterThan(next.series, joined.series)
        XCTAssertEqual(successor.unpublished(of: "show"), [joined, next])
        successor.published([joined, next])
        XCTAssertEqual(successor.unpublished(of: "show"), [])
        XCTAssertEqual(successor.channelsWithUnpublished, [])
        XCTAssertEqual(successor.sequence(of: "show").unpublished, [], "what is persisted and replicated next holds them no more")
    }

    func testTheUnpublishedEventsFollowTheRecordThatWins() throws {
        var owner = ChannelEventSequencer()
        let first = try XCTUnwrap(owner.number(activity("show", origin: "edge-a#1", 1), edge: "edge-a", nowMs: 1_000))
        var holder = ChannelEventSequencer()
        _ = holder.merge(owner.sequences, nowMs: 1_000)

        // The owner published the first and numbered a second: its later record replaces the list.
        owner.published([first])
        let second = try XCTUnwrap(owner.number(activity("show", origin: "edge-a#1", 2), edge: "edge-a", nowMs: 1_001))
        XCTAssertEqual(holder.merge(owner.sequences, nowMs: 1_001).map(\.unpublished), [[second]])
        XCTAssertEqual(holder.unpublished(of: "show"), [second])

        // A record as new as the one held (a hand-over of the same write) changes nothing, nor
        // does an older one: the holder may know of events published since.
        holder.published([second])
        XCTAssertEqual(holder.merge(owner.sequences, nowMs: 1_002), [])
        var stale = owner.sequence(of: "show")
        stale.lastSequence = 1
        stale.unpublished = [first]
        XCTAssertEqual(holder.merge([stale], nowMs: 1_002), [])
        XCTAssertEqual(holder.unpublished(of: "show"), [])
        XCTAssertEqual(holder.channelsWithUnpublished, [])
    }

    func testAPeersUnpublishedEventsAreBoundedAndOfTheirChannelOnly() throws {
        var peer = RoomChannelSequence()
        peer.channel = "show"
        peer.series = 500
        peer.lastSequence = UInt64(ChannelEventSequencer.unpublishedKept + 10)
        peer.unpublished = (1...peer.lastSequence + 1).map { number in
            RoomChannelEvent.with {
                $0.channel = number == peer.lastSequence ? "other" : "show"
                $0.series = 500
                $0.sequence = number
            }
        }
        var sequencer = ChannelEventSequencer()
        _ = sequencer.merge([peer], nowMs: 1_000)
        let held = sequencer.unpublished(of: "show")
        XCTAssertLessThanOrEqual(held.count, ChannelEventSequencer.unpublishedKept)
        XCTAssertTrue(held.allSatisfy { $0.channel == "show" })
        XCTAssertEqual(held.last?.sequence, peer.lastSequence - 1, "the latest are kept, none beyond the record's last number")

        // Numbering keeps the bound too.
        var busy = ChannelEventSequencer()
        for number in 1...UInt64(ChannelEventSequencer.unpublishedKept + 5) {
            _ = busy.number(activity("show", origin: "edge-a#1", number), edge: "edge-a", nowMs: 1_000)
        }
        XCTAssertEqual(busy.unpublished(of: "show").count, ChannelEventSequencer.unpublishedKept)
        XCTAssertEqual(busy.unpublished(of: "show").first?.sequence, 6)
    }

    /// Numbers `type` of `uid` in channel "show", seen by edge run `run` ("<edge>/<n>") as its
    /// `number`th activity.
    private func event(_ type: RoomChannelEventType, uid: UInt32, run: String, _ number: UInt64,
                       in sequencer: inout ChannelEventSequencer) -> RoomChannelEvent? {
        var activity = activity("show", origin: run, number)
        activity.type = type
        activity.uid = uid
        return sequencer.number(activity, edge: String(run.prefix { $0 != "/" }), nowMs: 1_000)
    }

    private func activity(_ channel: String, origin: String, _ number: UInt64) -> RoomChannelActivity {
        var activity = RoomChannelActivity()
        activity.type = .audienceJoined
        activity.channel = channel
        activity.uid = 100 + UInt32(number)  // a user of its own: each join is news
        activity.origin = origin
        activity.originSequence = number
        return activity
    }

    private func sequence(_ channel: String, _ last: UInt64, series: Int64 = 0, at: Int64 = 0, ended: Bool = false) -> RoomChannelSequence {
        var sequence = RoomChannelSequence()
        sequence.channel = channel
        sequence.lastSequence = last
        sequence.series = series
        sequence.lastNumberedAtMs = at
        sequence.ended = ended
        return sequence
    }
}

final class ChannelEventOutboxTests: XCTestCase {
    private func event(_ channel: String, _ sequence: UInt64, series: Int64 = 7) -> RoomChannelEvent {
        RoomChannelEvent.with {
            $0.channel = channel
            $0.sequence = sequence
            $0.series = series
        }
    }

    func testEventsGoOutInNumberOrderOnlyOnceEveryEarlierOneIsSettled() {
        var outbox = ChannelEventOutbox()
        for number in 1...3 { outbox.numbered(event("a", UInt64(number))) }
        outbox.numbered(event("b", 1))
        XCTAssertEqual(outbox.settled([event("a", 2), event("a", 3)]), [], "number 1 is not settled yet")
        XCTAssertEqual(outbox.settled([event("b", 1)]).map(\.sequence), [1], "another channel goes on")
        XCTAssertEqual(outbox.settled([event("a", 1)]).map(\.sequence), [1, 2, 3])
        XCTAssertEqual(outbox.count, 0)
        XCTAssertEqual(outbox.settled([event("a", 9)]), [], "an event never numbered here goes nowhere")
    }

    func testEventsNumberedElsewhereGoOutAtOnceInNumberOrder() {
        var outbox = ChannelEventOutbox()
        // This coordinator's own event of its new series waits for its replication.
        outbox.numbered(event("a", 1, series: 9))
        // The old series' events another owner numbered go out before it, at once, in order.
        XCTAssertEqual(outbox.republish([event("a", 6), event("a", 5)]).map(\.sequence), [5, 6])
        // An event still waiting here is not doubled, and holds back what comes after it.
        outbox.numbered(event("b", 1))
        XCTAssertEqual(outbox.republish([event("b", 1), event("b", 2)]), [])
        XCTAssertEqual(outbox.count, 3)
        XCTAssertEqual(outbox.settled([event("b", 1)]).map(\.sequence), [1, 2])
        XCTAssertEqual(outbox.settled([event("a", 1, series: 9)]).map(\.series), [9])
        XCTAssertEqual(outbox.count, 0)
    }
}
