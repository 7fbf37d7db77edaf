import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ShowroomTesting
import NodeRuntime
import ShowroomKit
import ShowroomWire
import SwiftProtobuf
import XCTest
import ZeroMQ

/// The hostile client's wire findings against real processes: forged internal messages
/// (`COORDINATOR_STATE`, `EDGE_BANS`) from a process that is not a member, and a rogue process
/// without a listed key trying to join as an edge and have channels placed on it.
final class ClusterSecurityTests: XCTestCase {
    nonisolated(unsafe) private static var cluster: TestCluster?

    override class func setUp() {
        super.setUp()
        cluster = try? TestCluster(coordinators: 1, edges: 1)
    }

    override class func tearDown() {
        cluster?.down()
        cluster = nil
        super.tearDown()
    }

    private var cluster: TestCluster { get throws { try XCTUnwrap(Self.cluster, "the cluster did not start") } }

    /// A request sent with no keys, on a thread of its own; nil when nothing answered in time.
    private func plainRequest(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message & Sendable, to endpoint: String) async throws -> WireEnvelope? {
        let request = try WireEnvelope(request: kind, id: 41, body: body)
        let frame: [UInt8] = try request.serializedBytes()
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    let context = try Context()
                    defer { context.shutdown() }
                    let client = try NodeClient(endpoint: endpoint, context: context)
                    do {
                        return try client.exchange([frame], requestID: 41, timeout: .seconds(2))
                    } catch let error as ShowroomError where error.code == .deadlineExceeded {
                        return nil
                    }
                })
            }.start()
        }
    }

    func testForgedInternalMessagesFromANonMemberChangeNothing() async throws {
        let cluster = try self.cluster
        let coordinatorClient = try cluster.endpoint("coordinator-1")
        let coordinatorCluster = try cluster.endpoint(of: "coordinator-1")
        let edgeClient = try cluster.clientEndpoint(of: "edge-1")
        let edgeCluster = try cluster.endpoint(of: "edge-1")

        // A viewer in a channel: a forged ban must not kick it.
        let channel = "security-1"
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([coordinatorClient])))
        try await engine.joinChannel(token: try TestApp.token(channel: channel, uid: 77, role: .subscriber),
                                     channel: channel, uid: 77, options: .audience)

        // COORDINATOR_STATE carrying a room and a ban.
        var room = RoomRoom()
        room.roomID = "forgedroom01"
        room.name = "injected"
        room.version = 1
        var state = RoomStateBatch()
        state.rooms = [room]
        var ban = RoomBan()
        ban.channel = channel
        ban.uid = 77
        ban.untilMs = Int64(Date().timeIntervalSince1970 * 1000) + 600_000
        state.bans = [ban]
        let onClientFace = try await plainRequest(.coordinatorState, state, to: coordinatorClient)
        XCTAssertEqual(onClientFace?.failure?.code, .permissionDenied, "the client face refuses it")
        let onClusterFace = try await plainRequest(.coordinatorState, state, to: coordinatorCluster)
        XCTAssertNil(onClusterFace, "the cluster endpoint does not even finish a handshake without a listed key")

        // EDGE_BANS naming the viewer, on both of the edge's faces.
        var bans = RoomEdgeBansRequest()
        bans.bans = [ban]
        let edgeClientAnswer = try await plainRequest(.edgeBans, bans, to: edgeClient)
        XCTAssertNotNil(edgeClientAnswer?.failure, "the edge's client endpoint must refuse EDGE_BANS")
        let edgeClusterAnswer = try await plainRequest(.edgeBans, bans, to: edgeCluster)
        XCTAssertNil(edgeClusterAnswer, "the edge's cluster endpoint does not answer a process without a key")

        // Nothing changed: the room does not exist, the viewer is still in its channel.
        var get = RoomGetRoomRequest()
        get.roomID = room.roomID
        await assertFails(.roomNotFound, "the forged room") {
            try await request(.roomGet, get, to: coordinatorClient, expecting: RoomGetRoomResponse.self)
        }
        // (The channel listing is internal: it goes to the cluster endpoint with the operator's keys.)
        let view = try await waitForChannel(channel, on: coordinatorClient)
        XCTAssertEqual(view.subscribers, 1, "the viewer was not kicked")
        await engine.shutdown()
    }

    func testARogueProcessWithoutAListedKeyNeverBecomesAMember() async throws {
        let cluster = try self.cluster
        let coordinatorClient = try cluster.endpoint("coordinator-1")
        let coordinatorCluster = try cluster.endpoint(of: "coordinator-1")
        let admin = try cluster.adminEndpoint(of: "coordinator-1")
        let refusedBefore = try await handshakesRefused(admin)

        // Keys of its own, and even the cluster's server key (as if it had leaked).
        let rogueKeys = FileManager.default.temporaryDirectory.appendingPathComponent("rogue-keys-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: rogueKeys) }
        try ClusterKeyring.generate(directory: rogueKeys.path, ids: ["edge-rogue"])
        try FileManager.default.removeItem(at: rogueKeys.appendingPathComponent("cluster.key"))
        try FileManager.default.copyItem(at: cluster.runDirectory.appendingPathComponent("keys/cluster.key"),
                                         to: rogueKeys.appendingPathComponent("cluster.key"))
        let rogue = try NodeProcess(.edge, nodeID: "edge-rogue", extraArguments: ["--seed", coordinatorCluster, "--keyring", rogueKeys.path])
        defer {
            rogue.process.kill(signal: SIGKILL)
            _ = rogue.process.waitForExit(timeout: .seconds(5))
        }
        // Its join attempts reach the coordinator and are refused during the handshake.
        try await eventually("the coordinator refused the rogue's handshakes", timeout: .seconds(15)) {
            try await self.handshakesRefused(admin) >= refusedBefore + 2
        }
        let status = try await request(.clusterStatus, AdminClusterStatusRequest(), to: coordinatorClient, expecting: AdminClusterStatus.self)
        XCTAssertFalse(status.members.contains { $0.id == "edge-rogue" }, "the rogue is not a member")
        // No channel is ever placed on it.
        for i in 0..<8 {
            let channel = "rogue-check-\(i)"
            var place = RoomPlaceChannelRequest()
            place.channel = channel
            place.uid = 5
            place.token = try TestApp.token(channel: channel, uid: 5)
            let placed = try await request(.channelPlace, place, to: coordinatorClient, expecting: RoomPlaceChannelResponse.self)
            XCTAssertEqual(placed.edgeID, "edge-1")
        }
    }

    /// The coordinator's `showroom_cluster_handshakes_refused` counter, from its Prometheus metrics.
    private func handshakesRefused(_ admin: String) async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: try XCTUnwrap(URL(string: admin + "/metrics")))
        let text = String(decoding: data, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("showroom_cluster_handshakes_refused") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) } ?? 0
    }

    private func waitForChannel(_ channel: String, on endpoint: String) async throws -> RoomChannelStatus {
        var found: RoomChannelStatus?
        try await eventually("channel \(channel) listed with its viewer", timeout: .seconds(10)) {
            let listed = try await request(.channelList, RoomListChannelsRequest(), to: endpoint, expecting: RoomListChannelsResponse.self)
            found = listed.channels.first { $0.name == channel && $0.subscribers >= 1 }
            return found != nil
        }
        return try XCTUnwrap(found)
    }
}
