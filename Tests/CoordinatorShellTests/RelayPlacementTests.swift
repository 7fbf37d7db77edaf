import Rooms
import ShowroomTesting
import ShowroomWire
import XCTest
@testable import Coordinator

/// A busy channel's audience goes to relay edges: placement answers name a relay once the origin
/// holds its share, the relay's claim is granted as a relay of the origin, and a relay's report
/// never makes it the channel's host.
final class RelayPlacementTests: XCTestCase {
    func place(_ cluster: CoordinatorHarness, _ channel: String, uid: UInt32, audience: Bool) throws -> String {
        try cluster.node("coord-a").ask(.channelPlace, RoomPlaceChannelRequest.with {
            $0.channel = channel
            $0.uid = uid
            $0.token = (try? TestApp.token(channel: channel, uid: uid)) ?? ""
            $0.audience = audience
        }, as: RoomPlaceChannelResponse.self).edgeID
    }

    func testAudienceBeyondTheOriginsShareGoesToRelaysWhichPullFromTheOrigin() throws {
        let cluster = try CoordinatorHarness(coordinators: [])
        cluster.relayThreshold = 2
        try cluster.start("coord-a")
        for edge in ["edge-1", "edge-2", "edge-3"] { cluster.addEdge(edge) }
        let origin = try place(cluster, "big", uid: 1, audience: false)
        try cluster.report(from: origin, to: "coord-a", [], channels: [RoomChannelStatus.reported("big", edge: origin, subscribers: 1)])
        XCTAssertEqual(try place(cluster, "big", uid: 10, audience: true), origin, "the origin has room for one more")
        let relay = try place(cluster, "big", uid: 11, audience: true)
        XCTAssertNotEqual(relay, origin, "the origin's share is taken (one reported, one charged)")
        XCTAssertEqual(try place(cluster, "big", uid: 12, audience: true), relay, "the relay fills to its share")
        XCTAssertEqual(try place(cluster, "big", uid: 2, audience: false), origin, "publishers always go to the origin")

        let claim = try cluster.node("coord-a").ask(.channelClaim, RoomClaimChannelRequest.with {
            $0.channel = "big"
            $0.edgeID = relay
        }, as: RoomClaimChannelResponse.self)
        XCTAssertTrue(claim.granted)
        XCTAssertEqual(claim.relayOfEdgeID, origin, "the relay pulls from the origin")
        XCTAssertFalse(claim.relayOfEndpoint.isEmpty)

        // The relay's report keeps it a relay; an edge that is no relay is sent to the origin.
        try cluster.report(from: relay, to: "coord-a", [], channels: [RoomChannelStatus.reported("big", edge: relay, subscribers: 2, origin: origin)])
        XCTAssertEqual(cluster.shells["coord-a"]?.machine.records.directory.hosts(of: "big"), [origin])
        let stranger = ["edge-1", "edge-2", "edge-3"].first { $0 != origin && $0 != relay }!
        let refused = try cluster.node("coord-a").ask(.channelClaim, RoomClaimChannelRequest.with {
            $0.channel = "big"
            $0.edgeID = stranger
        }, as: RoomClaimChannelResponse.self)
        XCTAssertFalse(refused.granted)
        XCTAssertEqual(refused.edgeID, origin)
    }

