import Foundation
import Logging
import Membership
import NodeRuntime
import ShowroomTesting
import ShowroomWire
import XCTest
import ZeroMQ

/// Forged gossip on real sockets (plain cluster links, as a member with a bug or a leaked key
/// would send it): one GOSSIP envelope from a bare DEALER claiming a member suspect, dead or left
/// at incarnation `UInt64.max` must neither kill that member nor keep it out after a restart.
final class ForgedGossipTests: XCTestCase {
    private let nodes = TestNodes()
    private let context = try! Context()

    override func tearDown() async throws {
        await nodes.stopAll()
    }

    /// What `observer` thinks of every member, by id.
    private func states(seenBy observer: Node) async throws -> [String: MemberState] {
        Dictionary(uniqueKeysWithValues: try await observer.members().map { ($0.id.rawValue, $0.state) })
    }

    private func everyoneSeesEveryoneAlive(_ cluster: [Node]) async throws -> Bool {
        let ids = Set(cluster.map(\.configuration.nodeID))
        for observer in cluster {
            let seen = try await states(seenBy: observer)
            guard ids.allSatisfy({ seen[$0] == .alive }) else { return false }
        }
        return true
    }

    /// One GOSSIP envelope (one-way) whose broadcast claims `victim` is in `state` at `UInt64.max`.
    private func forgedClaim(about victim: String, _ state: GossipMemberState) throws -> [UInt8] {
        var update = GossipMemberUpdate()
        update.id = victim
        update.state = state
        update.incarnation = .max
        update.from = "mallory"
        var packet = GossipPacket()
        packet.sender.id = "mallory"
        packet.sender.endpoint = "tcp://127.0.0.1:9"
        packet.broadcast.updates = [update]
        var envelope = WireEnvelope()
        envelope.kind = .gossip
        envelope.senderNode = "mallory"
        envelope.protocolVersion = WireEnvelope.currentProtocolVersion
        envelope.body = try packet.serializedData()
        return try envelope.serializedBytes()
    }

    /// Sends `forged` to `node` from a fresh DEALER, then a node-info request on the same
    /// connection, and returns once it is answered: the node handles a connection's messages in
    /// order on its loop, so by then it has processed the forged packet (and is still running).
    private func deliver(_ forged: [UInt8], to node: Node) throws {
        let socket = try Socket(.dealer, context: context)
        defer { socket.close() }
        try socket.connect(node.endpoint)
        XCTAssertEqual(try socket.send(frames: [forged]), .sent)
        let request = try WireEnvelope(request: .nodeInfo, id: 4242, body: WireNodeInfoRequest(), senderNode: "mallory")
        XCTAssertEqual(try socket.send(frames: [try request.serializedBytes()]), .sent)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            guard try socket.poll(.readable, timeout: ContinuousClock.now.duration(to: deadline)).contains(.readable),
                  let reply = try socket.receiveFrames()
            else { continue }
            let answer = try WireEnvelope.decode(frame: Data(reply[0]))
            guard answer.requestID == 4242 else { continue }
            let info = try answer.decodeBody(WireNodeInfo.self)
            XCTAssertEqual(info.nodeID, node.configuration.nodeID, "the node answered after the forged packet")
            return
        }
        XCTFail("\(node.configuration.nodeID) did not answer after the forged packet")
    }

    /// Gossip messages `node` has received so far.
    private func gossipReceived(_ node: Node) async throws -> UInt64 {
        try await node.clusterStatus().reporterTraffic.messagesReceived
    }

    func testAForgedClaimAtTheTopKillsNobody() async throws {
        let a = try nodes.make("forge-a")
        let b = try nodes.make("forge-b", seeds: [a.endpoint])
        let c = try nodes.make("forge-c", seeds: [a.endpoint])
        let cluster = [a, b, c]
        for node in cluster { node.join() }
        try await eventually("three members converge") { try await everyoneSeesEveryoneAlive(cluster) }

        for state in [GossipMemberState.suspect, .dead, .left] {
            // To every member, the victim included.
            for node in cluster { try deliver(try forgedClaim(about: "forge-b", state), to: node) }
            let rightAfter = try await everyoneSeesEveryoneAlive(cluster)
            XCTAssertTrue(rightAfter, "right after a forged \(state)")
            // Let honest gossip go on (each member hears at least 20 more messages, several probe
            // and gossip rounds): the victim must still be alive in every view.
            var baseline: [UInt64] = []
            for node in cluster { baseline.append(try await gossipReceived(node)) }
            try await eventually("honest gossip after a forged \(state)") {
                for (node, before) in zip(cluster, baseline) where try await gossipReceived(node) < before + 20 { return false }
                return true
            }
            let afterGossip = try await everyoneSeesEveryoneAlive(cluster)
            XCTAssertTrue(afterGossip, "after a forged \(state) and honest gossip")
            let members = try await b.members()
            let victim = try XCTUnwrap(members.first { $0.id == "forge-b" })
            XCTAssertEqual(victim.state, .alive)
            XCTAssertLessThan(victim.incarnation, 1 << 20, "the victim did not adopt the forged incarnation")
        }
        let info = try await a.request(.nodeInfo, body: WireNodeInfoRequest(), to: b.endpoint, expecting: WireNodeInfo.self)
        XCTAssertEqual(info.nodeID, "forge-b", "the victim's node keeps answering")
    }

    func testARestartedMemberRejoinsAfterAForgedLeaveAtTheTop() async throws {
        let a = try nodes.make("rejoin-a")
        let b = try nodes.make("rejoin-b", seeds: [a.endpoint])
        let c = try nodes.make("rejoin-c", seeds: [a.endpoint])
        for node in [a, b, c] { node.join() }
        try await eventually("three members converge") { try await everyoneSeesEveryoneAlive([a, b, c]) }

        for node in [a, b, c] { try deliver(try forgedClaim(about: "rejoin-c", .left), to: node) }
        // The process stops without a word (as if killed) and starts again under the same id and
        // address, at incarnation 0.
        let address = c.endpoint
        await nodes.stop(c)
        let restarted = try nodes.make("rejoin-c", seeds: [a.endpoint], bind: address)
        XCTAssertEqual(restarted.endpoint, address)
        restarted.join()
        try await eventually("the restarted member is alive in every view", timeout: .seconds(15)) {
            try await everyoneSeesEveryoneAlive([a, b, restarted])
        }
        let members = try await a.members()
        let seenByA = try XCTUnwrap(members.first { $0.id == "rejoin-c" })
        XCTAssertLessThan(seenByA.incarnation, 1 << 20)
    }
}
