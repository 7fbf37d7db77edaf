import Rooms
import ShowroomWire
import XCTest

final class PlacementTableTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000

    func testPlacesByLoadAwareRendezvousAndStaysPut() throws {
        var table = PlacementTable()
        let alive = [(id: "edge-a", load: 0), (id: "edge-b", load: 0), (id: "edge-c", load: 0)]
        let first = try table.place(channel: "show", alive: alive, avoiding: nil, nowMs: t0)
        XCTAssertTrue(first.changed)
        XCTAssertEqual(first.placement.channel, "show")
        XCTAssertEqual(first.placement.edgeID, RendezvousHashing.owner(key: "show", among: alive))
        XCTAssertEqual(first.placement.placedAtMs, t0)
        XCTAssertEqual(table.placements["show"], first.placement)

        // Loads change, an edge joins: the channel stays where it is while its edge lives.
        let later = alive.map { (id: $0.id, load: $0.id == first.placement.edgeID ? 50 : 0) } + [(id: "edge-d", load: 0)]
        let again = try table.place(channel: "show", alive: later, avoiding: nil, nowMs: t0 + 1000)
        XCTAssertFalse(again.changed)
        XCTAssertEqual(again.placement, first.placement)
    }

    func testHeavilyLoadedEdgeGetsFewerNewChannels() throws {
        var table = PlacementTable()
        let alive = [(id: "edge-a", load: 0), (id: "edge-b", load: 0), (id: "edge-c", load: 20)]
        for index in 0..<900 { _ = try table.place(channel: "channel-\(index)", alive: alive, avoiding: nil, nowMs: t0) }
        let counts = table.channelsPerEdge
        let a = counts["edge-a", default: 0], b = counts["edge-b", default: 0], c = counts["edge-c", default: 0]
        XCTAssertEqual(a + b + c, 900)
        XCTAssertGreaterThan(a, 300)
        XCTAssertGreaterThan(b, 300)
        XCTAssertLessThan(c, 100, "an edge with 21x the load gets about 1/21 the weight: a=\(a) b=\(b) c=\(c)")

        // With equal loads the three share alike.
        var even = PlacementTable()
        let equal = alive.map { (id: $0.id, load: 0) }
        for index in 0..<900 { _ = try even.place(channel: "channel-\(index)", alive: equal, avoiding: nil, nowMs: t0) }
        for (edge, count) in even.channelsPerEdge { XCTAssertTrue((220...380).contains(count), "\(edge): \(count)") }
    }

    func testAvoidingMovesTheChannelUnlessItIsTheOnlyEdge() throws {
        var table = PlacementTable()
        let alive = [(id: "edge-a", load: 0), (id: "edge-b", load: 0)]
        let first = try table.place(channel: "show", alive: alive, avoiding: nil, nowMs: t0)
        let other = first.placement.edgeID == "edge-a" ? "edge-b" : "edge-a"

        let moved = try table.place(channel: "show", alive: alive, avoiding: first.placement.edgeID, nowMs: t0 + 5)
        XCTAssertTrue(moved.changed)
        XCTAssertEqual(moved.placement.edgeID, other)
        XCTAssertEqual(moved.placement.placedAtMs, t0 + 5)

        let only = [(id: other, load: 3)]
        let stays = try table.place(channel: "show", alive: only, avoiding: other, nowMs: t0 + 9)
        XCTAssertFalse(stays.changed, "the only alive edge keeps the channel even when avoided")
        XCTAssertEqual(stays.placement, moved.placement)

        let fresh = try table.place(channel: "new", alive: only, avoiding: other, nowMs: t0 + 9)
        XCTAssertTrue(fresh.changed)
        XCTAssertEqual(fresh.placement.edgeID, other)
    }

    func testPlaceRefusals() {
        var table = PlacementTable()
        let error = assertThrows(.noEdgeAvailable) { () throws(ShowroomError) in
            try table.place(channel: "show", alive: [], avoiding: nil, nowMs: t0)
        }
        XCTAssertTrue(error?.message.contains("show") == true)
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try table.place(channel: "", alive: [(id: "edge-a", load: 0)], avoiding: nil, nowMs: t0)
        }
        XCTAssertTrue(table.placements.isEmpty)
    }

    func testEvictionReturnsChannelsOfDeadEdgesAndReplacesThem() throws {
        var table = PlacementTable()
        let alive = [(id: "edge-a", load: 0), (id: "edge-b", load: 0)]
        for index in 0..<20 { _ = try table.place(channel: "c\(index)", alive: alive, avoiding: nil, nowMs: t0) }
        let onB = table.placements.values.filter { $0.edgeID == "edge-b" }.map(\.channel).sorted()
        XCTAssertFalse(onB.isEmpty)

        let evicted = table.evict(keepingOnly: ["edge-a"])
        XCTAssertEqual(evicted.map(\.channel), onB)
        XCTAssertTrue(table.placements.values.allSatisfy { $0.edgeID == "edge-a" })
        XCTAssertEqual(table.placements.count, 20 - onB.count)
        XCTAssertTrue(table.evict(keepingOnly: ["edge-a"]).isEmpty)

        // A channel whose edge died is placed again on a live one, even without eviction first.
        var stale = PlacementTable()
        _ = stale.merge([placement("x", on: "edge-dead", at: t0)])
        let replaced = try stale.place(channel: "x", alive: [(id: "edge-a", load: 0)], avoiding: nil, nowMs: t0 + 1)
        XCTAssertTrue(replaced.changed)
        XCTAssertEqual(replaced.placement.edgeID, "edge-a")
    }

    func testMergeTakesTheLaterPlacement() {
        var table = PlacementTable()
        XCTAssertEqual(table.merge([placement("x", on: "edge-a", at: t0)]).map(\.edgeID), ["edge-a"])
        XCTAssertTrue(table.merge([placement("x", on: "edge-b", at: t0 - 1)]).isEmpty, "earlier loses")
        XCTAssertTrue(table.merge([placement("x", on: "edge-a", at: t0)]).isEmpty, "the same changes nothing")
        XCTAssertEqual(table.merge([placement("x", on: "edge-c", at: t0 + 1)]).map(\.edgeID), ["edge-c"])
        XCTAssertEqual(table.placements["x"]?.edgeID, "edge-c")

        table.remove(channel: "x")
        XCTAssertNil(table.placements["x"])
    }

    private func placement(_ channel: String, on edge: String, at ms: Int64) -> RoomChannelPlacement {
        var placement = RoomChannelPlacement()
        placement.channel = channel
        placement.edgeID = edge
        placement.placedAtMs = ms
        return placement
    }
}
