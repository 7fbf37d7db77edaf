import Ownership
import ShowroomWire
import XCTest

/// Who owns a key among the alive members of a role, with plain values.
final class OwnerRingTests: XCTestCase {
    private let keys = (0..<2000).map { "room-\($0)" }

    private struct TestMember: RoutableMember {
        var nodeID: String
        var nodeRole: NodeRole?
        var isAlive = true
    }

    private func ring(_ ids: [String]) -> OwnerRing {
        OwnerRing(.coordinator, memberIDs: ids)
    }

    func testOwnerAndSuccessorDoNotDependOnTheOrderMembersArrive() {
        let ids = (1...5).map { "coord-\($0)" }
        let forward = ring(ids)
        let backward = ring(ids.reversed())
        let shuffled = ring(["coord-3", "coord-5", "coord-1", "coord-4", "coord-2", "coord-3"])
        XCTAssertEqual(forward, backward)
        XCTAssertEqual(forward, shuffled)
        XCTAssertEqual(forward.members, ids)
        for key in keys {
            XCTAssertEqual(forward.owner(of: key), backward.owner(of: key))
            XCTAssertEqual(forward.successor(of: key), backward.successor(of: key))
            XCTAssertEqual(forward.holders(of: key, count: 3), shuffled.holders(of: key, count: 3))
        }
    }

    func testOwnerSuccessorAndHoldersAgree() {
        let ring = ring((1...4).map { "coord-\($0)" })
        for key in keys.prefix(200) {
            let holders = ring.holders(of: key, count: 4)
            XCTAssertEqual(Set(holders), Set(ring.members))
            XCTAssertEqual(holders.first, ring.owner(of: key))
            XCTAssertEqual(holders[1], ring.successor(of: key))
            XCTAssertEqual(ring.holders(of: key, count: 2), Array(holders.prefix(2)))
        }
        XCTAssertEqual(ring.holders(of: "room-1", count: 9).count, 4)
        XCTAssertEqual(ring.holders(of: "room-1", count: 0), [])
    }

    func testRemovingAMemberMovesOnlyItsKeysToTheirSuccessors() {
        let before = ring((1...5).map { "coord-\($0)" })
        let after = before.removing("coord-2")
        XCTAssertNotEqual(before, after)
        XCTAssertFalse(after.contains("coord-2"))
        var moved = 0
        for key in keys {
            let old = before.owner(of: key)!
            let new = after.owner(of: key)!
            if old == "coord-2" {
                XCTAssertEqual(new, before.successor(of: key), "the successor takes over")
                moved += 1
            } else {
                XCTAssertEqual(new, old, "a key moved off a member that stayed")
            }
        }
        XCTAssertGreaterThan(moved, 0)
        XCTAssertEqual(after.inserting("coord-2"), before)
    }

    func testOnlyAliveMembersOfTheRoleOwnKeys() {
        let members = [
            TestMember(nodeID: "coord-1", nodeRole: .coordinator),
            TestMember(nodeID: "coord-2", nodeRole: .coordinator, isAlive: false),
            TestMember(nodeID: "edge-1", nodeRole: .edge),
            TestMember(nodeID: "call-1", nodeRole: .callsignal),
            TestMember(nodeID: "future-1", nodeRole: nil),
            TestMember(nodeID: "coord-3", nodeRole: .coordinator),
        ]
        let coordinators = OwnerRing(.coordinator, of: members)
        XCTAssertEqual(coordinators.members, ["coord-1", "coord-3"])
        XCTAssertEqual(coordinators.role, .coordinator)
        for key in keys.prefix(500) {
            let holders = coordinators.holders(of: key, count: 5)
            XCTAssertEqual(Set(holders), ["coord-1", "coord-3"])
        }
        XCTAssertEqual(OwnerRing(.edge, of: members).members, ["edge-1"])
        XCTAssertEqual(OwnerRing(.coordinator, of: members, where: { $0.nodeID != "coord-3" }).members, ["coord-1"])
        // Same ids, another role: another ring.
        XCTAssertNotEqual(OwnerRing(.edge, memberIDs: ["coord-1", "coord-3"]), coordinators)
    }

    func testClusterStatusMembersRouteByTheirRoleAndState() {
        func member(_ id: String, _ role: String, _ state: GossipMemberState) -> AdminMemberStatus {
            var m = AdminMemberStatus()
            m.id = id
            m.role = role
            m.state = state
            return m
        }
        let status = [
            member("edge-2", "edge", .alive), member("edge-1", "edge", .alive), member("edge-3", "edge", .suspect),
            member("edge-4", "edge", .dead), member("edge-5", "edge", .left), member("edge-6", "Edge", .alive),
            member("coord-1", "coordinator", .alive),
        ]
        XCTAssertEqual(OwnerRing(.edge, of: status).members, ["edge-1", "edge-2"])
        XCTAssertEqual(OwnerRing(.coordinator, of: status).members, ["coord-1"])
    }

    func testAnEmptyRingOwnsNothing() {
        let empty = ring([])
        XCTAssertTrue(empty.isEmpty)
        XCTAssertEqual(empty, ring(["", ""]))
        XCTAssertNil(empty.owner(of: "room-1"))
        XCTAssertNil(empty.owner(of: "room-1", avoiding: "coord-1"))
        XCTAssertNil(empty.owner(of: "room-1", loads: [:]))
        XCTAssertNil(empty.successor(of: "room-1"))
        XCTAssertEqual(empty.holders(of: "room-1", count: 2), [])
        XCTAssertFalse(empty.contains("coord-1"))
        XCTAssertNil(ring(["coord-1"]).successor(of: "room-1"))
    }

    func testAvoidingAMemberMovesItsKeysToTheirSuccessorUnlessItIsTheLast() {
        let ring = ring(["coord-1", "coord-2", "coord-3"])
        for key in keys.prefix(300) {
            let owner = ring.owner(of: key)!
            XCTAssertEqual(ring.owner(of: key, avoiding: owner), ring.successor(of: key))
            XCTAssertEqual(ring.owner(of: key, avoiding: "not-a-member"), owner)
        }
        XCTAssertEqual(self.ring(["coord-1"]).owner(of: "room-1", avoiding: "coord-1"), "coord-1")
    }

    func testLoadAwareChoiceFavoursTheLessLoadedAndMatchesPlainOwnershipAtEqualLoad() {
        let ring = OwnerRing(.edge, memberIDs: ["edge-1", "edge-2", "edge-3"])
        for key in keys.prefix(300) {
            XCTAssertEqual(ring.owner(of: key, loads: [:]), ring.owner(of: key))
            XCTAssertEqual(ring.owner(of: key, loads: ["edge-1": 4, "edge-2": 4, "edge-3": 4]), ring.owner(of: key))
        }
        var counts: [String: Int] = [:]
        for key in keys {
            counts[ring.owner(of: key, loads: ["edge-1": 9])!, default: 0] += 1
        }
        // Capacity 1/10 against 1 and 1: edge-1 wins about 1 in 21 keys.
        XCTAssertLessThan(counts["edge-1", default: 0], keys.count / 10)
        XCTAssertGreaterThan(counts["edge-2", default: 0], keys.count / 3)
        XCTAssertEqual(ring.owner(of: "room-1", loads: [:], avoiding: ring.owner(of: "room-1")).map(ring.contains), true)
        XCTAssertNotEqual(ring.owner(of: "room-1", loads: [:], avoiding: ring.owner(of: "room-1")), ring.owner(of: "room-1"))
    }
}
