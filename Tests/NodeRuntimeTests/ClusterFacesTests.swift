import Foundation
import Logging
import Membership
import NodeRuntime
import ShowroomTesting
import ShowroomWire
import XCTest
import ZeroMQ

/// A member's two faces and its authenticated cluster endpoint, with real sockets on loopback:
/// only keyring members gossip and send internal kinds; clients reach the client face, which
/// serves client kinds only.
final class ClusterFacesTests: XCTestCase {
    private let nodes = TestNodes()
    private var directories: [URL] = []

    override func tearDown() async throws {
        await nodes.stopAll()
        for directory in directories { try? FileManager.default.removeItem(at: directory) }
        directories = []
    }

    /// A keyring directory with keys for `ids` (and the operator).
    private func keyring(_ ids: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyring-\(UUID().uuidString.prefix(8))")
        directories.append(directory)
        try ClusterKeyring.generate(directory: directory.path, ids: ids + ["operator"])
        return directory.path
    }

    /// Runs blocking socket work on a thread of its own: sockets stay on the thread that made them.
    private func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    private func alive(_ node: Node) async throws -> Set<String> {
        Set(try await node.members().filter { $0.state == .alive }.map(\.id.rawValue))
    }

    private func forgedGossip(from id: String, endpoint: String) throws -> [UInt8] {
        var packet = GossipPacket()
        packet.sender.id = id
        packet.sender.endpoint = endpoint
        packet.ping.sequence = 1
        packet.ping.target = "member-a"
        var envelope = WireEnvelope()
        envelope.kind = .gossip
        envelope.body = try packet.serializedData()
        return try envelope.serializedBytes()
    }

    func testKeyringMembersGossipOverCurveAndOthersCannotSpeakOnClusterLinks() async throws {
        let keys = try keyring(["member-a", "member-b"])
        let a = try nodes.make("member-a", role: .coordinator, keyring: keys)
        let b = try nodes.make("member-b", role: .edge, keyring: keys, seeds: [a.endpoint])
        a.join()
        b.join()
        try await eventually("both members see each other over CURVE links") {
            let seenByA = try await alive(a)
            let seenByB = try await alive(b)
            return seenByA == ["member-a", "member-b"] && seenByB == ["member-a", "member-b"]
        }
        // Requests between members work over the encrypted links.
        let info = try await a.request(.nodeInfo, body: WireNodeInfoRequest(), to: b.endpoint, expecting: WireNodeInfo.self)
        XCTAssertEqual(info.nodeID, "member-b")

        // A rogue process with a key pair of its own that the cluster does not list tries to join
        // through a member. Even knowing the cluster's server key (as if it had leaked) its
        // handshake is refused by the ZAP handler, so it never becomes a member anywhere.
        let rogueKeys = try keyring(["rogue-edge"])
        try FileManager.default.removeItem(atPath: rogueKeys + "/cluster.key")
        try FileManager.default.copyItem(atPath: keys + "/cluster.key", toPath: rogueKeys + "/cluster.key")
        let rogue = try nodes.make("rogue-edge", role: .edge, keyring: rogueKeys, seeds: [a.endpoint])
        rogue.join()

        // A plain client (no CURVE) and a CURVE client with an unlisted key get no answer at all
        // on the cluster endpoint, not even to NODE_INFO; the operator's listed key does.
        let endpoint = a.endpoint
        let forged = try forgedGossip(from: "intruder", endpoint: "tcp://127.0.0.1:9")
        let members = try await onThread { () throws -> Set<String> in
            let context = try Context()
            defer { context.shutdown() }
            let plain = try NodeClient(endpoint: endpoint, context: context)
            XCTAssertThrowsError(try plain.request(.nodeInfo, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self, timeout: .milliseconds(500)))
            let stranger = try ClusterCredentials(own: CurveKeyPair.generate(),
                                                  serverPublicKey: try ClusterCredentials.load(keyringDirectory: keys, id: "operator").serverPublicKey)
            let unlisted = try NodeClient(endpoint: endpoint, context: context, credentials: stranger)
            XCTAssertThrowsError(try unlisted.request(.nodeInfo, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self, timeout: .milliseconds(500)))
            // A forged gossip packet from a plain socket claiming to be a member goes nowhere either.
            let forger = try Socket(.dealer, context: context)
            try forger.set(.linger, 0)
            try forger.connect(endpoint)
            _ = try forger.send(forged)
            forger.close()
            let operatorClient = try NodeClient(endpoint: endpoint, context: context,
                                                credentials: try ClusterCredentials.load(keyringDirectory: keys, id: "operator"))
            let status = try operatorClient.request(.clusterStatus, body: AdminClusterStatusRequest(), expecting: AdminClusterStatus.self)
            return Set(status.members.map(\.id))
        }
        XCTAssertEqual(members, ["member-a", "member-b"])

        // The rogue's join attempts and the unlisted client were refused by the keyring
        // (the plain client fails earlier, on the mechanism).
        try await eventually("handshakes refused") { try await a.securityCounters().handshakesRefused >= 2 }
        try await eventually("the members keep seeing exactly each other") {
            let seenByA = try await alive(a)
            let seenByB = try await alive(b)
            return seenByA == ["member-a", "member-b"] && seenByB == ["member-a", "member-b"]
        }
        let seenByRogue = try await alive(rogue)
        XCTAssertEqual(seenByRogue, ["rogue-edge"], "the rogue stays alone")
        let aStatus = try await a.clusterStatus()
        XCTAssertFalse(aStatus.members.contains { $0.id == "rogue-edge" || $0.id == "intruder" })
    }

