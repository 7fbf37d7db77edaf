import Routing
import ShowroomWire
import ShowroomTesting
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

    func testAPreferredEdgeTakesAFreshChannelUnlessAvoidedAbsentOrSomeoneHostsIt() throws {
        var table = PlacementTable()
        let edges = OwnerRing(.edge, memberIDs: ["edge-a", "edge-b", "edge-c"])
        for edge in ["edge-a", "edge-b", "edge-c"] {
            let placed = try table.place(channel: "call-\(edge)", edges: edges, loads: [:], avoiding: nil,
                                         preferring: ["edge-x", edge], nowMs: t0)
            XCTAssertEqual(placed.placement.edgeID, edge)
        }
        // Placed: a later preference changes nothing.
        let again = try table.place(channel: "call-edge-a", edges: edges, loads: [:], avoiding: nil, preferring: ["edge-b"], nowMs: t0)
        XCTAssertEqual(again.placement.edgeID, "edge-a")
        XCTAssertFalse(again.changed)
        // An edge that already runs the channel wins over a preference; an avoided one is no choice.
        XCTAssertEqual(try table.place(channel: "hosted", edges: edges, loads: [:], avoiding: nil, hosting: ["edge-c"],
                                       preferring: ["edge-a"], nowMs: t0).placement.edgeID, "edge-c")
        XCTAssertNotEqual(try table.place(channel: "avoided", edges: edges, loads: [:], avoiding: "edge-b",
                                          preferring: ["edge-b"], nowMs: t0).placement.edgeID, "edge-b")
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

    func testReportedHostWinsAndCorrectsTheTable() throws {
        var table = PlacementTable()
        let alive = [(id: "edge-a", load: 0), (id: "edge-b", load: 0), (id: "edge-c", load: 0)]
        // Nobody placed it; edge-b hosts it (joined directly): placed there, whatever the hashing says.
        for index in 0..<12 {
            let placed = try table.place(channel: "direct-\(index)", alive: alive, avoiding: nil, hosting: ["edge-b"], nowMs: t0)
            XCTAssertEqual(placed.placement.edgeID, "edge-b")
            XCTAssertTrue(placed.changed)
        }
        // The table says edge-a (alive), edge-c reports it too: the placement stands. A report
        // lags behind a move (away from an edge a client could not reach) and must not undo it.
        _ = table.merge([placement("moved", on: "edge-a", at: t0 + 50)])
        let standing = try table.place(channel: "moved", alive: alive, avoiding: nil, hosting: ["edge-c"], nowMs: t0)
        XCTAssertEqual(standing.placement.edgeID, "edge-a")
        XCTAssertFalse(standing.changed)
        // The placed edge is gone: the edge that runs the channel gets it, later than the old
        // placement so replicas take it.
        let corrected = try table.place(channel: "moved", alive: [(id: "edge-b", load: 0), (id: "edge-c", load: 0)],
                                        avoiding: nil, hosting: ["edge-c"], nowMs: t0)
        XCTAssertEqual(corrected.placement.edgeID, "edge-c")
        XCTAssertTrue(corrected.changed)
        XCTAssertGreaterThan(corrected.placement.placedAtMs, t0 + 50, "replicas take the correction")
        // A client could not reach edge-c: moved away, even though edge-c still reports it.
        let away = try table.place(channel: "moved", alive: alive, avoiding: "edge-c", hosting: ["edge-c"], nowMs: t0 + 1)
        XCTAssertNotEqual(away.placement.edgeID, "edge-c")
        XCTAssertTrue(away.changed)
        // A host that is not alive does not count.
        let dead = try table.place(channel: "ghost", alive: [(id: "edge-a", load: 0)], avoiding: nil, hosting: ["edge-z"], nowMs: t0)
        XCTAssertEqual(dead.placement.edgeID, "edge-a")
    }

    func testClaimsGrantUnplacedChannelsAndNameTheEdgeOfPlacedOnes() throws {
        var table = PlacementTable()
        let alive: Set<String> = ["edge-a", "edge-b"]
        guard case .granted(let first, changed: true) = try table.claim(channel: "show", edge: "edge-a", alive: alive, hosting: [], nowMs: t0) else {
            return XCTFail("an unplaced channel is granted to the first claimer")
        }
        XCTAssertEqual(first.edgeID, "edge-a")
        XCTAssertEqual(try table.claim(channel: "show", edge: "edge-b", alive: alive, hosting: [], nowMs: t0 + 1),
                       .elsewhere(first, changed: false), "a second edge is sent to the first")
        XCTAssertEqual(try table.claim(channel: "show", edge: "edge-a", alive: alive, hosting: [], nowMs: t0 + 2),
                       .granted(first, changed: false))
        // The placed edge died: the claimer gets it.
        guard case .granted(let taken, changed: true) = try table.claim(channel: "show", edge: "edge-b", alive: ["edge-b"], hosting: [], nowMs: t0 + 3) else {
            return XCTFail("a channel on a dead edge goes to the claimer")
        }
        XCTAssertEqual(taken.edgeID, "edge-b")
        // Placed on edge-b (alive) while edge-a still reports it (its report lags a move): the
        // placement stands, edge-a's claim is redirected to edge-b.
        guard case .elsewhere(let standing, changed: false) = try table.claim(channel: "show", edge: "edge-a", alive: alive, hosting: ["edge-a"], nowMs: t0 + 4) else {
            return XCTFail("a standing placement wins over a lagging report")
        }
        XCTAssertEqual(standing.edgeID, "edge-b")
        // Unplaced, hosted (reported) by edge-a: a claim from edge-b is sent there.
        table.remove(channel: "show")
        guard case .elsewhere(let host, changed: true) = try table.claim(channel: "show", edge: "edge-b", alive: alive, hosting: ["edge-a"], nowMs: t0 + 5) else {
            return XCTFail("without a placement the reporting edge wins")
        }
        XCTAssertEqual(host.edgeID, "edge-a")
        // Hostile input: refused, nothing recorded.
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try table.claim(channel: String(repeating: "x", count: 100_000), edge: "edge-a", alive: alive, hosting: [], nowMs: t0)
        }
        assertThrows(.invalidArgument) { () throws(ShowroomError) in
            try table.claim(channel: "ok", edge: "", alive: alive, hosting: [], nowMs: t0)
        }
        XCTAssertEqual(Array(table.placements.keys), ["show"])
    }

    func testChannelNamesAreValidated() {
        var table = PlacementTable()
        let alive = [(id: "edge-a", load: 0)]
        for bad in ["", String(repeating: "n", count: 65), "tab\there", "nul\u{0}", String(repeating: "é", count: 33)] {
            assertThrows(.invalidArgument) { () throws(ShowroomError) in
                try table.place(channel: bad, alive: alive, avoiding: nil, nowMs: t0)
            }
        }
        XCTAssertNoThrow(try table.place(channel: String(repeating: "n", count: 64), alive: alive, avoiding: nil, nowMs: t0))
        XCTAssertEqual(table.placements.count, 1)
    }

    func testPlacementsNobodyReportsExpireAndTombstonesReplicateTheRemoval() throws {
        var table = PlacementTable(expiryMs: 60_000)
        let alive = [(id: "edge-a", load: 0), (id: "edge-b", load: 0)]
        _ = try table.place(channel: "used", alive: alive, avoiding: nil, nowMs: t0)
        _ = try table.place(channel: "unused", alive: alive, avoiding: nil, nowMs: t0)
        _ = try table.place(channel: "not-ours", alive: alive, avoiding: nil, nowMs: t0)
        // "used" is reported every so often; "unused" never.
        for second in stride(from: 10, through: 60, by: 10) { table.reported(channels: ["used"], nowMs: t0 + Int64(second) * 1000) }
        XCTAssertTrue(table.expire(nowMs: t0 + 60_000).isEmpty, "not before the expiry")
        let removed = table.expire(nowMs: t0 + 60_001, owned: { $0 != "not-ours" })
        XCTAssertEqual(removed.map(\.channel), ["unused"])
        XCTAssertEqual(removed.first?.edgeID, "", "a tombstone")
        XCTAssertEqual(Set(table.placements.keys), ["used", "not-ours"])
        XCTAssertEqual(table.expire(nowMs: t0 + 120_001).map(\.channel), ["not-ours", "used"], "unreported for a minute")
        XCTAssertTrue(table.placements.isEmpty)

        // A replica takes the tombstone; an older tombstone does not remove a newer placement.
        var replica = PlacementTable()
        _ = replica.merge([placement("unused", on: "edge-a", at: t0), placement("newer", on: "edge-a", at: t0 + 70_000)])
        XCTAssertEqual(replica.merge(removed).map(\.channel), ["unused"])
        var stale = removed[0]
        stale.channel = "newer"
        XCTAssertTrue(replica.merge([stale]).isEmpty)
        XCTAssertEqual(Array(replica.placements.keys), ["newer"])
        // A hostile far-past time traps nothing.
        _ = replica.merge([placement("old", on: "edge-a", at: .min)], nowMs: .min)
        XCTAssertEqual(replica.expire(nowMs: t0).map(\.channel), ["old"])
        // Tombstones are not kept: one for a channel never placed leaves nothing behind.
        var unknown = removed[0]
        unknown.channel = "never-placed"
        XCTAssertTrue(replica.merge([unknown]).isEmpty)
        XCTAssertEqual(Array(replica.placements.keys), ["newer"])
    }

    func testTheTableIsBounded() throws {
        var table = PlacementTable(maxPlacements: 3)
        let alive = [(id: "edge-a", load: 0)]
        for index in 0..<3 { _ = try table.place(channel: "c\(index)", alive: alive, avoiding: nil, nowMs: t0) }
        assertThrows(.unavailable) { () throws(ShowroomError) in
            try table.place(channel: "c3", alive: alive, avoiding: nil, nowMs: t0)
        }
        XCTAssertNoThrow(try table.place(channel: "c0", alive: alive, avoiding: nil, nowMs: t0), "placed ones still answer")
        XCTAssertEqual(table.placements.count, 3)
    }

    private func placement(_ channel: String, on edge: String, at ms: Int64) -> RoomChannelPlacement {
        var placement = RoomChannelPlacement()
        placement.channel = channel
        placement.edgeID = edge
        placement.placedAtMs = ms
        return placement
    }
}

extension PlacementTable {
    /// ``place(channel:edges:loads:avoiding:hosting:nowMs:)`` with the alive edges and their loads
    /// as one list, as these tests write them.
    fileprivate mutating func place(
        channel: String, alive: [(id: String, load: Int)], avoiding: String?, hosting: [String] = [], nowMs: Int64
    ) throws(ShowroomError) -> (placement: RoomChannelPlacement, changed: Bool) {
        try place(
            channel: channel, edges: OwnerRing(.edge, memberIDs: alive.map(\.id)),
            loads: Dictionary(alive.map { ($0.id, $0.load) }) { first, _ in first }, avoiding: avoiding,
            hosting: hosting, nowMs: nowMs)
    }
}
