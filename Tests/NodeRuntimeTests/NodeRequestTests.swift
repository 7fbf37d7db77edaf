import Logging
import Membership
import NodeRuntime
import Routing
import ShowroomWire
import XCTest
import ZeroMQ

/// Two nodes in one process: they find each other by gossip and answer each other's requests,
/// with errors and deadlines that carry stable codes.
final class NodeRequestTests: XCTestCase {
    private func makeNode(_ id: String, role: NodeRole, seeds: [String] = []) throws -> Node {
        var configuration = NodeConfiguration(role: role, nodeID: id)
        configuration.seeds = seeds
        configuration.leavePropagation = .milliseconds(100)
        return try Node(configuration: configuration, logger: Logger(label: id), events: .none)
    }

    func testMembersJoinAndAnswerEachOthersRequests() async throws {
        let a = try makeNode("node-a", role: .coordinator)
        let b = try makeNode("node-b", role: .edge, seeds: [a.endpoint])
        a.join()
        b.join()

        let info = try await a.request(.nodeInfo, body: WireNodeInfoRequest(), to: b.endpoint, expecting: WireNodeInfo.self)
        XCTAssertEqual(info.nodeID, "node-b")
        XCTAssertEqual(NodeRole(wire: info.role), .edge)

        // Gossip: each sees the other alive, with its role and address.
        let deadline = ContinuousClock.now + .seconds(10)
        var seen: [Member] = []
        while ContinuousClock.now < deadline {
            seen = try await a.members()
            let seenByB = try await b.members()
            if seen.first(where: { $0.id == MemberID("node-b") })?.state == .alive,
               seenByB.first(where: { $0.id == MemberID("node-a") })?.state == .alive { break }
            try await Task.sleep(for: .milliseconds(20))  // poll period
        }
        let other = try XCTUnwrap(seen.first { $0.id == MemberID("node-b") })
        XCTAssertEqual(other.state, .alive)
        XCTAssertEqual(other.metadata.role, "edge")
        XCTAssertEqual(other.metadata.clusterEndpoint, b.endpoint)
        let status = try await b.clusterStatus()
        XCTAssertEqual(Set(status.members.map(\.id)), ["node-a", "node-b"])

        // An error answer arrives with its code.
        try await b.loop.submit {
            b.handle(.mediaFrame) { _, _ in throw ShowroomError.tooLarge("frame over the limit") }
        }
        do {
            _ = try await a.request(.mediaFrame, body: WireMediaHeader(), to: b.endpoint, expecting: WireNodeInfo.self)
            XCTFail("expected an error answer")
        } catch {
            XCTAssertEqual(error.code, .tooLarge)
            XCTAssertEqual(error.message, "frame over the limit")
        }

        await b.leave()
        await a.stop()
    }

    func testARequestToASilentPeerEndsAtItsDeadline() async throws {
        let a = try makeNode("node-asking", role: .coordinator)
        // A peer that accepts connections and never answers.
        let context = try Context()
        let silent = try Socket(.router, context: context)
        let endpoint = try silent.bind("tcp://127.0.0.1:*")

        let start = ContinuousClock.now
        do {
            _ = try await a.request(.nodeInfo, body: WireNodeInfoRequest(), to: endpoint, expecting: WireNodeInfo.self,
                                    timeout: .milliseconds(300))
            XCTFail("a silent peer cannot answer")
        } catch {
            XCTAssertEqual(error.code, .deadlineExceeded)
            XCTAssertTrue(error.message.contains(endpoint), error.message)
        }
        XCTAssertLessThan(start.duration(to: .now), .seconds(5), "the deadline ended the wait")
        await a.stop()
        silent.close()
    }
}
