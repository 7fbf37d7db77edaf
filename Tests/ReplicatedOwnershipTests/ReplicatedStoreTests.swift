import ReplicatedOwnership
import Routing
import XCTest

/// A few stores that pass their effects to each other by hand: messages are delivered only when a
/// test says so, so each step of the protocol can be looked at.
private struct Members {
    var stores: [String: VersionedStore<String>]
    var memories: [String: MemoryPersistence<String>]
    /// Batches sent and not yet delivered, with their sender.
    var inFlight: [(from: String, batch: VersionedStore<String>.Batch)] = []
    var acknowledged: [String: [Replication.Acknowledged]] = [:]

    init(_ ids: [String]) {
        stores = Dictionary(uniqueKeysWithValues: ids.map { ($0, VersionedStore<String>(selfID: $0, role: .coordinator, members: ids)) })
        memories = Dictionary(uniqueKeysWithValues: ids.map { ($0, MemoryPersistence<String>()) })
    }

    mutating func carry(_ effects: VersionedStore<String>.Effects, from member: String) {
        try! memories[member]!.save(effects.persist)
        try! memories[member]!.delete(keys: effects.forget)
        acknowledged[member, default: []] += effects.acknowledged
        for batch in effects.batches { inFlight.append((member, batch)) }
    }

    mutating func write(_ value: String?, _ key: String, at member: String) -> UInt64 {
        let (id, effects) = stores[member]!.write(value, for: key)
        carry(effects, from: member)
        return id
    }

    /// Delivers every message in flight (and those they cause); a message to a member that is not
    /// running is answered as failed.
    mutating func deliverAll() {
        while !inFlight.isEmpty {
            let (from, batch) = inFlight.removeFirst()
            let held = stores[batch.member] != nil
            if held { carry(stores[batch.member]!.receive(batch.records), from: batch.member) }
            if stores[from] != nil { carry(stores[from]!.batchAnswered(batch, held: held), from: from) }
        }
    }

    mutating func membersChanged(to alive: [String]) {
        for id in alive.sorted() where stores[id] != nil {
            carry(stores[id]!.membersChanged(to: alive), from: id)
        }
    }

    func holders(of key: String) -> [String] { stores.values.first!.replication.holders(of: key) }
}

final class ReplicatedStoreTests: XCTestCase {
    private let ids = ["c1", "c2", "c3", "c4"]

    func testOwnerAndSuccessorAreTheFirstTwoInRendezvousOrderWhateverTheInputOrder() {
        let a = Replication(selfID: "c1", role: .coordinator, scope: .ownerAndSuccessor, members: ids)
        let b = Replication(selfID: "c3", role: .coordinator, scope: .ownerAndSuccessor, members: ids.reversed())
        for key in (0..<50).map({ "room-\($0)" }) {
            let expected = Array(RendezvousHashing.ranked(key: key, among: ids).prefix(2))
            XCTAssertEqual(a.holders(of: key), expected)
            XCTAssertEqual(b.holders(of: key), expected)
            XCTAssertEqual(a.owner(of: key), expected[0])
            XCTAssertEqual(a.owns(key), expected[0] == "c1")
            XCTAssertEqual(a.holds(key), expected.contains("c1"))
        }
        let everyone = Replication(selfID: "c2", role: .coordinator, scope: .everyMember, members: ids)
        XCTAssertEqual(Set(everyone.holders(of: "bans")), Set(ids))
        XCTAssertEqual(Set(everyone.replicas(of: "bans")), ["c1", "c3", "c4"])
    }

    func testAMemberAloneOwnsEverythingAndAcknowledgesAtOnce() {
        var store = VersionedStore<String>(selfID: "solo", role: .coordinator)
        let (id, effects) = store.write("v", for: "k")
        XCTAssertEqual(effects.acknowledged, [.init(write: id, key: "k", fullyReplicated: true)])
        XCTAssertTrue(effects.send.isEmpty)
        XCTAssertEqual(store["k"], "v")
    }