    func testAMemberAddedToTheKeyringLaterIsAdmittedWithoutRestarts() async throws {
        let keys = try keyring(["member-a"])
        let a = try nodes.make("member-a", role: .coordinator, keyring: keys)
        a.join()
        // The new member's keys are written into the (shared) directory after member-a started.
        try ClusterKeyring.generate(directory: keys, ids: ["member-c"])
        let c = try nodes.make("member-c", role: .edge, keyring: keys, seeds: [a.endpoint])
        c.join()
        try await eventually("member-c admitted once its key is in the directory") {
            try await alive(a) == ["member-a", "member-c"]
        }
    }

    func testTheClientFaceServesClientKindsOnlyAndHidesClusterEndpoints() async throws {
        let keys = try keyring(["coordinator-x", "edge-x"])
        let coordinator = try nodes.make("coordinator-x", role: .coordinator, keyring: keys)
        let edge = try nodes.make("edge-x", role: .edge, keyring: keys, seeds: [coordinator.endpoint])
        coordinator.join()
        edge.join()
        try await eventually("converged") { try await alive(coordinator).count == 2 }
        XCTAssertFalse(coordinator.clientEndpoint.isEmpty, "a coordinator binds a client face")
        XCTAssertNotEqual(coordinator.clientEndpoint, coordinator.endpoint)
        try await coordinator.loop.submit {
            coordinator.handle(.coordinatorState) { _, _ in XCTFail("an internal kind reached its handler from a client"); return WireNodeInfo() }
            coordinator.handle(.roomGet) { _, _ in WireNodeInfo() }
        }

        let clientEndpoint = coordinator.clientEndpoint
        try await onThread {
            let context = try Context()
            defer { context.shutdown() }
            let client = try NodeClient(endpoint: clientEndpoint, context: context)
            // Internal kinds: refused with PERMISSION_DENIED, whatever the body.
            for kind in [WireMessageKind.coordinatorState, .edgeBans, .edgeChannelReport, .banList, .channelClaim, .channelList] {
                do {
                    _ = try client.request(kind, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self)
                    XCTFail("\(kind) was served on the client face")
                } catch {
                    XCTAssertEqual((error as? ShowroomError)?.code, .permissionDenied, "\(kind): \(error)")
                }
            }
            // A client kind is served.
            _ = try client.request(.roomGet, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self)
            // The cluster status a client sees names client endpoints only.
            let status = try client.request(.clusterStatus, body: AdminClusterStatusRequest(), expecting: AdminClusterStatus.self)
            XCTAssertEqual(Set(status.members.map(\.id)), ["coordinator-x", "edge-x"])
            for member in status.members {
                XCTAssertEqual(member.clusterEndpoint, "", "\(member.id)'s cluster endpoint leaked")
                XCTAssertEqual(member.adminEndpoint, "", "\(member.id)'s admin endpoint leaked")
            }
            XCTAssertEqual(status.members.first { $0.id == "coordinator-x" }?.clientEndpoint, clientEndpoint)

            // A request with an attachment the kind does not define: MALFORMED_MESSAGE, not served.
            let request = try WireEnvelope(request: .roomGet, id: 77, body: WireNodeInfoRequest())
            let answer = try client.exchange([try request.serializedBytes(), [1, 2, 3]], requestID: 77, timeout: .seconds(3))
            XCTAssertEqual(answer.failure?.code, .malformedMessage)

            // A REQ peer (which adds an empty delimiter frame) gets its answer.
            let req = try Socket(.req, context: context)
            try req.set(.linger, 0)
            try req.connect(clientEndpoint)
            let info = try WireEnvelope(request: .nodeInfo, id: 5, body: WireNodeInfoRequest())
            XCTAssertEqual(try req.send(try info.serializedBytes()), .sent)
            XCTAssertTrue(try req.poll(.readable, timeout: .seconds(3)).contains(.readable), "a REQ peer got no answer")
            let frames = try XCTUnwrap(try req.receiveFrames())
            let reply = try WireEnvelope.decode(frame: Data(frames[0]))
            XCTAssertEqual(reply.requestID, 5)
            XCTAssertEqual(try reply.decodeBody(WireNodeInfo.self).nodeID, "coordinator-x")
            XCTAssertEqual(try reply.decodeBody(WireNodeInfo.self).clusterEndpoint, "", "the client face does not name the cluster endpoint")
            req.close()
        }
        let refused = try await coordinator.securityCounters().internalKindsRefused
        XCTAssertEqual(refused, 6, "each refusal is counted")

        // Served in process (the server API's way in), a face answers as its socket does.
        let inProcess = try await coordinator.serve(try WireEnvelope(request: .coordinatorState, id: 9, body: WireNodeInfoRequest()), face: .client)
        XCTAssertEqual(inProcess.failure?.code, .permissionDenied, "the client face refuses an internal kind in process too")
        let served = try await coordinator.serve(try WireEnvelope(request: .roomGet, id: 10, body: WireNodeInfoRequest()), face: .client)
        XCTAssertNil(served.failure)
        XCTAssertEqual(served.requestID, 10)
        let status = try await coordinator.serve(try WireEnvelope(request: .clusterStatus, id: 11, body: AdminClusterStatusRequest()), face: .client)
        XCTAssertEqual(try status.decodeBody(AdminClusterStatus.self).members.first?.clusterEndpoint, "", "the client face's own answer")
        let oneWay = try await coordinator.serve(try WireEnvelope(request: .roomGet, id: 0, body: WireNodeInfoRequest()), face: .cluster)
        XCTAssertEqual(oneWay.failure?.code, .malformedMessage, "a one-way message would never be answered")
        let unknown = try await coordinator.serve(try WireEnvelope(request: .callDial, id: 12, body: WireNodeInfoRequest()), face: .cluster)
        XCTAssertEqual(unknown.failure?.code, .unknownKind)
    }