    func testADrainingEdgeGetsNothingAndItsChannelMovesToItsRelayOnTheNextPlacement() throws {
        let cluster = try CoordinatorHarness(coordinators: [])
        cluster.relayThreshold = 1
        try cluster.start("coord-a")
        for edge in ["edge-1", "edge-2", "edge-3"] { cluster.addEdge(edge) }
        let origin = try place(cluster, "moving", uid: 1, audience: false)
        try cluster.report(from: origin, to: "coord-a", [], channels: [RoomChannelStatus.reported("moving", edge: origin, subscribers: 1)])
        let relay = try place(cluster, "moving", uid: 10, audience: true)
        XCTAssertNotEqual(relay, origin)
        _ = try cluster.node("coord-a").ask(.channelClaim, RoomClaimChannelRequest.with {
            $0.channel = "moving"
            $0.edgeID = relay
        }, as: RoomClaimChannelResponse.self)
        try cluster.report(from: relay, to: "coord-a", [], channels: [RoomChannelStatus.reported("moving", edge: relay, subscribers: 1, origin: origin)])

        // The origin drains (the report it sends first carries no channel list).
        try cluster.report(from: origin, to: "coord-a", [], draining: true)
        XCTAssertEqual(cluster.shells["coord-a"]?.machine.records.directory.draining, [origin])
        XCTAssertEqual(cluster.shells["coord-a"]?.listChannels().drainingEdges, [origin], "the status view shows it")
        XCTAssertEqual(cluster.shells["coord-a"]?.machine.records.directory.hosts(of: "moving"), [], "a draining edge is nobody's host")
        XCTAssertEqual(try place(cluster, "moving", uid: 1, audience: false), relay, "the host goes to the relay, where the viewers are")
        XCTAssertNotEqual(try place(cluster, "other", uid: 2, audience: false), origin, "nothing new is placed on it")
        // A report without the flag and without channels (activities only) does not end it.
        try cluster.report(from: origin, to: "coord-a", [])
        XCTAssertEqual(cluster.shells["coord-a"]?.machine.records.directory.draining, [origin])
    }

    func testAnEdgeGoneAfterItsDrainIsForgottenAsDrainingSoANewProcessUnderItsIdTakesChannels() throws {
        let cluster = try CoordinatorHarness(coordinators: ["coord-a"], edges: ["edge-1", "edge-2"])
        try cluster.report(from: "edge-2", to: "coord-a", [], draining: true)
        XCTAssertEqual(cluster.shells["coord-a"]?.machine.records.directory.draining, ["edge-2"])
        // It leaves; its last report (still saying draining) arrives after.
        cluster.network.kill("edge-2")
        cluster.network.membershipChanged()
        XCTAssertEqual(cluster.shells["coord-a"]?.machine.records.directory.draining, [], "a gone edge drains no more")
        try cluster.report(from: "edge-2", to: "coord-a", [], draining: true)
        XCTAssertEqual(cluster.shells["coord-a"]?.machine.records.directory.draining, [], "a draining report from an edge that is gone is not taken")
        // A new process under the same id: placeable.
        cluster.addEdge("edge-2")
        XCTAssertEqual(cluster.shells["coord-a"].map { $0.machine.records.directory.placeable($0.directoryEdges()).map(\.id).sorted() }, ["edge-1", "edge-2"])
    }

    func testAClientsUnreachableEdgeIsNotChosenEvenWhenItIsOnlyTheChannelsReportedHost() throws {
        let cluster = try CoordinatorHarness(coordinators: ["coord-a"], edges: ["edge-1", "edge-2"])
        // The coordinator has no placement for the channel, only edge-1's report that it hosts it.
        try cluster.report(from: "edge-1", to: "coord-a", [], channels: [RoomChannelStatus.reported("show", edge: "edge-1", subscribers: 3)])
        XCTAssertNil(cluster.shells["coord-a"]?.machine.records.directory.placements.placements["show"])
        // Edge-1 stops answering (it died; the membership does not know yet). A rejoining client
        // names it.
        cluster.node("edge-1").serve(.nodeInfo) { _, respond in respond(.failure(.unavailable("edge-1 is gone"))) }
        XCTAssertEqual(try cluster.place("show", at: "coord-a", unreachableEdge: "edge-1").edgeID, "edge-2")
    }

