import Ownership
import XCTest

final class RendezvousHashingTests: XCTestCase {
    private let edges = (1...5).map { "edge-\($0)" }
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
            counts[choose(channel, edges)!, default: 0] += 1
        }
        let expected = channels.count / edges.count
        XCTAssertEqual(counts.count, edges.count)
        for (edge, count) in counts {
            // 1000 expected per edge; ±15% is far outside random variation (σ ≈ 28).
            XCTAssertTrue(abs(count - expected) < expected * 15 / 100, "\(edge) got \(count) of \(channels.count)")
        }
    }

    func testRemovingAnEdgeMovesOnlyItsChannels() {
        let before = channels.map { choose($0, edges)! }
        let survivors = edges.filter { $0 != "edge-3" }
        let after = channels.map { choose($0, survivors)! }
        var moved = 0
        for (old, new) in zip(before, after) where old != new {
            XCTAssertEqual(old, "edge-3", "a channel moved off a surviving edge")
            moved += 1
        }
        XCTAssertEqual(moved, before.filter { $0 == "edge-3" }.count)
    }

    func testAddingAnEdgeMovesAboutOneInNToIt() {
        let before = channels.map { choose($0, edges)! }
        let grown = edges + ["edge-6"]
        let after = channels.map { choose($0, grown)! }
        var moved = 0
        for (old, new) in zip(before, after) where old != new {
            XCTAssertEqual(new, "edge-6")
            moved += 1
        }
        XCTAssertTrue(abs(moved - channels.count / 6) < channels.count / 6 * 15 / 100, "moved \(moved)")
    }
}

/// The edge rendezvous hashing picks for `channel`.
private func choose(_ channel: String, _ edges: some Sequence<String>) -> String? {
    RendezvousHashing.owner(key: channel, among: edges)
}