    func testAWriteIsAcknowledgedOnlyAfterTheReplicaHoldsIt() throws {
        var members = Members(ids)
        let key = "room-7"
        let holders = members.holders(of: key)
        let (owner, successor) = (holders[0], holders[1])
        let id = members.write("live", key, at: owner)
        XCTAssertEqual(members.acknowledged[owner, default: []], [], "nothing acknowledged before the replica answered")
        XCTAssertEqual(members.inFlight.map(\.batch.member), [successor], "the write goes to the successor only")
        XCTAssertNil(members.stores[successor]![key])
        members.deliverAll()
        XCTAssertEqual(members.stores[successor]![key], "live")
        XCTAssertEqual(try members.memories[successor]!.loadRecords().map(\.value), ["live"], "the replica persisted it")
        XCTAssertEqual(members.acknowledged[owner], [.init(write: id, key: key, fullyReplicated: true)])
        for other in ids where !holders.contains(other) { XCTAssertNil(members.stores[other]![key]) }
    }

    func testAReplicaThatFailsIsOwedTheWriteAndOneThatLeavesIsNoted() {
        var members = Members(ids)
        let key = "room-9"
        let holders = members.holders(of: key)
        let id = members.write("a", key, at: holders[0])
        XCTAssertNil(members.stores[holders[0]]!.batchAnswered(
            .init(member: "stranger", keys: [key], records: [], writes: [id]), held: true).acknowledged.first,
                     "an answer from a member that was not asked is ignored")
        let successor = members.stores[holders[1]]
        members.stores[holders[1]] = nil  // the successor stops answering before the message arrives
        members.deliverAll()
        XCTAssertEqual(members.acknowledged[holders[0], default: []], [], "a write a live replica missed is not acknowledged")
        XCTAssertEqual(members.stores[holders[0]]!.replication.owed, [holders[1]: [key]])
        // It answers again: the repair reaches it and acknowledges the write.
        members.stores[holders[1]] = successor
        let repair = members.stores[holders[0]]!.repairs().batches
        XCTAssertEqual(repair.map(\.member), [holders[1]])
        _ = members.stores[holders[1]]!.receive(repair[0].records)
        XCTAssertEqual(members.stores[holders[1]]![key], "a")
        XCTAssertEqual(members.stores[holders[0]]!.batchAnswered(repair[0], held: true).acknowledged,
                       [.init(write: id, key: key, fullyReplicated: true)])

        // A write whose replica leaves the membership before answering is acknowledged on the change.
        var again = Members(ids)
        let second = again.write("b", key, at: holders[0])
        again.inFlight.removeAll()  // lost with the member
        again.stores[holders[1]] = nil
        again.membersChanged(to: ids.filter { $0 != holders[1] })
        XCTAssertEqual(again.acknowledged[holders[0]]?.first, .init(write: second, key: key, fullyReplicated: false))
    }

    func testHandOverWhenMembersComeAndGo() {
        var members = Members(ids)
        let keys = (0..<40).map { "room-\($0)" }
        for key in keys { _ = members.write("v-\(key)", key, at: members.holders(of: key)[0]) }
        members.deliverAll()
        // c5 joins: the keys it now holds reach it from their current holders.
        members.stores["c5"] = VersionedStore<String>(selfID: "c5", role: .coordinator, members: ids + ["c5"])
        members.memories["c5"] = MemoryPersistence<String>()
        members.membersChanged(to: ids + ["c5"])
        members.deliverAll()
        for key in keys {
            let holders = members.holders(of: key)
            for holder in holders { XCTAssertEqual(members.stores[holder]![key], "v-\(key)", "\(holder) holds \(key)") }
            for other in members.stores.keys where !holders.contains(other) {
                XCTAssertNil(members.stores[other]![key], "\(other) released \(key)")
            }
        }
        XCTAssertTrue(keys.contains { members.holders(of: $0).contains("c5") }, "the newcomer holds some keys")
        // c1 dies: every key it held keeps two holders with the value.
        members.stores["c1"] = nil
        let alive = ["c2", "c3", "c4", "c5"]
        members.membersChanged(to: alive)
        members.deliverAll()
        for key in keys {
            let holders = members.stores["c2"]!.replication.holders(of: key)
            XCTAssertFalse(holders.contains("c1"))
            for holder in holders { XCTAssertEqual(members.stores[holder]![key], "v-\(key)", "\(holder) holds \(key) after c1 died") }
        }
    }

