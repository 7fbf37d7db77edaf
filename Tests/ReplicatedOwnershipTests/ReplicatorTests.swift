import ReplicatedOwnership
import Routing
import XCTest

/// The batches of a record kind that is not held in the replicator (the coordinator's rooms):
/// writes that carry only what changed, repairs and hand-overs that carry whole records.
final class ReplicatorTests: XCTestCase {
    private let ids = ["c1", "c2", "c3"]

    /// A key owned by `owner` whose successor is `successor`, among `ids`.
    private func key(ownedBy owner: String, in ring: OwnerRing) -> String {
        (0..<500).map { "room-\($0)" }.first { ring.owner(of: $0) == owner }!
    }

    func testAChangeOnlyWriteHeldDoesNotSettleAnEarlierChangeTheMemberMissed() throws {
        var replicator = Replicator<String>(selfID: "c1", role: .coordinator, members: ids)
        let key = key(ownedBy: "c1", in: replicator.replication.ring)
        let successor = replicator.replication.replicas(of: key)[0]
        let first = replicator.write(key, sends: [successor: (keys: [key], records: ["message 1"])], isLatest: false)
        XCTAssertTrue(replicator.batchAnswered(first.effects.batches[0], held: false).isEmpty)
        XCTAssertEqual(replicator.replication.owed[successor], [key])
        let second = replicator.write(key, sends: [successor: (keys: [key], records: ["message 2"])], isLatest: false)
        XCTAssertEqual(replicator.batchAnswered(second.effects.batches[0], held: true).map(\.write), [second.write],
                       "the second write is held by the successor")
        XCTAssertEqual(replicator.replication.owed[successor], [key], "message 1 is still owed: a change is not the whole record")

        // The repair carries the whole record; held, it answers the first write too.
        let repairs = replicator.repairs { keys in keys.map { "whole \($0)" } }
        XCTAssertEqual(repairs.batches.map(\.records), [["whole \(key)"]])
        XCTAssertEqual(replicator.batchAnswered(repairs.batches[0], held: true).map(\.write), [first.write])
        XCTAssertNil(replicator.replication.owed[successor])
    }

    func testAFailedRepairIsSentAgainOnTheNextRound() {
        var replicator = Replicator<String>(selfID: "c1", role: .coordinator, members: ids)
        let key = key(ownedBy: "c1", in: replicator.replication.ring)
        let successor = replicator.replication.replicas(of: key)[0]
        replicator.owe([key], to: successor)
        let repair = replicator.repairs { $0 }
        XCTAssertEqual(repair.batches.map(\.member), [successor])
        XCTAssertTrue(replicator.repairs { $0 }.batches.isEmpty, "one repair in flight per member")
        _ = replicator.batchAnswered(repair.batches[0], held: false)
        XCTAssertEqual(replicator.repairs { $0 }.batches.map(\.keys), [[key]], "refused: owed, and sent again")
    }

    func testAHandOverGoesInSlicesReadBeforeTheReleasedKeysAreDropped() {
        var replicator = Replicator<String>(selfID: "c1", role: .coordinator, members: ["c1"], maxKeysPerBatch: 3)
        let keys = (0..<10).map { "room-\($0)" }
        var read: [[String]] = []
        let effects = replicator.membersChanged(to: ["c1", "c2"], holding: keys) { slice in
            read.append(slice)
            return slice
        }
        let toC2 = effects.batches.filter { $0.member == "c2" }
        XCTAssertEqual(toC2.flatMap(\.keys).sorted(), keys.sorted(), "c2 holds every key of two members")
        XCTAssertTrue(toC2.allSatisfy { $0.keys.count <= 3 && $0.isLatest && $0.writes.isEmpty })
        XCTAssertEqual(read.flatMap { $0 }.sorted(), keys.sorted())
        XCTAssertTrue(effects.released.isEmpty, "two members hold every key: c1 releases none")
        let third = replicator.membersChanged(to: ["c1", "c2", "c3"], holding: keys) { $0 }
        XCTAssertEqual(Set(third.released), Set(keys.filter { !replicator.replication.holds($0) }))
        XCTAssertFalse(third.released.isEmpty, "with three, c1 holds some keys no longer")
    }
}
