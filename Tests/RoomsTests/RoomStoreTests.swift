import Foundation
import GRDB
import ReplicatedOwnership
import RoomStore
import Rooms
import Routing
import ShowroomWire
import ShowroomTesting
import XCTest

final class RoomStoreTests: XCTestCase {
    let t0: Int64 = 1_700_000_000_000
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("room-store-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A state with something of every kind in it.
    private func sampleState() throws -> (registry: RoomRegistry, bans: [RoomBan], placements: [RoomChannelPlacement], sequences: [RoomChannelSequence]) {
        var registry = RoomRegistry()
        registry.mustCreate("alpha", nowMs: t0)
        registry.mustCreate("beta", owner: 9, channel: "beta stage", nowMs: t0 + 1)
        _ = try registry.join(Requests.join("alpha", uid: 30), nowMs: t0 + 2)
        for text in ["one", "two", "drei €"] { _ = try registry.sendChat(Requests.chat("alpha", text: text), nowMs: t0 + 3) }

        var bans = BanList()
        var ban = RoomBan()
        ban.channel = "alpha"
        ban.uid = 4_000_000_000
        ban.privileges = [1, 2]
        ban.untilMs = t0 + 60_000
        bans.add(ban)
        // The same channel and uid from one address only: another ban, stored beside it.
        ban.ip = "10.0.0.5"
        ban.privileges = [3]
        bans.add(ban)

        var table = PlacementTable()
        _ = try table.place(channel: "alpha", edges: OwnerRing(.edge, memberIDs: ["edge-a"]), loads: [:], avoiding: nil, nowMs: t0)

        var sequencer = ChannelEventSequencer()
        var activity = RoomChannelActivity()
        activity.channel = "alpha"
        _ = sequencer.number(activity, edge: "edge-a", nowMs: t0)
        _ = sequencer.number(activity, edge: "edge-a", nowMs: t0)

        return (registry, bans.active(nowMs: t0), Array(table.placements.values), sequencer.sequences)
    }

    func testRoundTripThroughAFileAndReopen() throws {
        let path = directory.appendingPathComponent("nested/dir/rooms.sqlite").path
        let state = try sampleState()
        let rooms = state.registry.rooms.values.sorted { $0.roomID < $1.roomID }
        let messages = state.registry.messages(in: "alpha")
        do {
            let store = try RoomStore(path: path)
            try store.save(rooms: rooms)
            try store.save(messages: messages)
            try store.save(bans: state.bans)
            try store.save(placements: state.placements)
            try store.save(sequences: state.sequences)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "the directories and file are created")

        let reopened = try RoomStore(path: path)
        let batch = try reopened.load()
        XCTAssertEqual(batch.rooms, rooms)
        XCTAssertEqual(batch.messages, messages)
        XCTAssertEqual(batch.bans, state.bans)
        XCTAssertEqual(batch.placements, state.placements)
        XCTAssertEqual(batch.sequences, state.sequences)

        // A registry restored from the store answers as the one that wrote it.
        var restored = RoomRegistry()
        _ = restored.merge(rooms: batch.rooms, messages: batch.messages)
        XCTAssertEqual(restored.rooms, state.registry.rooms)
        XCTAssertEqual(try restored.history(Requests.history("alpha")).messages.map(\.text), ["one", "two", "drei €"])
    }

    func testBansStoredBeforeAddressesExistedAreLoadedAfterTheUpgrade() throws {
        let path = directory.appendingPathComponent("v1.sqlite").path
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var old = RoomBan()
        old.channel = "alpha"
        old.uid = 7
        old.privileges = [1]
        old.untilMs = t0 + 60_000
        do {
            // The first schema's bans table, as a store written before address bans left it.
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
                try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v1: rooms, chat messages, bans, placements, channel sequences')")
                for table in ["rooms (room_id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL, state INTEGER NOT NULL, record BLOB NOT NULL)",
                              "chat_messages (room_id TEXT NOT NULL, sequence INTEGER NOT NULL, record BLOB NOT NULL, PRIMARY KEY (room_id, sequence))",
                              "bans (channel TEXT NOT NULL, uid INTEGER NOT NULL, record BLOB NOT NULL, PRIMARY KEY (channel, uid))",
                              "placements (channel TEXT PRIMARY KEY, record BLOB NOT NULL)",
                              "channel_sequences (channel TEXT PRIMARY KEY, record BLOB NOT NULL)"] {
                    try db.execute(sql: "CREATE TABLE " + table)
                }
                try db.execute(sql: "INSERT INTO bans (channel, uid, record) VALUES (?, ?, ?)", arguments: ["alpha", 7, try old.serializedData()])
            }
        }
        let store = try RoomStore(path: path)
        XCTAssertEqual(try store.load().bans, [old])
        var fromThere = old
        fromThere.ip = "2001:db8::1"
        try store.save(bans: [fromThere])
        XCTAssertEqual(try store.load().bans, [old, fromThere], "an address ban beside the one for every address")
        try store.delete(bans: [old])
        XCTAssertEqual(try store.load().bans, [fromThere])
    }

    func testUpsertsReplaceRecords() throws {
        let store = try RoomStore.inMemory()
        var registry = RoomRegistry()
        let room = registry.mustCreate("r", nowMs: t0)
        try store.save(rooms: [room])
        let joined = try registry.join(Requests.join("r", uid: 5), nowMs: t0 + 1).room
        try store.save(rooms: [joined])
        XCTAssertEqual(try store.load().rooms, [joined])

        var sequence = RoomChannelSequence()
        sequence.channel = "r"
        sequence.lastSequence = 1
        try store.save(sequences: [sequence])
        sequence.lastSequence = 2
        try store.save(sequences: [sequence])
        XCTAssertEqual(try store.load().sequences, [sequence])
    }