    func testGossipFromAMemberClaimingAnotherMembersIdIsDropped() async throws {
        let keys = try keyring(["member-a", "member-b"])
        let a = try nodes.make("member-a", role: .coordinator, keyring: keys)
        a.join()
        // The operator's key is listed, but a packet it sends in member-b's name is not member-b's.
        let endpoint = a.endpoint
        let forged = try forgedGossip(from: "member-b", endpoint: "tcp://127.0.0.1:9")
        try await onThread {
            let context = try Context()
            defer { context.shutdown() }
            let socket = try Socket(.dealer, context: context)
            try socket.set(.linger, 0)
            try ClusterCredentials.load(keyringDirectory: keys, id: "operator").apply(to: socket)
            try socket.connect(endpoint)
            _ = try socket.send(forged)
            // A request on the same connection after it: its answer proves the gossip was handled
            // (one peer's messages are handled in order).
            let probe = try WireEnvelope(request: .nodeInfo, id: 9, body: WireNodeInfoRequest())
            _ = try socket.send(try probe.serializedBytes())
            XCTAssertTrue(try socket.poll(.readable, timeout: .seconds(3)).contains(.readable), "the operator's key was not admitted")
            XCTAssertEqual(try WireEnvelope.decode(frame: Data(XCTUnwrap(try socket.receiveFrames())[0])).requestID, 9)
            socket.close()
        }
        let seen = try await alive(a)
        XCTAssertEqual(seen, ["member-a"], "a packet in another member's name must not add it")
        let refusedGossip = try await a.securityCounters().gossipRefused
        XCTAssertEqual(refusedGossip, 1)
    }
}