    func testARestartedOwnerCatchesUpOnWritesItMissed() throws {
        var members = Members(ids)
        let key = "room-3"
        let holders = members.holders(of: key)
        let (owner, successor) = (holders[0], holders[1])
        _ = members.write("before", key, at: owner)
        members.deliverAll()
        // The owner dies; its successor takes the key over and writes twice more.
        let persisted = members.memories[owner]!
        members.stores[owner] = nil
        let rest = ids.filter { $0 != owner }
        members.membersChanged(to: rest)
        members.deliverAll()
        XCTAssertTrue(members.stores[successor]!.replication.owns(key))
        _ = members.write("during-1", key, at: successor)
        _ = members.write("during-2", key, at: successor)
        members.deliverAll()
        // It restarts from its own persisted copy, stale by two writes, and is handed the rest.
        var restarted = VersionedStore<String>(selfID: owner, role: .coordinator, members: ids)
        restarted.load(try persisted.loadRecords())
        XCTAssertEqual(restarted[key], "before")
        members.stores[owner] = restarted
        members.membersChanged(to: ids)
        members.deliverAll()
        XCTAssertEqual(members.stores[owner]![key], "during-2")
        XCTAssertEqual(members.stores[owner]!.entries[key]?.version, 3)
        // Owning it again, its next write continues the versions.
        _ = members.write("after", key, at: owner)
        members.deliverAll()
        XCTAssertEqual(members.stores[successor]![key], "after")
        XCTAssertEqual(members.stores[successor]!.entries[key]?.version, 4)
    }

    func testTwoWritersRacingOnOneKeyConvergeOnOneValue() {
        // While the membership settles two members may both believe they own a key.
        var a = VersionedStore<String>(selfID: "c1", role: .coordinator, members: ["c1"])
        var b = VersionedStore<String>(selfID: "c2", role: .coordinator, members: ["c2"])
        let (_, fromA) = a.write("from-c1", for: "k")
        let (_, fromB) = b.write("from-c2", for: "k")
        XCTAssertTrue(fromA.send.isEmpty && fromB.send.isEmpty)
        // They meet: each hands the other what it holds, in either order.
        let handA = a.membersChanged(to: ["c1", "c2"])
        let handB = b.membersChanged(to: ["c1", "c2"])
        _ = b.receive(handA.send["c2"] ?? [])
        _ = a.receive(handB.send["c1"] ?? [])
        XCTAssertEqual(a["k"], b["k"])
        XCTAssertEqual(a["k"], "from-c2", "equal versions: the greater writer id wins on both")
        // A higher version beats a greater writer.
        let (_, later) = a.write("c1-again", for: "k")
        _ = b.receive(later.send["c2"] ?? [])
        XCTAssertEqual(b["k"], "c1-again")
        // A stale copy arriving late changes nothing.
        XCTAssertTrue(b.receive([ReplicatedEntry(key: "k", value: "stale", version: 1, writer: "c9")]).persist.isEmpty)
        XCTAssertEqual(b["k"], "c1-again")
    }

    func testAWriterRestartedWithNothingLearnsWhatItsReplicaKeptAndWritesPastIt() {
        var owner = VersionedStore<String>(selfID: "c1", role: .coordinator, members: ["c1", "c2"])
        var replica = VersionedStore<String>(selfID: "c2", role: .coordinator, members: ["c1", "c2"])
        let key = (0..<100).map { "k\($0)" }.first { owner.replication.owns($0) }!
        _ = replica.receive(owner.write("before", for: key).effects.send["c2"] ?? [])
        // Restarted with nothing, faster than anyone noticed: its next write reuses version 1.
        var restarted = VersionedStore<String>(selfID: "c1", role: .coordinator, members: ["c1", "c2"])
        let anew = restarted.write("anew", for: key).effects.send["c2"] ?? []
        XCTAssertTrue(replica.receive(anew).persist.isEmpty, "a tie: the replica keeps what it holds")
        let kept = replica.keptOver(anew)
        XCTAssertEqual(kept.map(\.value), ["before"])
        XCTAssertTrue(replica.keptOver(owner.entries.values.map { $0 }).isEmpty, "nothing for a writer that is not behind")
        XCTAssertEqual(restarted.receiveKeptOver(kept).persist.count, 1)
        XCTAssertEqual(restarted[key], "before")
        XCTAssertTrue(restarted.receiveKeptOver([ReplicatedEntry(key: key, value: "older", version: 0, writer: "c9")]).persist.isEmpty)
        // Its next write goes past it, and the replica takes it.
        restarted.markChanged(key)
        let past = restarted.flush { _ in "anew" }
        XCTAssertEqual(past.send["c2"]?.map(\.version), [2])
        _ = replica.receive(past.send["c2"] ?? [])
        XCTAssertEqual(replica[key], "anew")
    }