    func testAnEdgeHostingAChannelPlacedOnAnotherIsToldWhereAndItsEndIsNotTheChannels() throws {
        let cluster = try CoordinatorHarness(coordinators: ["coord-a"], edges: ["edge-1", "edge-2"])
        XCTAssertEqual(try cluster.place("show", at: "coord-a", preferring: ["edge-1"]).edgeID, "edge-1")
        let now = cluster.network.now
        try cluster.report(from: "edge-1", to: "coord-a", [
            activity(.channelCreated, channel: "show", uid: 0, number: 1, atMs: now),
            activity(.broadcasterJoined, channel: "show", uid: 42, number: 2, atMs: now),
        ], channels: [RoomChannelStatus.reported("show", edge: "edge-1", subscribers: 0)])
        // Edge-2 hosts it too (it was placed there on the other side of a partition).
        let answer = try cluster.report(from: "edge-2", to: "coord-a", [
            activity(.channelCreated, channel: "show", uid: 0, origin: "edge-2#1", number: 1, atMs: now),
            activity(.audienceJoined, channel: "show", uid: 108, origin: "edge-2#1", number: 2, atMs: now),
        ], channels: [RoomChannelStatus.reported("show", edge: "edge-2", subscribers: 1)])
        XCTAssertEqual(answer.elsewhere.map(\.channel), ["show"])
        XCTAssertEqual(answer.elsewhere.first?.placedOn.edgeID, "edge-1")
        XCTAssertFalse(answer.elsewhere.first?.placedOn.clientEndpoint.isEmpty ?? true, "the clients can go there without asking")
        XCTAssertEqual(try cluster.report(from: "edge-1", to: "coord-a", [], channels: [RoomChannelStatus.reported("show", edge: "edge-1", subscribers: 1)])
            .elsewhere, [], "the placed edge keeps its clients")
        XCTAssertEqual(try cluster.report(from: "edge-2", to: "coord-a", []).elsewhere, [], "only a report of the edge's channels is answered so")

        // Edge-2's clients leave it; its channel's end there is not the channel's end.
        try cluster.report(from: "edge-2", to: "coord-a", [
            activity(.audienceLeft, channel: "show", uid: 108, origin: "edge-2#1", number: 3, atMs: now),
            activity(.channelDestroyed, channel: "show", uid: 0, origin: "edge-2#1", number: 4, atMs: now),
        ], channels: [])
        XCTAssertEqual(cluster.sinks["coord-a"]!.channelEvents.map(\.type),
                       [.channelCreated, .broadcasterJoined, .audienceJoined, .audienceLeft])
    }

    func testAFreshChannelGoesWhereItsFirstJoinerAlreadyIsAndAPlacedOneStays() throws {
        let cluster = try CoordinatorHarness(coordinators: ["coord-a", "coord-b"], edges: ["edge-1", "edge-2", "edge-3"])
        // A call's channel: placed on the caller's edge, whichever it is; an unknown edge is passed over.
        for edge in ["edge-1", "edge-2", "edge-3"] {
            XCTAssertEqual(try cluster.place("call-\(edge)", at: "coord-a", preferring: ["edge-9", edge]).edgeID, edge)
        }
        // The callee prefers its own edge: the channel stays where the caller put it.
        XCTAssertEqual(try cluster.place("call-edge-1", at: "coord-b", preferring: ["edge-2"]).edgeID, "edge-1")
        for id in ["coord-a", "coord-b"] {
            XCTAssertEqual(cluster.shells[id]?.machine.records.directory.placements.placements["call-edge-2"]?.edgeID, "edge-2", "replicated to \(id)")
        }
        // A draining edge is no choice, even when preferred.
        try cluster.report(from: "edge-3", to: "coord-a", [], draining: true)
        XCTAssertNotEqual(try cluster.place("call-late", at: "coord-a", preferring: ["edge-3"]).edgeID, "edge-3")
    }

    func testAPlacementPreferringTooManyOrUnnamedEdgesIsRefusedAndPlacesNothing() throws {
        let cluster = try CoordinatorHarness(coordinators: ["coord-a"], edges: ["edge-1", "edge-2"])
        for preferring in [["edge-1", "edge-2", "edge-1", "edge-2", "edge-1"], ["edge-1", ""], [String(repeating: "e", count: 65)]] {
            XCTAssertThrowsError(try cluster.place("call-1", at: "coord-a", preferring: preferring)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, "\(preferring)")
                XCTAssertTrue("\(error)".contains("at most 4 edges"), "\(error)")
            }
        }
        XCTAssertTrue(cluster.shells["coord-a"]!.machine.records.directory.placements.placements.isEmpty)
    }

    func testWithoutAThresholdEveryViewerStaysOnTheOrigin() throws {
        let cluster = try CoordinatorHarness(coordinators: ["coord-a"], edges: ["edge-1", "edge-2"])
        let origin = try place(cluster, "calm", uid: 1, audience: false)
        try cluster.report(from: origin, to: "coord-a", [], channels: [RoomChannelStatus.reported("calm", edge: origin, subscribers: 900)])
        XCTAssertEqual(try place(cluster, "calm", uid: 10, audience: true), origin)
    }
}
