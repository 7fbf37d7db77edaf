import Rooms
import ShowroomWire
import XCTest

/// A coordinator's recordings with plain values: start, stop, query, files from events, the
/// rules' orders and when the edges are sent them.
final class RecordingOrdersTests: XCTestCase {
    func testStartStopGetListAndTheFilesTheEdgesFinished() throws {
        var orders = RecordingOrders()
        let started = try orders.start(channel: "show", RoomRecordingStart.with { $0.uids = [9, 7, 9] }, id: "rec-1", nowMs: 1_000)
        XCTAssertEqual(started.uids, [7, 9])
        XCTAssertEqual(started.stoppedMs, 0)
        XCTAssertThrowsError(try orders.start(channel: "show", RoomRecordingStart.with { $0.uids = [7, 9] }, id: "rec-2", nowMs: 1_001)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .recordingConflict)
        }
        _ = try orders.start(channel: "show", RoomRecordingStart(), id: "rec-3", nowMs: 2_000)
        XCTAssertEqual(orders.list(channel: "show").map(\.id), ["rec-3", "rec-1"])

        var event = RoomChannelEvent()
        event.type = .recordingFile
        event.channel = "show"
        event.edge = "edge-1"
        event.recording.recordingID = "rec-1"
        event.recording.path = "show/7/1000-0.webm"
        orders.saw(event)
        event.recording.recordingID = "rec-9"  // not held here: ignored
        orders.saw(event)
        event.channel = "elsewhere"  // another channel's event naming rec-1: ignored
        event.recording.recordingID = "rec-1"
        orders.saw(event)
        let got = try orders.get(channel: "show", id: "rec-1")
        XCTAssertEqual(got.files.map(\.path), ["show/7/1000-0.webm"])
        XCTAssertEqual(got.files.first?.edge, "edge-1")

