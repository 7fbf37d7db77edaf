import ShowroomKit
import ShowroomWire
import XCTest

final class RendezvousHashingTests: XCTestCase {
    private let edges = (1...5).map { EdgeAddress(id: "edge-\($0)", endpoint: "tcp://127.0.0.1:\(7120 + $0)") }
    private let channels = (0..<5000).map { "room-\($0)" }

    func testWeightsAreFixedAcrossProcesses() {
        // Pinned values: a client built anywhere must place a channel where every other does.
        XCTAssertEqual(RendezvousHashing.weight(nodeID: "edge-1", key: "room-1"),
                       RendezvousHashing.weight(nodeID: "edge-1", key: "room-1"))
        XCTAssertNotEqual(RendezvousHashing.weight(nodeID: "edge-1", key: "room-1"),
                          RendezvousHashing.weight(nodeID: "edge-1", key: "room-2"))
        XCTAssertNotEqual(RendezvousHashing.weight(nodeID: "edge-1", key: "room-1"),
                          RendezvousHashing.weight(nodeID: "edge-2", key: "room-1"))
        XCTAssertEqual(RendezvousHashing.weight(nodeID: "", key: ""), Self.pinnedEmptyWeight)
    }

    /// The weight of the empty pair, pinned: FNV-1a 64 of "|" (0x7c) then the splitmix64
    /// finaliser. Every client (and the coordinator) must place channels alike, so the hash may
    /// never change between versions.
    static let pinnedEmptyWeight: UInt64 = 0xad5e_0ba3_f98c_97c2

    func testChoiceDoesNotDependOnListOrder() {
        for channel in channels.prefix(200) {
            XCTAssertEqual(choose(channel, edges),
                           choose(channel, edges.reversed()))
        }
        XCTAssertNil(choose("room-1", []))
    }

    func testSpreadsEvenly() {
        var counts: [String: Int] = [:]
        for channel in channels {
            counts[choose(channel, edges)!.id, default: 0] += 1
        }
        let expected = channels.count / edges.count
        XCTAssertEqual(counts.count, edges.count)
        for (edge, count) in counts {
            // 1000 expected per edge; ±15% is far outside random variation (σ ≈ 28).
            XCTAssertTrue(abs(count - expected) < expected * 15 / 100, "\(edge) got \(count) of \(channels.count)")
        }
    }

    func testRemovingAnEdgeMovesOnlyItsChannels() {
        let before = channels.map { choose($0, edges)!.id }
        let survivors = edges.filter { $0.id != "edge-3" }
        let after = channels.map { choose($0, survivors)!.id }
        var moved = 0
        for (old, new) in zip(before, after) where old != new {
            XCTAssertEqual(old, "edge-3", "a channel moved off a surviving edge")
            moved += 1
        }
        XCTAssertEqual(moved, before.filter { $0 == "edge-3" }.count)
    }

    func testAddingAnEdgeMovesAboutOneInNToIt() {
        let before = channels.map { choose($0, edges)!.id }
        let grown = edges + [EdgeAddress(id: "edge-6", endpoint: "tcp://127.0.0.1:7126")]
        let after = channels.map { choose($0, grown)!.id }
        var moved = 0
        for (old, new) in zip(before, after) where old != new {
            XCTAssertEqual(new, "edge-6")
            moved += 1
        }
        XCTAssertTrue(abs(moved - channels.count / 6) < channels.count / 6 * 15 / 100, "moved \(moved)")
    }

    func testClusterStatusKeepsAliveEdgesWithClientEndpoints() {
        var status = AdminClusterStatus()
        func member(_ id: String, _ role: String, _ state: GossipMemberState, _ client: String) -> AdminMemberStatus {
            var m = AdminMemberStatus()
            m.id = id
            m.role = role
            m.state = state
            m.clientEndpoint = client
            return m
        }
        status.members = [
            member("edge-2", "edge", .alive, "tcp://127.0.0.1:2"),
            member("edge-1", "edge", .alive, "tcp://127.0.0.1:1"),
            member("edge-3", "edge", .suspect, "tcp://127.0.0.1:3"),
            member("edge-4", "edge", .dead, "tcp://127.0.0.1:4"),
            member("edge-5", "edge", .alive, ""),
            member("coord-1", "coordinator", .alive, "tcp://127.0.0.1:9"),
        ]
        XCTAssertEqual(ClusterPlacement.edges(in: status).map(\.id), ["edge-1", "edge-2"])
    }
}

/// The edge rendezvous hashing picks for `channel`.
private func choose(_ channel: String, _ edges: some Sequence<EdgeAddress>) -> EdgeAddress? {
    let all = Array(edges)
    guard let id = RendezvousHashing.owner(key: channel, among: all.map(\.id)) else { return nil }
    return all.first { $0.id == id }
}
