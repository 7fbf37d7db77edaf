import Routing
import ShowroomTesting
import ShowroomWire
import XCTest

final class ChannelDirectoryTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000
    let edges = ["edge-1", "edge-2", "edge-3"].map { ChannelDirectory.Edge(id: $0) }

    func testADrainingEdgeGetsNothingAndItsChannelMovesToItsRelay() throws {
        var directory = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 2)
        guard case .placed("edge-1", let recorded?) = try directory.place("show", edges: edges, avoiding: nil,
                                                                           preferring: ["edge-1"], nowMs: t0) else {
            return XCTFail("a fresh channel goes to the edge its first joiner prefers")
        }
        XCTAssertEqual(recorded.edgeID, "edge-1")
        directory.edgeReported("edge-1", draining: false, channels: [RoomChannelStatus.reported("show", edge: "edge-1", subscribers: 5)],
                               edgeAlive: true, nowMs: t0)
        // The origin is full: an audience member goes to a relay, which then reports relaying.
        let relay = try XCTUnwrap(directory.relay(for: "show", avoiding: nil, edges: edges, nowMs: t0))
        XCTAssertNotEqual(relay, "edge-1")
        XCTAssertEqual(try directory.claim("show", by: relay, edges: edges, nowMs: t0), .relay(origin: "edge-1"))
        directory.edgeReported(relay, draining: false, channels: [RoomChannelStatus.reported("show", edge: relay, origin: "edge-1")],
                               edgeAlive: true, nowMs: t0 + 100)
        XCTAssertEqual(directory.hosts(of: "show"), ["edge-1"], "a relay's copy is not where the channel is")

        // The origin drains: nothing is placed there, and the channel moves to its relay.
        XCTAssertTrue(directory.edgeReported("edge-1", draining: true, channels: nil, edgeAlive: true, nowMs: t0 + 200))
        XCTAssertFalse(directory.edgeReported("edge-1", draining: true, channels: nil, edgeAlive: true, nowMs: t0 + 300),
                       "a drain begins once")
        XCTAssertEqual(directory.placeable(edges).map(\.id), edges.map(\.id).filter { $0 != "edge-1" })
        XCTAssertEqual(try directory.place("show", edges: edges, avoiding: nil, nowMs: t0 + 400),
                       .placed(edge: relay, recorded: directory.placements.placements["show"]))
        XCTAssertEqual(directory.placements.placements["show"]?.edgeID, relay)
    }

    func testADrainReportFromAGoneEdgeIsNotTakenAndAGoneEdgeIsForgotten() {
        var directory = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 0)
        XCTAssertFalse(directory.edgeReported("edge-2", draining: true, channels: nil, edgeAlive: false, nowMs: t0))
        XCTAssertEqual(directory.draining, [])
        directory.edgeReported("edge-2", draining: true, channels: [RoomChannelStatus.reported("show", edge: "edge-2")], edgeAlive: true, nowMs: t0)
        XCTAssertEqual(directory.draining, ["edge-2"])
        XCTAssertTrue(directory.isInUse("show"))
        _ = directory.edgesChanged(alive: ["edge-1", "edge-3"])
        XCTAssertEqual(directory.draining, [], "a gone edge drains no more")
        XCTAssertFalse(directory.isInUse("show"), "nor hosts anything")
        XCTAssertTrue(directory.reportedChannels.isEmpty)
    }

    /// An edge run is gone for good once the edge reports from a later run or its process died;
    /// a late report of a gone run changes nothing, and an edge only cut off keeps its run.
    func testAnEdgesRunIsGoneOnceALaterRunReportsOrItsProcessDied() {
        var directory = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 0)
        XCTAssertFalse(directory.isGone(edge: "edge-1", run: "edge-1/a", nowMs: t0 + 3), "an edge never heard of")
        directory.edgeReported("edge-1", run: "edge-1/a", draining: false, channels: [], edgeAlive: true, nowMs: t0)
        XCTAssertFalse(directory.isGone(edge: "edge-1", run: "edge-1/a", nowMs: t0 + 3))
        directory.edgeReported("edge-1", run: "", draining: false, channels: [], edgeAlive: true, nowMs: t0 + 1)
        XCTAssertEqual(directory.runs["edge-1"], "edge-1/a", "a report that names no run changes nothing")
        directory.edgeReported("edge-2", run: "edge-1/evil", draining: false, channels: [], edgeAlive: true, nowMs: t0 + 1)
        directory.edgeReported("edge-1", run: "edge-1/" + String(repeating: "x", count: ChannelDirectory.maxRunBytes),
                               draining: false, channels: [], edgeAlive: true, nowMs: t0 + 1)
        XCTAssertEqual(directory.runs, ["edge-1": "edge-1/a"], "another edge's run, or a run name past the bound, is not taken")
        XCTAssertFalse(directory.isGone(edge: "edge-1", run: "edge-1/a", nowMs: t0 + 1))

        directory.edgeReported("edge-1", run: "edge-1/b", draining: false, channels: [], edgeAlive: true, nowMs: t0 + 2)
        XCTAssertTrue(directory.isGone(edge: "edge-1", run: "edge-1/a", nowMs: t0 + 3), "the edge restarted")
        XCTAssertFalse(directory.isGone(edge: "edge-1", run: "edge-1/b", nowMs: t0 + 3))
        directory.edgeReported("edge-1", run: "edge-1/a", draining: false, channels: [], edgeAlive: true, nowMs: t0 + 3)
        XCTAssertEqual(directory.runs["edge-1"], "edge-1/b", "a late report of the old run")
        XCTAssertFalse(directory.isGone(edge: "edge-1", run: "edge-1/b", nowMs: t0 + 3))

        directory.edgeReported("edge-2", run: "edge-2/a", draining: false, channels: [], edgeAlive: true, nowMs: t0)
        _ = directory.edgesChanged(alive: ["edge-1"])
        XCTAssertFalse(directory.isGone(edge: "edge-2", run: "edge-2/a", nowMs: t0 + 3), "not alive, but maybe only cut off")
        directory.edgesDied(["edge-2"])
        XCTAssertTrue(directory.isGone(edge: "edge-2", run: "edge-2/a", nowMs: t0 + 3), "its process died")
        XCTAssertNil(directory.runs["edge-2"])

        // A run known only from another coordinator's record: gone while the edge reports from
        // another run now, not judged when its last report is old.
        XCTAssertTrue(directory.isGone(edge: "edge-1", run: "edge-1/z", nowMs: t0 + 3))
        XCTAssertFalse(directory.isGone(edge: "edge-1", run: "edge-1/z", nowMs: t0 + 3 + ChannelDirectory.runHeardWithinMs))
    }

    func testAClaimGoesToTheEdgeThatHostsAndARelayWhoseOriginDiedBecomesTheOrigin() throws {
        var directory = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 1)
        XCTAssertEqual(try directory.claim("show", by: "edge-2", edges: edges, nowMs: t0),
                       .granted(recorded: directory.placements.placements["show"]))
        XCTAssertEqual(try directory.claim("show", by: "edge-3", edges: edges, nowMs: t0), .elsewhere(edge: "edge-2", recorded: nil))
        directory.edgeReported("edge-2", draining: false, channels: [RoomChannelStatus.reported("show", edge: "edge-2", subscribers: 3)],
                               edgeAlive: true, nowMs: t0)
        let relay = try XCTUnwrap(directory.relay(for: "show", avoiding: nil, edges: edges, nowMs: t0))
        XCTAssertNotEqual(relay, "edge-2")
        // The origin's process died: its link broke before the membership said so.
        let broken = edges.map { ChannelDirectory.Edge(id: $0.id, linkBroken: $0.id == "edge-2") }
        guard case .granted(let recorded?) = try directory.claim("show", by: relay, edges: broken, nowMs: t0 + 10) else {
            return XCTFail("the relay takes the channel over")
        }
        XCTAssertEqual(recorded.edgeID, relay)
        XCTAssertNil(directory.relay(for: "show", avoiding: relay, edges: broken, nowMs: t0 + 20),
                     "an audience member who could not reach the origin is placed, not relayed")
    }

    func testAChannelPlacedTwiceAcrossAPartitionSendsTheLosingEdgesClientsToTheWinner() throws {
        // Each side of a partition placed "show" on an edge of its own; once it healed, the
        // placements merged to the later one (edge-2), and both edges report hosting the channel.
        var directory = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 0)
        _ = try directory.claim("show", by: "edge-1", edges: edges, nowMs: t0)
        var later = RoomChannelPlacement()
        later.channel = "show"
        later.edgeID = "edge-2"
        later.placedAtMs = t0 + 5_000
        XCTAssertEqual(directory.merge([later], nowMs: t0 + 6_000), [later])
        directory.edgeReported("edge-1", draining: false, channels: [RoomChannelStatus.reported("show", edge: "edge-1"), RoomChannelStatus.reported("other", edge: "edge-1")],
                               edgeAlive: true, nowMs: t0 + 6_000)
        directory.edgeReported("edge-2", draining: false, channels: [RoomChannelStatus.reported("show", edge: "edge-2")], edgeAlive: true, nowMs: t0 + 6_000)
        let owned: (String) -> Bool = { _ in true }

        XCTAssertEqual(directory.strays(on: "edge-1", edges: edges, owned: owned),
                       [ChannelDirectory.Stray(channel: "show", placedOn: "edge-2")])
        XCTAssertEqual(directory.strays(on: "edge-2", edges: edges, owned: owned), [], "the placed edge keeps its clients")
        XCTAssertEqual(directory.strays(on: "edge-1", edges: edges, owned: { $0 != "show" }), [],
                       "only the channel's owner coordinator sends clients away")
        let broken = edges.map { ChannelDirectory.Edge(id: $0.id, linkBroken: $0.id == "edge-2") }
        XCTAssertEqual(directory.strays(on: "edge-1", edges: broken, owned: owned), [], "nobody is sent to an edge that seems dead")
        XCTAssertEqual(directory.strays(on: "edge-1", edges: edges.filter { $0.id != "edge-2" }, owned: owned), [])

        // While the channel runs on two edges, neither one's creating or ending it is the channel's.
        XCTAssertFalse(directory.announces(.channelDestroyed, of: "show", from: "edge-1"))
        XCTAssertFalse(directory.announces(.channelCreated, of: "show", from: "edge-1"))
        XCTAssertTrue(directory.announces(.audienceLeft, of: "show", from: "edge-1"))
        // The losing edge emptied; its next report no longer lists the channel.
        directory.edgeReported("edge-1", draining: false, channels: [RoomChannelStatus.reported("other", edge: "edge-1")], edgeAlive: true, nowMs: t0 + 7_000)
        XCTAssertEqual(directory.strays(on: "edge-1", edges: edges, owned: owned), [])
        XCTAssertTrue(directory.announces(.channelDestroyed, of: "show", from: "edge-2"), "the placed edge's end is the channel's")
        XCTAssertFalse(directory.announces(.channelDestroyed, of: "show", from: "edge-1"),
                       "an end from an edge the channel is not placed on, reported before its last list, is not")

        // A draining edge is not told: its clients are moving already.
        directory.edgeReported("edge-3", draining: true, channels: [RoomChannelStatus.reported("show", edge: "edge-3")], edgeAlive: true, nowMs: t0 + 7_000)
        XCTAssertEqual(directory.strays(on: "edge-3", edges: edges, owned: owned), [])
    }

    func testAChannelLeftWithoutAPlacementOnTwoEdgesIsPlacedWhereItsPublishersAre() throws {
        // The coordinators took the edges for dead during a partition and dropped the placement;
        // meanwhile a viewer was let in on edge-2 while the host stayed on edge-3.
        var directory = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 0)
        _ = try directory.claim("show", by: "edge-3", edges: edges, nowMs: t0)
        XCTAssertEqual(directory.edgesChanged(alive: ["edge-1"]).map(\.channel), ["show"])
        var hosted = RoomChannelStatus.reported("show", edge: "edge-3")
        hosted.publishers = [42]
        directory.edgeReported("edge-2", draining: false, channels: [RoomChannelStatus.reported("show", edge: "edge-2", subscribers: 1), RoomChannelStatus.reported("solo", edge: "edge-2")],
                               edgeAlive: true, nowMs: t0 + 5_000)
        directory.edgeReported("edge-3", draining: false, channels: [hosted], edgeAlive: true, nowMs: t0 + 5_000)
        let owned: (String) -> Bool = { _ in true }
        XCTAssertEqual(directory.strays(on: "edge-2", edges: edges, owned: owned), [], "nothing placed: nobody is a stray yet")

        XCTAssertEqual(directory.placeSplitChannels(edges: edges, owned: { $0 != "show" }, nowMs: t0 + 5_000), [],
                       "only the channel's owner places it")
        let made = directory.placeSplitChannels(edges: edges, owned: owned, nowMs: t0 + 5_000)
        XCTAssertEqual(made.map(\.channel), ["show"], "a channel on one edge alone is left as it is")
        XCTAssertEqual(made.first?.edgeID, "edge-3", "where the host publishes, not the smallest id")
        XCTAssertEqual(directory.strays(on: "edge-2", edges: edges, owned: owned),
                       [ChannelDirectory.Stray(channel: "show", placedOn: "edge-3")])
        XCTAssertEqual(directory.placeSplitChannels(edges: edges, owned: owned, nowMs: t0 + 6_000), [], "placed once")

        // Without publishers anywhere, the smallest id; an edge whose link broke is not chosen.
        var other = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 0)
        for edge in ["edge-1", "edge-2", "edge-3"] {
            other.edgeReported(edge, draining: false, channels: [RoomChannelStatus.reported("quiet", edge: edge)], edgeAlive: true, nowMs: t0)
        }
        let broken = edges.map { ChannelDirectory.Edge(id: $0.id, linkBroken: $0.id == "edge-1") }
        XCTAssertEqual(other.placeSplitChannels(edges: broken, owned: owned, nowMs: t0).map(\.edgeID), ["edge-2"])
    }

    func testAHostileChannelNameIsRefusedAndNothingIsPlacedWithoutEdges() {
        var directory = ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 0)
        XCTAssertThrowsError(try directory.place(String(repeating: "x", count: 65), edges: edges, avoiding: nil, nowMs: t0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try directory.place("show", edges: [], avoiding: nil, nowMs: t0)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .noEdgeAvailable)
        }
        let draining = ChannelDirectory.Edge(id: "edge-1")
        directory.edgeReported("edge-1", draining: true, channels: nil, edgeAlive: true, nowMs: t0)
        XCTAssertThrowsError(try directory.place("show", edges: [draining], avoiding: nil, nowMs: t0),
                             "a draining edge is no choice even when it is the only one")
        XCTAssertTrue(directory.placements.placements.isEmpty)
    }

    func testUnreportedPlacementsExpireOnlyAtTheirOwner() throws {
        var directory = ChannelDirectory(placementExpiryMs: 1_000, relayThreshold: 0)
        _ = try directory.place("mine", edges: edges, avoiding: nil, nowMs: t0)
        _ = try directory.place("theirs", edges: edges, avoiding: nil, nowMs: t0)
        XCTAssertEqual(directory.expire(nowMs: t0 + 500, owned: { _ in true }), [])
        let removed = directory.expire(nowMs: t0 + 2_000, owned: { $0 == "mine" })
        XCTAssertEqual(removed.map(\.channel), ["mine"])
        XCTAssertEqual(removed.first?.edgeID, "", "a tombstone to replicate")
        XCTAssertEqual(Array(directory.placements.placements.keys), ["theirs"])
    }
}