        let stopped = try orders.stop(channel: "show", id: "rec-1", nowMs: 5_000)
        XCTAssertEqual(stopped.stoppedMs, 5_000)
        XCTAssertEqual(try orders.stop(channel: "show", id: "rec-1", nowMs: 9_000).stoppedMs, 5_000)
        // Stopped, the same publishers may be recorded again.
        XCTAssertNoThrow(try orders.start(channel: "show", RoomRecordingStart.with { $0.uids = [7, 9] }, id: "rec-4", nowMs: 6_000))
        XCTAssertThrowsError(try orders.get(channel: "talk", id: "rec-1")) { XCTAssertEqual(($0 as? ShowroomError)?.code, .recordingNotFound) }
        XCTAssertThrowsError(try orders.stop(channel: "show", id: "rec-404", nowMs: 0)) { XCTAssertEqual(($0 as? ShowroomError)?.code, .recordingNotFound) }
    }

    func testHostileStartsAreRefused() {
        var orders = RecordingOrders()
        for (channel, start) in [("bad/name", RoomRecordingStart()), ("", RoomRecordingStart()),
                                 ("show", RoomRecordingStart.with { $0.uids = Array(1...33) }),
                                 ("show", RoomRecordingStart.with { $0.uids = [0] }),
                                 ("show", RoomRecordingStart.with { $0.segmentSeconds = 59 }),
                                 ("show", RoomRecordingStart.with { $0.segmentSeconds = 86_401 })] {
            XCTAssertThrowsError(try orders.start(channel: channel, start, id: "rec-x", nowMs: 0)) {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
            }
        }
        XCTAssertTrue(orders.recordings.isEmpty)
        for n in 0..<RecordingOrders.maxRunning {
            XCTAssertNoThrow(try orders.start(channel: "c\(n)", RoomRecordingStart(), id: "rec-\(n)", nowMs: 0))
        }
        XCTAssertThrowsError(try orders.start(channel: "one-more", RoomRecordingStart(), id: "rec-more", nowMs: 0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .rateLimited)
        }
    }

    func testTheRulesOrdersAndWhenTheEdgesAreTold() throws {
        var orders = RecordingOrders()
        var room = RoomRoom()
        room.roomID = "r1"
        room.channel = "room-r1"
        room.ownerUid = 42
        room.state = .open
        var other = room
        other.roomID = "r2"
        other.channel = "room-r2"
        other.ownerUid = 43
        let rules = RecordingRules(calls: true, owners: [42])
        let wanted = orders.orders(rules: rules, rooms: [room, other])
        XCTAssertEqual(wanted.map(\.id), ["rule-calls", "rule-room-r1"])
        XCTAssertEqual(wanted.first?.channelPrefix, "call-")
        XCTAssertEqual(wanted.last?.channel, "room-r1")
        // Sent at once, then every RecordingOrders.refreshTicks ticks while the same.
        XCTAssertEqual(orders.due(wanted), wanted)
        XCTAssertNil(orders.due(wanted))
        XCTAssertEqual(orders.due(wanted), wanted)
        // None left: told at once, then twice more a refresh apart (one may be lost), then quiet.
        XCTAssertEqual(orders.due([]), [])
        XCTAssertNil(orders.due([]))
        XCTAssertEqual(orders.due([]), [])
        XCTAssertNil(orders.due([]))
        XCTAssertEqual(orders.due([]), [])
        for _ in 0..<5 { XCTAssertNil(orders.due([])) }
        // Versions only go up, by the clock or by one.
        let first = orders.nextVersion(nowMs: 5_000)
        XCTAssertEqual(first, 5_000)
        XCTAssertEqual(orders.nextVersion(nowMs: 5_000), 5_001)
        XCTAssertEqual(orders.nextVersion(nowMs: 1_000), 5_002)
        XCTAssertEqual(orders.nextVersion(nowMs: -1), 5_003)
        // A cluster that records nothing tells the edges nothing.
        var quiet = RecordingOrders()
        XCTAssertNil(quiet.due(quiet.orders(rules: RecordingRules(), rooms: [room])))
        // A closed room is not recorded.
        room.state = .closed
        XCTAssertEqual(orders.orders(rules: RecordingRules(owners: [42]), rooms: [room]), [])
    }

    func testEveryCoordinatorHoldsACopyAndTheChannelsOwnerSendsItsOrders() throws {
        // The owner starts, files and stops; each change raises the version.
        var owner = RecordingOrders()
        let started = try owner.start(channel: "show", RoomRecordingStart.with { $0.uids = [7] }, id: "rec-1", nowMs: 1_000)
        var event = RoomChannelEvent()
        event.type = .recordingFile
        event.channel = "show"
        event.recording.recordingID = "rec-1"
        event.recording.path = "show/7/1000-0.webm"
        let filed = try XCTUnwrap(owner.saw(event))
        XCTAssertGreaterThan(filed.version, started.version)
        event.recording.recordingID = "rec-9"
        XCTAssertNil(owner.saw(event), "an event of no recording held changes nothing")

        // Another coordinator takes the copies in any order; an older one never wins over a newer.
        var copy = RecordingOrders()
        XCTAssertEqual(copy.merge([filed]).map(\.id), ["rec-1"])
        XCTAssertTrue(copy.merge([started]).isEmpty, "an older copy is left out")
        XCTAssertEqual(try copy.get(channel: "show", id: "rec-1").files.count, 1)
        XCTAssertTrue(copy.merge([filed]).isEmpty, "the same copy twice changes nothing")
        let stopped = try owner.stop(channel: "show", id: "rec-1", nowMs: 5_000)
        XCTAssertEqual(copy.merge([stopped]).count, 1)
        XCTAssertEqual(try copy.get(channel: "show", id: "rec-1").stoppedMs, 5_000)
        XCTAssertTrue(copy.merge([filed]).isEmpty, "a stop is never undone by an older copy")
        var sameVersionStopped = filed
        sameVersionStopped.stoppedMs = 4_000
        var running = RecordingOrders()
        _ = running.merge([filed])
        XCTAssertEqual(running.merge([sameVersionStopped]).count, 1, "at one version a stopped copy wins over a running one")

        // Only the channel's owner sends the edges the orders of a running recording.
        var other = RecordingOrders()
        _ = other.merge([started])
        XCTAssertEqual(other.orders(rules: RecordingRules(), rooms: [RoomRoom]()) { $0 == "show" }.map(\.id), ["rec-1"])
        XCTAssertTrue(other.orders(rules: RecordingRules(), rooms: [RoomRoom]()) { _ in false }.isEmpty)
        XCTAssertEqual(other.held.map(\.id), ["rec-1"])
    }

    func testMalformedCopiesAreLeftOut() {
        var orders = RecordingOrders()
        let bad = [
            RoomRecording.with { $0.id = ""; $0.channel = "show"; $0.version = 1 },
            RoomRecording.with { $0.id = String(repeating: "r", count: 65); $0.channel = "show"; $0.version = 1 },
            RoomRecording.with { $0.id = "rec-1"; $0.channel = "bad/name"; $0.version = 1 },
            RoomRecording.with { $0.id = "rec-2"; $0.channel = "show"; $0.uids = Array(1...33); $0.version = 1 },
        ]
        XCTAssertTrue(orders.merge(bad).isEmpty)
        XCTAssertTrue(orders.held.isEmpty)
        // A copy may not move a recording to another channel.
        _ = orders.merge([RoomRecording.with { $0.id = "rec-3"; $0.channel = "show"; $0.version = 1 }])
        XCTAssertTrue(orders.merge([RoomRecording.with { $0.id = "rec-3"; $0.channel = "other"; $0.version = 9 }]).isEmpty)
        XCTAssertEqual(orders.held.map(\.channel), ["show"])
        // A copy's files are cut to the latest maxFiles.
        let many = RoomRecording.with {
            $0.id = "rec-4"
            $0.channel = "show"
            $0.version = 1
            $0.files = (0..<(RecordingOrders.maxFiles + 5)).map { n in RoomRecordingFile.with { $0.path = "show/1/\(n).webm" } }
        }
        _ = orders.merge([many])
        let kept = orders.held.first { $0.id == "rec-4" }?.files ?? []
        XCTAssertEqual(kept.count, RecordingOrders.maxFiles)
        XCTAssertEqual(kept.last?.path, "show/1/\(RecordingOrders.maxFiles + 4).webm")
    }

    func testAReportsRecordedFilesAreChecked() {
        var good = RoomChannelActivity()
        good.type = .recordingFile
        good.channel = "show"
        good.uid = 7
        good.recording.path = "show/7/1-0.webm"
        good.recording.codecs = ["vp8", "opus"]
        var join = RoomChannelActivity()
        join.type = .broadcasterJoined
        XCTAssertNoThrow(try RecordingOrders.check([join, good]))
        var hostile: [RoomChannelActivity] = []
        var bad = good
        bad.recording.path = "../../etc/passwd"
        hostile.append(bad)
        bad = good
        bad.recording.path = "/etc/passwd"
        hostile.append(bad)
        bad = good
        bad.recording.codecs = ["h264"]
        hostile.append(bad)
        bad = good
        bad.recording.failure = String(repeating: "x", count: 1025)
        hostile.append(bad)
        bad = good
        bad.clearRecording()
        hostile.append(bad)
        bad = join
        bad.recording.path = "show/7/1-0.webm"
        hostile.append(bad)
        for activity in hostile {
            XCTAssertThrowsError(try RecordingOrders.check([join, activity])) { XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument) }
        }
    }
}
