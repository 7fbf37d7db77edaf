import Edge
import EdgeServer
import Logging
import NodeRuntime
import ShowroomTesting
import ShowroomWire
import XCTest

/// A relay edge pulling a channel from its origin edge in process: two ``InProcessEdge``s linked
/// through an ``InProcessEdgeFabric``, a coordinator that grants the channel to the origin and
/// answers the relay's claim with `relay_of_*` naming the origin; no socket anywhere.
final class InProcessRelayTests: XCTestCase {
    private static let originEndpoint = "inproc-client://edge-origin"
    private static let relayEndpoint = "inproc-client://edge-relay"

    private var network: InProcessNetwork!
    private var fabric: InProcessEdgeFabric!
    private var origin: InProcessEdge!
    private var relay: InProcessEdge!
    private var claims: [String] = []
    /// Whether the coordinator moved the channel to the relay edge (its origin died).
    private var movedToRelay = false

    override func setUp() {
        network = InProcessNetwork()
        fabric = InProcessEdgeFabric()
        let coordinator = network.add("coord-1", role: .coordinator)
        let configuration = EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate)
        origin = InProcessEdge(configuration: configuration, node: network.add("edge-origin", role: .edge), fabric: fabric,
                               endpoint: Self.originEndpoint, logger: LogCapture.logger(label: "edge-origin"))
        relay = InProcessEdge(configuration: configuration, node: network.add("edge-relay", role: .edge), fabric: fabric,
                              endpoint: Self.relayEndpoint, logger: LogCapture.logger(label: "edge-relay"))
        coordinator.serve(.edgeChannelReport) { _, respond in respond(.success(RoomEdgeChannelReportResponse())) }
        coordinator.serve(.banList) { _, respond in respond(.success(RoomBanListResponse())) }
        coordinator.serve(.channelClaim) { [unowned self] request, respond in
            claims.append(request.senderNode)
            respond(.success(RoomClaimChannelResponse.with {
                $0.granted = true
                if request.senderNode == "edge-relay", !movedToRelay {
                    $0.relayOfEdgeID = "edge-origin"
                    $0.relayOfEndpoint = Self.originEndpoint
                }
            }))
        }
    }

    override func tearDown() {
        // Nothing runs by itself: the edges stop with the test's last step.
        relay = nil
        origin = nil
        fabric = nil
        network = nil
    }

    /// Delivers what the coordinators' network and the edge links carry until both are quiet.
    private func settle() {
        for _ in 0..<100 {
            network.run()
            if fabric.isIdle { return }
            fabric.run()
        }
        XCTFail("the network and the links did not go quiet")
    }

    private func client(of edge: InProcessEdge) throws -> InProcessEdgeHarness.Client {
        let client = InProcessEdgeHarness.Client(edge.connect(), network: network)
        let id = try client.begin(.openSession(clientID: "client-\(client.connection.session)", sdkVersion: "test"))
        settle()
        XCTAssertNil(client.reply(to: id)?.failure)
        return client
    }

    private func join(_ client: InProcessEdgeHarness.Client, uid: UInt32, role: ClientRole) throws -> EdgeReply? {
        let token = try TestApp.token(channel: "show", uid: uid, role: role == .broadcaster ? .publisher : .subscriber)
        let id = try client.begin(.join(channel: "show", uid: uid, token: token, role: role, options: .defaults(for: role)))
        settle()
        return client.reply(to: id)
    }

    private func publish(_ host: InProcessEdgeHarness.Client, _ sequences: Range<UInt32>) throws {
        for sequence in sequences {
            try host.publish(channel: "show", uid: 1, sequence: sequence, keyframe: sequence == 0, payload: [UInt8(sequence), 7, 7])
        }
        settle()
    }

    func testARelayEdgeReceivesTheOriginsFramesOnceAndFansThemOut() throws {
        let host = try client(of: origin)
        XCTAssertNil(try join(host, uid: 1, role: .broadcaster)?.failure)
        try publish(host, 0..<3)

        var viewers: [InProcessEdgeHarness.Client] = []
        for i in 0..<3 {
            let viewer = try client(of: relay)
            let reply = try join(viewer, uid: UInt32(100 + i), role: .audience)
            XCTAssertNotNil(reply, "the join is answered")
            XCTAssertNil(reply?.failure)
            viewers.append(viewer)
        }
        XCTAssertEqual(relay.relayedChannels, ["show": 3], "the channel is relayed for its 3 viewers")
        XCTAssertEqual(claims, ["edge-origin", "edge-relay"], "one claim per edge")
        XCTAssertEqual(fabric.linkCount, 1, "one link for every viewer of the relay")

        try publish(host, 3..<6)
        for viewer in viewers {
            viewer.collect()
            XCTAssertEqual(viewer.frames.map(\.header.sequence), Array(0..<6), "from the keyframe, in order")
            XCTAssertEqual(viewer.frames.first?.header.keyframe, true)
            XCTAssertEqual(viewer.frames.last?.payload, [5, 7, 7])
            XCTAssertEqual(viewer.take { $0 == .userJoined(channel: "show", uid: 1) }.count, 1, "the host, as its stand-in")
        }

        // The origin sent each frame once, to the link: its one subscriber besides the host.
        XCTAssertEqual(origin.channel("show")?.connections.count, 2, "the host and the relay's link")
        let egress = fabric.egress(of: Self.originEndpoint)
        XCTAssertEqual(egress.frames, 6, "one copy per frame for 3 viewers")
        XCTAssertEqual(egress.bytes, 18)
        XCTAssertEqual(relay.channelSummaries.first?.originEdge, "edge-origin")
        XCTAssertEqual(relay.channelSummaries.first?.connections, 3)

        // A broadcaster on the relay is sent to the origin.
        let intruder = try client(of: relay)
        let refused = try join(intruder, uid: 2, role: .broadcaster)?.failure
        XCTAssertEqual(refused?.code, .channelElsewhere)
        XCTAssertEqual(refused?.redirect?.clientEndpoint, Self.originEndpoint)
    }

    func testALinkToADeadOriginBreaksAndTheRelayHostsTheChannelOnceTheCoordinatorMovesItThere() throws {
        let host = try client(of: origin)
        XCTAssertNil(try join(host, uid: 1, role: .broadcaster)?.failure)
        try publish(host, 0..<2)
        let viewer = try client(of: relay)
        XCTAssertNil(try join(viewer, uid: 100, role: .audience)?.failure)
        viewer.collect()
        XCTAssertEqual(viewer.frames.count, 2)
        let claimsBefore = claims.count

        // The origin dies; the coordinator, which no longer sees it, moves the channel to the relay.
        movedToRelay = true
        fabric.kill(Self.originEndpoint)
        settle()
        XCTAssertEqual(fabric.linkCount, 0, "the link broke")
        XCTAssertGreaterThan(claims.count, claimsBefore, "the relay asked the coordinator again at once")
        XCTAssertEqual(relay.relayedChannels, [:], "hosted here now, not relayed")
        XCTAssertEqual(relay.channel("show")?.connections.map(\.uid).contains(100), true, "its viewer stays")
    }
}