    func testDeletes() throws {
        let store = try RoomStore.inMemory()
        let state = try sampleState()
        try store.save(rooms: Array(state.registry.rooms.values))
        try store.save(messages: state.registry.messages(in: "alpha"))
        try store.save(bans: state.bans)
        try store.save(placements: state.placements)
        try store.save(sequences: state.sequences)

        try store.delete(messages: [(roomID: "alpha", sequence: 2)])
        XCTAssertEqual(try store.load().messages.map(\.sequence), [1, 3])

        try store.delete(roomIDs: ["alpha"])
        let afterRoom = try store.load()
        XCTAssertEqual(afterRoom.rooms.map(\.roomID), ["beta"])
        XCTAssertTrue(afterRoom.messages.isEmpty, "a room's messages go with it")

        try store.delete(bans: state.bans)
        try store.delete(placementsOf: ["alpha"])
        try store.delete(sequencesOf: ["alpha"])
        let empty = try store.load()
        XCTAssertTrue(empty.bans.isEmpty)
        XCTAssertTrue(empty.placements.isEmpty)
        XCTAssertTrue(empty.sequences.isEmpty, "a pruned channel's numbers are deleted")
    }

    func testPersistAppliesRegistryChanges() throws {
        let store = try RoomStore.inMemory()
        var registry = RoomRegistry(settings: RoomSettings(chatHistoryKept: 2))
        var generator = SeededGenerator(seed: 3)
        try store.persist([try registry.create(Requests.create(id: "r"), nowMs: t0, using: &generator)])
        for index in 1...4 {
            try store.persist([try registry.sendChat(Requests.chat("r", text: "m\(index)"), nowMs: t0 + Int64(index))])
        }
        var batch = try store.load()
        XCTAssertEqual(batch.messages.map(\.sequence), [3, 4], "trimmed messages are deleted")
        XCTAssertEqual(batch.rooms, [try XCTUnwrap(registry.room("r"))])

        try store.persist([try registry.close(Requests.close("r", uid: 7), byAdmin: false, nowMs: t0 + 10)])
        try store.persist(registry.tick(nowMs: t0 + 10 + 10 * 60_000))
        batch = try store.load()
        XCTAssertTrue(batch.rooms.isEmpty, "a purged room is deleted")
        XCTAssertTrue(batch.messages.isEmpty)
    }

    func testAsAReplicasPersistenceItSavesWhatACopyBroughtAndForgetsRoomsHeldNoLonger() throws {
        let store: any ReplicaPersistence<RoomStateBatch> = try RoomStore.inMemory()
        let state = try sampleState()
        var brought = RoomStateBatch()
        brought.rooms = state.registry.rooms.values.sorted { $0.roomID < $1.roomID }
        brought.messages = state.registry.messages(in: "alpha")
        brought.placements = state.placements
        brought.sequences = state.sequences
        var tables = RoomStateBatch()
        tables.bans = state.bans
        try store.save([brought, tables])
        var loaded = try XCTUnwrap(store.loadRecords().first)
        XCTAssertEqual(loaded.rooms, brought.rooms)
        XCTAssertEqual(loaded.messages, brought.messages)
        XCTAssertEqual(loaded.placements, state.placements)
        XCTAssertEqual(loaded.sequences, state.sequences)
        XCTAssertEqual(loaded.bans, state.bans)

        // A placement without an edge is a removal; the rooms of keys held no longer go with their chat.
        var removal = state.placements[0]
        removal.edgeID = ""
        var change = RoomStateBatch()
        change.placements = [removal]
        try store.save([change])
        try store.delete(keys: ["alpha", CoordinatorRecords.tablesKey])
        loaded = try XCTUnwrap(store.loadRecords().first)
        XCTAssertEqual(loaded.placements, [])
        XCTAssertEqual(loaded.rooms.map(\.roomID), ["beta"])
        XCTAssertEqual(loaded.messages, [])
        XCTAssertEqual(loaded.bans, state.bans, "the tables' key deletes nothing")
    }

    func testUnusablePathIsAnInternalErrorNamingIt() throws {
        let blocker = directory.appendingPathComponent("file")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: blocker)
        let path = blocker.appendingPathComponent("rooms.sqlite").path
        let error = assertThrows(.internal) { () throws(ShowroomError) in try RoomStore(path: path) }
        XCTAssertTrue(error?.message.contains(path) == true, error?.message ?? "")
    }

    func testCorruptRecordIsReportedWithItsKey() throws {
        let path = directory.appendingPathComponent("rooms.sqlite").path
        let store = try RoomStore(path: path)
        var registry = RoomRegistry()
        try store.save(rooms: [registry.mustCreate("good", nowMs: t0)])
        var bad = registry.mustCreate("bad", nowMs: t0)
        bad.name = "will be overwritten"
        try store.save(rooms: [bad])
        // Corrupt the record behind the store's back, as a broken disk would.
        try corrupt(path: path, roomID: "bad")
        let error = assertThrows(.internal) { () throws(ShowroomError) in try store.load() }
        XCTAssertTrue(error?.message.contains("'bad'") == true && error?.message.contains(path) == true, error?.message ?? "")
    }

    private func corrupt(path: String, roomID: String) throws {
        let raw = try DatabaseQueue(path: path)
        try raw.write { db in
            try db.execute(sql: "UPDATE rooms SET record = x'ffffffff' WHERE room_id = ?", arguments: [roomID])
        }
    }
}
