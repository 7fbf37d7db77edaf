import Routing
import ShowroomKit
import ShowroomWire
import XCTest
import ZeroMQ

/// The SDK's cluster entry against a stand-in seed member that answers `CLUSTER_STATUS`.
final class ClusterPlacementTests: XCTestCase {
    /// A ROUTER that answers every `CLUSTER_STATUS` request with `status`.
    private func startSeed(answering status: AdminClusterStatus) throws -> (EventLoop, String) {
        let loop = try EventLoop.start(name: "seed", context: Context())
        let endpoint = try loop.submitAndWait { () throws -> String in
            let router = try Socket(.router, context: loop.context)
            let endpoint = try router.bind("tcp://127.0.0.1:*")
            loop.register(router) { socket, _ in
                while let frames = try? socket.receiveFrames(), frames.count == 2,
                      let request = try? WireEnvelope.decode(frame: frames[1]), request.kind == .clusterStatus,
                      let answer = try? WireEnvelope(responseTo: request, body: status).serializedBytes() as [UInt8] {
                    _ = try? socket.send(frames: [frames[0], answer])
                }
            }
            return endpoint
        }
        return (loop, endpoint)
    }

    func testSeedsEntryPlacesChannelsOnAliveEdges() async throws {
        var status = AdminClusterStatus()
        for (id, state) in [("edge-a", GossipMemberState.alive), ("edge-b", .alive), ("edge-c", .dead)] {
            var member = AdminMemberStatus()
            member.id = id
            member.role = "edge"
            member.state = state
            member.clientEndpoint = "tcp://127.0.0.1:1\(id.last!.asciiValue!)"
            status.members.append(member)
        }
        let (seedLoop, seed) = try startSeed(answering: status)
        let loop = try EngineLoop(name: "placement")
        // A dead seed first: the next one answers.
        let placement = ClusterPlacement(seeds: ["tcp://127.0.0.1:1", seed], loop: loop, timeout: .milliseconds(300))
        let edges = try await placement.aliveEdges()
        XCTAssertEqual(edges.map(\.id), ["edge-a", "edge-b"])
        for channel in ["room-1", "room-2", "room-3", "pk-7"] {
            let chosen = try await placement.edge(for: channel)
            XCTAssertEqual(chosen.id, RendezvousHashing.owner(key: channel, among: edges.map(\.id)))
        }
        await loop.shutdown()
        seedLoop.shutdown()
    }

    func testNoSeedAnsweringIsDeadlineExceeded() async throws {
        let loop = try EngineLoop(name: "placement")
        let placement = ClusterPlacement(seeds: ["tcp://127.0.0.1:1"], loop: loop, timeout: .milliseconds(200))
        do {
            _ = try await placement.edge(for: "room")
            XCTFail("placed without a cluster")
        } catch {
            XCTAssertEqual(error.code, .deadlineExceeded)
        }
        await loop.shutdown()
    }
}
