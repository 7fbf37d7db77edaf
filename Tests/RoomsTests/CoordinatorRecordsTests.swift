import ReplicatedOwnership
import Rooms
import Routing
import ShowroomTesting
import ShowroomWire
import XCTest

/// The coordinator's records on ``ReplicatedStore``: writes, hand-overs, repairs and refusals
/// between coordinators as plain values, the batches carried by hand.
final class CoordinatorRecordsTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000
    typealias Store = ReplicatedStore<CoordinatorRecords>

    private func store(_ id: String, members: [String]) -> Store {
        let records = CoordinatorRecords(registry: RoomRegistry(), directory: ChannelDirectory(placementExpiryMs: 60_000, relayThreshold: 100))
        return Store(records, selfID: id, role: .coordinator, everyMemberKeys: [CoordinatorRecords.tablesKey], members: members)
    }

    /// Delivers `effects`' batches to `stores` (refused ones answered not held), and answers them
    /// at `from`; returns what was acknowledged.
    @discardableResult
    private func carry(_ effects: Store.Effects, from: String, to stores: inout [String: Store]) -> [UInt64] {
        var acknowledged = effects.acknowledged.map(\.write)
        for batch in effects.batches {
            var held = true
            for record in batch.records {
                var wire = record
                wire.from = from
                wire.changesOnly = !batch.isLatest
                if stores[batch.member]!.records.refusal(of: wire, selfID: batch.member, in: stores[batch.member]!.replication) != nil {
                    held = false
                } else {
                    _ = stores[batch.member]!.records.receive(wire, nowMs: t0)
                }
            }
            acknowledged += stores[from]!.batchAnswered(batch, held: held).acknowledged.map(\.write)
        }
        return acknowledged
    }

    /// The owner of a room among `members`.
    private func owner(of key: String, among members: [String]) -> String {
        Replication(selfID: members[0], role: .coordinator, scope: .ownerAndSuccessor, members: members).owner(of: key)
    }

    func testAnOwnersWriteReachesItsSuccessorAndIsAcknowledgedThenAHandOverCarriesRoomsAndTables() throws {
        let members = ["c1", "c2", "c3"]
        var stores = Dictionary(uniqueKeysWithValues: members.map { ($0, store($0, members: members)) })
        let owner = owner(of: "r", among: members)
        var writer = stores[owner]!
        writer.records.registry.mustCreate("r", nowMs: t0)
        let created = try XCTUnwrap(writer.records.registry.room("r"))
        let chat = try writer.records.registry.sendChat(Requests.chat("r", text: "hello"), nowMs: t0 + 1)
        let sends = CoordinatorRecords.sends(of: [RoomChange(room: created), chat], in: writer.replication)
        let successor = writer.replication.replicas(of: "r")
        XCTAssertEqual(Array(sends.keys), successor, "only the successor holds the room")
        XCTAssertTrue(sends[successor[0]]!.ownerWrite)
        let (write, effects) = writer.write("r", sends: sends.mapValues { (keys: CoordinatorRecords.keys(of: $0), records: [$0]) },
                                            isLatest: false)
        stores[owner] = writer
        XCTAssertEqual(carry(effects, from: owner, to: &stores), [write], "acknowledged once the successor holds it")
        XCTAssertEqual(stores[successor[0]]!.records.registry.messages(in: "r").map(\.text), ["hello"])

        // A placement goes to every coordinator, under the tables' key.
        var placement = RoomChannelPlacement()
        placement.channel = "r"
        placement.edgeID = "edge-a"
        placement.placedAtMs = t0
        _ = stores[owner]!.records.directory.merge([placement], nowMs: t0)
        var tables = RoomStateBatch()
        tables.placements = [placement]
        let others = members.filter { $0 != owner }
        let (tablesWrite, tablesEffects) = stores[owner]!.write(
            CoordinatorRecords.tablesKey, sends: Dictionary(uniqueKeysWithValues: others.map { ($0, (keys: [CoordinatorRecords.tablesKey], records: [tables])) }),
            isLatest: false)
        XCTAssertEqual(Set(tablesEffects.batches.map(\.member)), Set(others))
        XCTAssertEqual(carry(tablesEffects, from: owner, to: &stores), [tablesWrite])
        for other in others { XCTAssertEqual(stores[other]!.records.directory.placements.placements["r"]?.edgeID, "edge-a") }

    }

    func testAHandOverSendsANewcomerTheRoomsItHoldsAndTheTablesAndTheOldHolderForgetsWhatItNoLongerHolds() throws {
        // Grow the ring one member at a time until the room's holders change.
        var members = ["c1", "c2"]
        var stores = Dictionary(uniqueKeysWithValues: members.map { ($0, store($0, members: members)) })
        for id in members { stores[id]!.records.registry.mustCreate("r", nowMs: t0) }
        var ban = RoomBan()
        ban.channel = "r"
        ban.uid = 7
        ban.untilMs = t0 + 60_000
        for id in members { _ = stores[id]!.records.bans.merge([ban]) }
        var index = 3
        while Set(Replication(selfID: "c1", role: .coordinator, scope: .ownerAndSuccessor, members: members).holders(of: "r")) == ["c1", "c2"] {
            let id = "c\(index)"
            index += 1
            stores[id] = store(id, members: members + [id])
            members.append(id)
            let before = members.dropLast()
            for old in before {
                let effects = stores[old]!.membersChanged(to: members)
                carry(effects, from: old, to: &stores)
            }
            // Every newcomer gets the tables, with the ban.
            XCTAssertEqual(stores[id]!.records.bans.active(nowMs: t0).map(\.uid), [7], "newcomer \(id) got the tables")
            XCTAssertLessThan(index, 40, "some member takes the room over")
        }
        let holders = Replication(selfID: "c1", role: .coordinator, scope: .ownerAndSuccessor, members: members).holders(of: "r")
        for id in members {
            XCTAssertEqual(stores[id]!.records.registry.room("r") != nil, holders.contains(id), "\(id) holds the room iff it is a holder")
        }
    }

    func testCopiesThatMustBeRefusedAreAndTheNewerRoomIsSentBack() throws {
        let members = ["c1", "c2"]
        let owner = owner(of: "r", among: members)
        let other = members.first { $0 != owner }!
        var held = store(other, members: members)
        held.records.registry.mustCreate("r", nowMs: t0)
        let newer = try held.records.registry.sendChat(Requests.chat("r", text: "one"), nowMs: t0 + 1)

        // An owner's write from a coordinator not taken for the owner.
        var fromStranger = RoomStateBatch()
        fromStranger.from = "c9"
        fromStranger.ownerWrite = true
        fromStranger.rooms = [newer.room]
        XCTAssertEqual(held.records.refusal(of: fromStranger, selfID: other, in: held.replication)?.error.code, .unavailable)

        // An owner's write from an older record: refused, and the newer one named to send back.
        var stale = RoomStateBatch()
        stale.from = owner
        stale.ownerWrite = true
        var old = newer.room
        old.version -= 1
        old.name = "stale"
        stale.rooms = [old]
        let refusal = try XCTUnwrap(held.records.refusal(of: stale, selfID: other, in: held.replication))
        XCTAssertEqual(refusal.sendBack, ["r"])

        // Chat that would leave a gap, with a hostile number at the top of the range.
        var gap = RoomStateBatch()
        gap.from = owner
        gap.changesOnly = true
        var message = try XCTUnwrap(newer.message)
        message.sequence = .max
        gap.messages = [message]
        XCTAssertNotNil(held.records.refusal(of: gap, selfID: other, in: held.replication))

        // A plain copy is taken; a catch-up request naming too many members is refused.
        var copy = RoomStateBatch()
        copy.from = owner
        copy.rooms = [newer.room]
        XCTAssertNil(held.records.refusal(of: copy, selfID: other, in: held.replication))
        var ask = RoomStateBatch()
        ask.catchUp = true
        ask.from = owner
        ask.members = (0..<1_001).map { "c\($0)" }
        XCTAssertThrowsError(try held.records.catchUpPage(for: ask, selfID: other, members: members, pageRooms: 10))
        ask.members = members
        ask.from = "c9"
        XCTAssertThrowsError(try held.records.catchUpPage(for: ask, selfID: other, members: members, pageRooms: 10),
                             "an asker not seen among the members asks again later")
        ask.from = owner
        let page = try held.records.catchUpPage(for: ask, selfID: other, members: members, pageRooms: 10)
        XCTAssertEqual(page.batch.rooms.map(\.roomID), ["r"])
        XCTAssertEqual(page.batch.messages.map(\.text), ["one"])
    }

    func testAWriteWhoseReplicaLeftIsAnsweredOnlyByAnOwnerThatSeesMostOfTheCluster() {
        let members = ["c1", "c2"]
        let replication = Replication(selfID: "c1", role: .coordinator, scope: .ownerAndSuccessor, members: members)
        let owned = (0..<50).map { "room-\($0)" }.first { replication.owns($0) }!
        let notOwned = (0..<50).map { "room-\($0)" }.first { !replication.owns($0) }!
        let partial = { (key: String) in Replication.Acknowledged(write: 1, key: key, fullyReplicated: false) }
        XCTAssertTrue(CoordinatorRecords.mayAnswer(partial(owned), in: replication, seesMostOfTheCluster: true))
        XCTAssertFalse(CoordinatorRecords.mayAnswer(partial(owned), in: replication, seesMostOfTheCluster: false))
        XCTAssertFalse(CoordinatorRecords.mayAnswer(partial(notOwned), in: replication, seesMostOfTheCluster: true))
        XCTAssertTrue(CoordinatorRecords.mayAnswer(partial(CoordinatorRecords.tablesKey), in: replication, seesMostOfTheCluster: true))
        XCTAssertTrue(CoordinatorRecords.mayAnswer(
            Replication.Acknowledged(write: 1, key: notOwned, fullyReplicated: true), in: replication, seesMostOfTheCluster: false))
    }
}
