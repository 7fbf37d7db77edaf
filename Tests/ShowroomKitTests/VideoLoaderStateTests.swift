@testable import ShowroomKit
import XCTest

/// The video loader's states as plain values: counted holds per tag, and the swipe window.
final class VideoLoaderStateTests: XCTestCase {
    let me: UInt32 = 9
    func room(_ n: Int) -> AnchorInfo { AnchorInfo(channel: "room-\(n)", uid: UInt32(100 + n), token: "t\(n)") }

    func testTheHighestStateAnyTagAsksForHoldsAndTheChannelIsLeftAtZero() {
        var book = AnchorBook(localUID: me)
        let show = room(1)
        XCTAssertEqual(book.set(.prejoined, for: show, tag: "feed"), [.join(show)])
        XCTAssertEqual(book.set(.joinedWithVideo, for: show, tag: "card"), [.video(channel: "room-1", uid: 101, on: true)])
        XCTAssertEqual(book.set(.joinedWithAudioVideo, for: show, tag: "feed"), [.audio(channel: "room-1", uid: 101, on: true)])
        XCTAssertEqual(book.state(of: "room-1"), .joinedWithAudioVideo)
        // Lowered by the tag that asked most: down to what the other tag holds.
        XCTAssertEqual(book.set(.prejoined, for: show, tag: "feed"), [.audio(channel: "room-1", uid: 101, on: false)])
        XCTAssertEqual(book.set(.idle, for: show, tag: "card"), [.video(channel: "room-1", uid: 101, on: false)])
        XCTAssertEqual(book.state(of: "room-1"), .prejoined)
        XCTAssertEqual(book.set(.idle, for: show, tag: "feed"), [.leave(channel: "room-1")])
        XCTAssertEqual(book.heldChannels, [])
        XCTAssertEqual(book.set(.idle, for: show, tag: "feed"), [], "idle again: nothing to do")
    }

    func testAJumpFromIdleJoinsAndSubscribesAtOnceAndOwnRoomIsSkipped() {
        var book = AnchorBook(localUID: me)
        XCTAssertEqual(book.set(.joinedWithAudioVideo, for: room(2), tag: "t"), [
            .join(room(2)), .video(channel: "room-2", uid: 102, on: true), .audio(channel: "room-2", uid: 102, on: true),
        ])
        XCTAssertEqual(book.set(.joinedWithVideo, for: AnchorInfo(channel: "mine", uid: me, token: ""), tag: "t"), [])
        XCTAssertEqual(book.set(.prejoined, for: room(3), tag: "t"), [.join(room(3))])
        XCTAssertEqual(book.clean(), [.leave(channel: "room-2"), .leave(channel: "room-3")])
        XCTAssertEqual(book.heldChannels, [])
    }

    func testTheSwipeWindowHoldsThreeRoomsAndMovesWithTheIndex() {
        let rooms = (0..<10).map(room)
        var window = SwipeWindow()
        var book = AnchorBook(localUID: me)
        func go(_ index: Int, settled: Bool = true) -> [String] {
            window.focus(on: index, of: rooms, settled: settled).flatMap { book.set($0.state, for: $0.anchor, tag: "swipe") }
                .map { "\($0)" }
        }
        _ = go(0)
        XCTAssertEqual(book.heldChannels, ["room-0", "room-1"], "the first room has no room above")
        XCTAssertEqual(book.state(of: "room-0"), .joinedWithAudioVideo)
        XCTAssertEqual(book.state(of: "room-1"), .prejoined)
        // Swiping up: the next room was prejoined, so showing it is a subscription, not a join.
        let steps = go(1, settled: false)
        XCTAssertFalse(steps.contains { $0.hasPrefix("join") && $0.contains("room-1") }, "\(steps)")
        XCTAssertEqual(book.state(of: "room-1"), .joinedWithVideo, "seen before the scroll ends, heard after")
        XCTAssertEqual(book.state(of: "room-0"), .prejoined)
        XCTAssertEqual(book.state(of: "room-2"), .prejoined)
        _ = go(1)
        XCTAssertEqual(book.state(of: "room-1"), .joinedWithAudioVideo)
        for index in 2..<10 {
            _ = go(index)
            XCTAssertLessThanOrEqual(book.heldChannels.count, 3)
        }
        XCTAssertEqual(book.heldChannels, ["room-8", "room-9"])
        // The room on screen comes first, the rooms leaving last.
        var ordered = SwipeWindow()
        _ = ordered.focus(on: 4, of: rooms, settled: true)
        let moved = ordered.focus(on: 5, of: rooms, settled: true).map { "\($0.anchor.channel) \($0.state)" }
        XCTAssertEqual(moved, ["room-5 joinedWithAudioVideo", "room-4 prejoined", "room-6 prejoined", "room-3 idle"])
        // A window of 2 on each side holds 5.
        var wide = SwipeWindow(prejoinCount: 2)
        XCTAssertEqual(wide.focus(on: 5, of: rooms, settled: true).count, 5)
    }

