import Rooms
import Routing
import ShowroomTesting
import ShowroomWire
import XCTest

/// What a coordinator answers about where channels run (placements, claims, an edge's report),
/// built by its machine from the alive edges as plain values.
final class ChannelAnswersTests: XCTestCase {
    private let t0: Int64 = 1_700_000_000_000
    private let edges = ["edge-1", "edge-2", "edge-3"].map {
        ChannelDirectory.Edge(id: $0, clientEndpoint: "tcp://\($0):7100", clientCurvePublicKey: "curve-\($0)",
                              webSocketEndpoint: "ws://\($0):7200")
    }

    private func report(from edge: String, _ channels: [RoomChannelStatus], draining: Bool = false) -> RoomEdgeChannelReport {
        RoomEdgeChannelReport.with {
            $0.edgeID = edge
            $0.draining = draining
            $0.channels = channels
            $0.hasChannels_p = true
        }
    }

    func testAPlacementIsAnsweredWithWhereClientsConnectToItsEdgeWhileThatEdgeLives() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        let request = RoomPlaceChannelRequest.with {
            $0.channel = "show"
            $0.preferredEdges = ["edge-2"]
        }
        guard case .placed("edge-2", let recorded?) = try node.records.directory.placement(for: request, edges: edges, nowMs: t0) else {
            return XCTFail("a fresh channel goes to the edge its first joiner prefers, recorded")
        }
        XCTAssertEqual(recorded.edgeID, "edge-2")
        XCTAssertEqual(try node.records.directory.placement(for: request, edges: edges, nowMs: t0 + 10),
                       .placed(edge: "edge-2", recorded: nil), "sticky: nothing more to record")
        let answer = try ChannelDirectory.placementAnswer(edge: "edge-2", among: edges)
        XCTAssertEqual(answer.edgeID, "edge-2")
        XCTAssertEqual(answer.clientEndpoint, "tcp://edge-2:7100")
        XCTAssertEqual(answer.clientCurvePublicKey, "curve-edge-2")
        XCTAssertEqual(answer.webSocketEndpoint, "ws://edge-2:7200")
        XCTAssertThrowsError(try ChannelDirectory.placementAnswer(edge: "edge-2", among: edges.filter { $0.id != "edge-2" })) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .noEdgeAvailable, "the edge died while its placement was replicated")
        }
    }

    func testAClaimIsGrantedOrNamesWhereTheChannelIsOrTheOriginARelayPullsFrom() throws {
        var node = CoordinatorNode.caughtUp(relayThreshold: 1, nowMs: t0)
        func claim(_ channel: String, by edge: String) throws -> (answer: RoomClaimChannelResponse, recorded: RoomChannelPlacement?) {
            try node.records.directory.claim(RoomClaimChannelRequest.with {
                $0.channel = channel
                $0.edgeID = edge
            }, edges: edges, nowMs: t0)
        }
        let granted = try claim("show", by: "edge-1")
        XCTAssertTrue(granted.answer.granted)
        XCTAssertEqual(granted.answer.edgeID, "edge-1")
        XCTAssertEqual(granted.recorded?.edgeID, "edge-1", "the claim placed the channel: recorded before the answer")

        let elsewhere = try claim("show", by: "edge-3")
        XCTAssertFalse(elsewhere.answer.granted)
        XCTAssertEqual(elsewhere.answer.edgeID, "edge-1")
        XCTAssertEqual(elsewhere.answer.clientEndpoint, "tcp://edge-1:7100")
        XCTAssertEqual(elsewhere.answer.clientCurvePublicKey, "curve-edge-1")
        XCTAssertNil(elsewhere.recorded)

        // The origin is busy: an audience member goes to a relay, whose claim pulls from the origin.
        _ = node.edgeReported(report(from: "edge-1", [RoomChannelStatus.reported("show", edge: "edge-1", subscribers: 3)]), edges: edges, edgeAlive: true,
                              seesMostOfTheCluster: true, nowMs: t0)
        let audience = RoomPlaceChannelRequest.with {
            $0.channel = "show"
            $0.audience = true
        }
        guard case .relay(let relay) = try node.records.directory.placement(for: audience, edges: edges, nowMs: t0 + 10) else {
            return XCTFail("an audience member of a busy channel goes to a relay")
        }
        XCTAssertNotEqual(relay, "edge-1")
        let pulls = try claim("show", by: relay)
        XCTAssertTrue(pulls.answer.granted)
        XCTAssertEqual(pulls.answer.relayOfEdgeID, "edge-1")
        XCTAssertEqual(pulls.answer.relayOfEndpoint, "tcp://edge-1:7100")
        XCTAssertEqual(pulls.answer.relayOfCurvePublicKey, "curve-edge-1")
        XCTAssertNil(pulls.recorded)
    }

    func testAnEdgesReportIsAnsweredWithItsStraysAndPlacesAChannelHostedTwiceOnlyWithMostOfTheCluster() throws {
        var node = CoordinatorNode.caughtUp(nowMs: t0)
        // "show" runs on edge-1 and edge-2 without a placement (each side of a healed partition
        // let its joiners in); edge-2 has its publishers.
        _ = node.edgeReported(report(from: "edge-2", [RoomChannelStatus.reported("show", edge: "edge-2", publishers: [7, 8])]), edges: edges,
                              edgeAlive: true, seesMostOfTheCluster: true, nowMs: t0)
        let cutOff = node.edgeReported(report(from: "edge-1", [RoomChannelStatus.reported("show", edge: "edge-1", publishers: [9])]), edges: edges,
                                       edgeAlive: true, seesMostOfTheCluster: false, nowMs: t0 + 10)
        XCTAssertEqual(cutOff.placed, [], "a coordinator that sees less than half of the cluster places nothing")
        XCTAssertEqual(cutOff.answer, RoomEdgeChannelReportResponse())

        let taken = node.edgeReported(report(from: "edge-1", [RoomChannelStatus.reported("show", edge: "edge-1", publishers: [9])]), edges: edges,
                                      edgeAlive: true, seesMostOfTheCluster: true, nowMs: t0 + 20)
        XCTAssertEqual(taken.placed.map(\.edgeID), ["edge-2"], "placed where its publishers are")
        XCTAssertEqual(taken.answer.elsewhere, [RoomChannelElsewhere.with {
            $0.channel = "show"
            $0.placedOn.edgeID = "edge-2"
            $0.placedOn.clientEndpoint = "tcp://edge-2:7100"
            $0.placedOn.clientCurvePublicKey = "curve-edge-2"
        }], "edge-1's clients go to edge-2")
        XCTAssertFalse(taken.beganDraining)

        let placed = node.edgeReported(report(from: "edge-2", [RoomChannelStatus.reported("show", edge: "edge-2", publishers: [7, 8])]), edges: edges,
                                       edgeAlive: true, seesMostOfTheCluster: true, nowMs: t0 + 30)
        XCTAssertEqual(placed.placed, [])
        XCTAssertEqual(placed.answer.elsewhere, [], "the placed edge keeps its clients")

        let draining = node.edgeReported(report(from: "edge-3", [], draining: true), edges: edges, edgeAlive: true,
                                         seesMostOfTheCluster: true, nowMs: t0 + 40)
        XCTAssertTrue(draining.beganDraining)
    }
}