    func testAPrecedenceOfValuesDecidesAMergeBeforeTheVersions() {
        // "…!" says something the other value must yield to, whatever its version.
        let precedence: VersionedEntries<String>.Precedence = { value, other in
            value.hasSuffix("!") == other.hasSuffix("!") ? nil : value.hasSuffix("!")
        }
        var store = VersionedStore<String>(selfID: "c2", role: .coordinator, members: ["c1", "c2"], precedence: precedence)
        let key = "k"
        let ended = ReplicatedEntry(key: key, value: "over!", version: 2, writer: "c1")
        let newer = ReplicatedEntry(key: key, value: "on", version: 9, writer: "c1")
        XCTAssertEqual(store.receive([ended]).persist, [ended])
        XCTAssertTrue(store.receive([newer]).persist.isEmpty, "a higher version does not replace what must win")
        XCTAssertEqual(store[key], "over!")
        XCTAssertEqual(store.keptOver([newer]), [ended], "the writer learns what it must yield to")
        XCTAssertTrue(store.receiveKeptOver([newer]).persist.isEmpty)
        var writer = VersionedStore<String>(selfID: "c1", role: .coordinator, members: ["c1", "c2"], precedence: precedence)
        _ = writer.receive([newer])
        XCTAssertEqual(writer.receiveKeptOver([ended]).persist, [ended])
        XCTAssertEqual(writer[key], "over!")
        // Where the values say nothing, the versions decide as before; a deletion is no value.
        let later = ReplicatedEntry(key: key, value: "later!", version: 10, writer: "c1")
        XCTAssertEqual(store.receive([later]).persist, [later])
        let deleted = ReplicatedEntry<String>(key: key, value: nil, version: 11, writer: "c1")
        XCTAssertEqual(store.receive([deleted]).persist, [deleted])
        XCTAssertTrue(store.prevails(newer, over: ended) == false && store.prevails(ended, over: newer))
    }

    func testADeletionIsATombstoneAStaleReplicaCannotRevive() {
        var members = Members(ids)
        let key = "call-1"
        let owner = members.holders(of: key)[0]
        _ = members.write("ringing", key, at: owner)
        members.deliverAll()
        _ = members.write(nil, key, at: owner)
        members.deliverAll()
        let successor = members.holders(of: key)[1]
        XCTAssertNil(members.stores[successor]![key])
        _ = members.stores[successor]!.receive([ReplicatedEntry(key: key, value: "ringing", version: 1, writer: owner)])
        XCTAssertNil(members.stores[successor]![key])
    }