    func testAPreloadTakesAtMostTwentyRoomsSkipsOwnAndHeldOnesAndAsksAgainOnlyOnceStale() {
        let rooms = (0..<40).map(room)
        var list = PreloadList()
        let start = ContinuousClock.now
        // A swipe preloads the rooms around the one on screen: 20, half on each side.
        let around = PreloadList.around(20, of: rooms)
        XCTAssertEqual(around.count, 20)
        XCTAssertEqual(around.first?.channel, "room-10")
        XCTAssertEqual(PreloadList.around(0, of: rooms).map(\.channel), (0...10).map { "room-\($0)" }, "the feed's top has no rooms above")

        let mine = AnchorInfo(channel: "mine", uid: me, token: "")
        let chosen = list.choose([mine] + rooms, localUID: me, now: start) { $0 == "room-3" }
        XCTAssertEqual(chosen.count, 18, "the first 20 asked for, less the viewer's own and the one held")
        XCTAssertFalse(chosen.contains { $0.channel == "mine" || $0.channel == "room-3" })
        XCTAssertEqual(chosen.last?.channel, "room-18")
        // Asked again while fresh: nothing new; a room not preloaded yet is.
        XCTAssertEqual(list.choose(Array(rooms[15...25]), localUID: me, now: start + .seconds(5)) { _ in false }.map(\.channel),
                       (19...25).map { "room-\($0)" })
        // Once stale, asked again.
        XCTAssertEqual(list.choose([room(0)], localUID: me, now: start + .seconds(19)) { _ in false }, [])
        XCTAssertEqual(list.choose([room(0)], localUID: me, now: start + .seconds(20)) { _ in false }, [room(0)])
        XCTAssertEqual(list.preloadedAt.count, 8, "forgotten once stale: 19–25 and room-0")
    }

    func testTheEngineViewFollowsTheEvents() {
        var view = EngineView()
        let show = ChannelConnection(channel: "room-1", uid: 9)
        view.apply(.connectionStateChanged(show, state: .connecting, reason: .joining))
        view.apply(.joined(show, elapsed: .milliseconds(3)))
        view.apply(.connectionStateChanged(show, state: .connected, reason: .joinSucceeded))
        view.apply(.userJoined(show, uid: 101))
        view.apply(.remoteTrackPublished(show, uid: 101, track: .video))
        view.apply(.remoteTrackPublished(show, uid: 101, track: .audio))
        view.apply(.userJoined(ChannelConnection(channel: "elsewhere", uid: 9), uid: 5))
        XCTAssertEqual(view.connections["room-1"]?.state, .connected)
        XCTAssertEqual(view.connections["room-1"]?.remoteUsers, [101: [.video, .audio]])
        XCTAssertNil(view.connections["elsewhere"], "no connection, no users")
        view.apply(.remoteTrackUnpublished(show, uid: 101, track: .video))
        XCTAssertEqual(view.connections["room-1"]?.remoteUsers[101], [.audio])
        view.apply(.userOffline(show, uid: 101, reason: .quit))
        XCTAssertEqual(view.connections["room-1"]?.remoteUsers, [:])
        view.apply(.connectionStateChanged(show, state: .disconnected, reason: .left))
        XCTAssertEqual(view.connections, [:])
    }
}