    func testChangedKeysAreWrittenOnAFlushInOneBatchPerMemberAndAcknowledgedByItsAnswer() {
        let ids = ["c1", "c2", "c3"]
        var store = VersionedStore<String>(selfID: "c1", role: .callsignal, members: ids)
        let replication = store.replication
        let owned = (0..<200).map { "uid/\($0)" }.filter { replication.owns($0) }
        let foreign = (0..<200).map { "uid/\($0)" }.first { !replication.owns($0) }!
        XCTAssertGreaterThan(owned.count, 4)
        var values = Dictionary(uniqueKeysWithValues: owned.map { ($0, "v1") })
        values[foreign] = "not mine"
        for key in owned.reversed() + [foreign] { store.markChanged(key) }
        XCTAssertTrue(store.isFlushDue)

        let effects = store.flush { values[$0] }
        XCTAssertFalse(store.isFlushDue)
        XCTAssertEqual(effects.persist.map(\.key), owned.sorted(), "every owned key once, in key order; the foreign one not")
        let batches = effects.batches
        XCTAssertEqual(batches.map(\.member), batches.map(\.member).sorted())
        XCTAssertEqual(Set(batches.map(\.member)), Set(owned.flatMap { replication.replicas(of: $0) }))
        for batch in batches {
            XCTAssertEqual(batch.records.map(\.key), owned.sorted().filter { replication.replicas(of: $0) == [batch.member] })
            XCTAssertEqual(batch.writes.count, batch.records.count)
        }
        XCTAssertNil(store[foreign])

        // An unchanged value is not written again; a key not marked is not looked at.
        store.markChanged(owned[0])
        values[owned[1]] = "v2"
        XCTAssertTrue(store.flush { values[$0] }.persist.isEmpty)

        // Each batch's answer acknowledges its writes, and only those.
        var acknowledged: [UInt64] = []
        let first = batches[0]
        acknowledged += store.batchAnswered(first, held: true).acknowledged.map(\.write)
        XCTAssertEqual(acknowledged.sorted(), first.writes.sorted())
        XCTAssertTrue(store.batchAnswered(first, held: true).acknowledged.isEmpty, "a repeated answer acknowledges nothing")
        // A failed batch acknowledges nothing: its keys are owed to the member, and the next
        // flush sends them again (the latest of each); that answer acknowledges the writes.
        for batch in batches.dropFirst() {
            XCTAssertTrue(store.batchAnswered(batch, held: false).acknowledged.isEmpty, "a failed batch acknowledges nothing")
            XCTAssertEqual(store.replication.owed[batch.member], Set(batch.records.map(\.key)))
        }
        XCTAssertTrue(store.isFlushDue, "repairs are due")
        let repairs = store.flush { values[$0] }.batches
        XCTAssertEqual(repairs.map(\.member), batches.dropFirst().map(\.member))
        XCTAssertTrue(store.flush { values[$0] }.batches.isEmpty, "no second repair while one is unanswered")
        for (repair, batch) in zip(repairs, batches.dropFirst()) {
            XCTAssertEqual(repair.records.map(\.key), batch.records.map(\.key))
            XCTAssertTrue(repair.writes.isEmpty)
            let done = store.batchAnswered(repair, held: true).acknowledged
            XCTAssertEqual(done.map(\.write).sorted(), batch.writes.sorted())
            XCTAssertTrue(done.allSatisfy(\.fullyReplicated))
        }
        XCTAssertTrue(store.replication.pendingWrites.isEmpty)
        XCTAssertTrue(store.replication.owed.isEmpty)
    }

    func testATombstoneIsDroppedOnceItIsOldEnoughAndALiveValueNever() {
        var store = VersionedStore<String>(selfID: "solo", role: .callsignal)
        _ = store.write("v", for: "a")
        _ = store.write(nil, for: "a")
        _ = store.receive([ReplicatedEntry(key: "b", value: nil, version: 3, writer: "other")])
        _ = store.write("live", for: "c")
        XCTAssertEqual(store.tombstoneCount, 2)
        XCTAssertTrue(store.dropTombstones(olderThanMs: 60_000, nowMs: 1_000).forget.isEmpty, "first seen now")
        XCTAssertTrue(store.dropTombstones(olderThanMs: 60_000, nowMs: 60_999).forget.isEmpty)
        _ = store.write("back", for: "a")
        XCTAssertEqual(store.dropTombstones(olderThanMs: 60_000, nowMs: 61_000).forget, ["b"], "a revived key is no tombstone")
        XCTAssertEqual(store.tombstoneCount, 0)
        XCTAssertNil(store.entries["b"])
        XCTAssertEqual(store["a"], "back")
        XCTAssertEqual(store["c"], "live")
        // A copy of the deletion arriving after it was forgotten is a tombstone again, aged anew.
        _ = store.receive([ReplicatedEntry(key: "b", value: nil, version: 3, writer: "other")])
        XCTAssertTrue(store.dropTombstones(olderThanMs: 60_000, nowMs: 200_000).forget.isEmpty)
        XCTAssertEqual(store.dropTombstones(olderThanMs: 60_000, nowMs: 260_000).forget, ["b"])
    }
}
