import Foundation
import GRDB
import ReplicatedOwnership
import Rooms
import ShowroomWire

/// Where a coordinator keeps its rooms, chat, bans, channel placements and channel event numbers
/// across restarts: an embedded SQLite database.
///
/// Each record is stored as its protobuf serialization next to its key columns, so the contract's
/// types can grow without a schema change; the schema itself grows through migrations. Writes are
/// upserts. Safe to use from any thread (the database queue serializes access); calls block, so the
/// shell makes them on its own thread, never on Swift's cooperative pool.
public final class RoomStore: Sendable {
    /// The database file, or ":memory:".
    public let path: String
    private let queue: DatabaseQueue

    /// Opens (or creates, with its directories) the database at `path`, in WAL mode, and brings
    /// its schema up to date.
    ///
    /// - Throws: `INTERNAL` naming the path and what failed.
    public init(path: String) throws(ShowroomError) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
        } catch {
            throw .internal("room store \(path): cannot create directory \(directory): \(error)")
        }
        var configuration = Configuration()
        configuration.journalMode = .wal
        // Another process holding the file (a second coordinator started on the same data
        // directory) makes writes wait a little before failing.
        configuration.busyMode = .timeout(5)
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw .internal("room store \(path): cannot open the database: \(error)")
        }
        try migrate()
    }

    private init(inMemory queue: DatabaseQueue) throws(ShowroomError) {
        path = ":memory:"
        self.queue = queue
        try migrate()
    }

    /// A store that lives in memory only, for tests and coordinators run without a data directory.
    public static func inMemory() throws(ShowroomError) -> RoomStore {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue()
        } catch {
            throw .internal("room store :memory:: cannot open an in-memory database: \(error)")
        }
        return try RoomStore(inMemory: queue)
    }

    private func migrate() throws(ShowroomError) {
        do {
            try Self.migrator.migrate(queue)
        } catch {
            throw .internal("room store \(path): cannot bring the schema up to date: \(error)")
        }
    }

    /// The schema, one migration per change; never edit a registered migration, add one.
    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: rooms, chat messages, bans, placements, channel sequences") { db in
            try db.create(table: "rooms") { table in
                table.primaryKey("room_id", .text)
                table.column("created_at_ms", .integer).notNull()
                table.column("state", .integer).notNull()
                table.column("record", .blob).notNull()
            }
            try db.create(table: "chat_messages") { table in
                table.column("room_id", .text).notNull()
                table.column("sequence", .integer).notNull()
                table.column("record", .blob).notNull()
                table.primaryKey(["room_id", "sequence"])
            }
            try db.create(table: "bans") { table in
                table.column("channel", .text).notNull()
                table.column("uid", .integer).notNull()
                table.column("record", .blob).notNull()
                table.primaryKey(["channel", "uid"])
            }
            try db.create(table: "placements") { table in
                table.primaryKey("channel", .text)
                table.column("record", .blob).notNull()
            }
            try db.create(table: "channel_sequences") { table in
                table.primaryKey("channel", .text)
                table.column("record", .blob).notNull()
            }
        }
        migrator.registerMigration("v2: bans keyed by channel, uid and address") { db in
            try db.create(table: "bans_by_address") { table in
                table.column("channel", .text).notNull()
                table.column("uid", .integer).notNull()
                table.column("ip", .text).notNull()
                table.column("record", .blob).notNull()
                table.primaryKey(["channel", "uid", "ip"])
            }
            try db.execute(sql: "INSERT INTO bans_by_address (channel, uid, ip, record) SELECT channel, uid, '', record FROM bans")
            try db.drop(table: "bans")
            try db.rename(table: "bans_by_address", to: "bans")
        }
        return migrator
    }

    // MARK: - Writes

    /// Stores rooms (replacing the records with the same id).
    public func save(rooms: [RoomRoom]) throws(ShowroomError) {
        try write("save \(rooms.count) room(s)") { db in try Self.save(rooms: rooms, in: db) }
    }

    /// Deletes rooms and their chat messages.
    public func delete(roomIDs: [String]) throws(ShowroomError) {
        try write("delete \(roomIDs.count) room(s)") { db in try Self.delete(roomIDs: roomIDs, in: db) }
    }

    /// Stores chat messages (replacing those with the same room and sequence).
    public func save(messages: [RoomChatMessage]) throws(ShowroomError) {
        try write("save \(messages.count) chat message(s)") { db in try Self.save(messages: messages, in: db) }
    }

    /// Deletes chat messages by room and sequence.
    public func delete(messages: [(roomID: String, sequence: UInt64)]) throws(ShowroomError) {
        try write("delete \(messages.count) chat message(s)") { db in try Self.delete(messages: messages, in: db) }
    }

    /// Stores bans (replacing those with the same channel, uid and address).
    public func save(bans: [RoomBan]) throws(ShowroomError) {
        try write("save \(bans.count) ban(s)") { db in try Self.save(bans: bans, in: db) }
    }

    /// Deletes bans by channel, uid and address.
    public func delete(bans: [RoomBan]) throws(ShowroomError) {
        try write("delete \(bans.count) ban(s)") { db in
            for ban in bans {
                try db.execute(sql: "DELETE FROM bans WHERE channel = ? AND uid = ? AND ip = ?",
                               arguments: [ban.channel, Int64(ban.uid), ban.ip])
            }
        }
    }

    /// Stores channel placements (replacing those of the same channels).
    public func save(placements: [RoomChannelPlacement]) throws(ShowroomError) {
        try write("save \(placements.count) placement(s)") { db in try Self.save(placements: placements, in: db) }
    }

    /// Deletes the placements of these channels.
    public func delete(placementsOf channels: [String]) throws(ShowroomError) {
        try write("delete \(channels.count) placement(s)") { db in try Self.delete(placementsOf: channels, in: db) }
    }

    /// Stores channel event numbers (replacing those of the same channels).
    public func save(sequences: [RoomChannelSequence]) throws(ShowroomError) {
        try write("save \(sequences.count) channel sequence(s)") { db in try Self.save(sequences: sequences, in: db) }
    }

    /// Deletes the channel event numbers of these channels (pruned: the channels are gone).
    public func delete(sequencesOf channels: [String]) throws(ShowroomError) {
        try write("delete \(channels.count) channel sequence(s)") { db in
            for channel in channels {
                try db.execute(sql: "DELETE FROM channel_sequences WHERE channel = ?", arguments: [channel])
            }
        }
    }

    /// Persists what registry changes did, in one transaction: rooms and messages saved, trimmed
    /// messages deleted, purged rooms deleted with their messages.
    public func persist(_ changes: [RoomChange]) throws(ShowroomError) {
        guard !changes.isEmpty else { return }
        try write("persist \(changes.count) room change(s)") { db in
            for change in changes {
                if change.purged {
                    try Self.delete(roomIDs: [change.room.roomID], in: db)
                    continue
                }
                try Self.save(rooms: [change.room], in: db)
                if let message = change.message { try Self.save(messages: [message], in: db) }
                try Self.delete(
                    messages: change.droppedMessageSequences.map { (change.room.roomID, $0) }, in: db)
            }
        }
    }

    // MARK: - Reads

    /// Everything stored, as one batch: rooms by id; messages by room and sequence; bans by
    /// channel, uid and address; placements and sequences by channel.
    ///
    /// - Throws: `INTERNAL` naming the path and the record that could not be read.
    public func load() throws(ShowroomError) -> RoomStateBatch {
        do {
            return try queue.read { db in
                var batch = RoomStateBatch()
                batch.rooms = try Self.records("room", "SELECT room_id AS key, record FROM rooms ORDER BY room_id", db) {
                    try RoomRoom(serializedBytes: $0)
                }
                batch.messages = try Self.records(
                    "chat message",
                    "SELECT room_id || '#' || sequence AS key, record FROM chat_messages ORDER BY room_id, sequence", db
                ) { try RoomChatMessage(serializedBytes: $0) }
                batch.bans = try Self.records(
                    "ban", "SELECT channel || '#' || uid || '#' || ip AS key, record FROM bans ORDER BY channel, uid, ip", db
                ) { try RoomBan(serializedBytes: $0) }
                batch.placements = try Self.records(
                    "placement", "SELECT channel AS key, record FROM placements ORDER BY channel", db
                ) { try RoomChannelPlacement(serializedBytes: $0) }
                batch.sequences = try Self.records(
                    "channel sequence", "SELECT channel AS key, record FROM channel_sequences ORDER BY channel", db
                ) { try RoomChannelSequence(serializedBytes: $0) }
                return batch
            }
        } catch let error as ShowroomError {
            throw .internal("room store \(path): \(error.message)")
        } catch {
            throw .internal("room store \(path): cannot load the stored state: \(error)")
        }
    }

    // MARK: - Helpers

    private func write(_ what: String, _ updates: (Database) throws -> Void) throws(ShowroomError) {
        do {
            try queue.write(updates)
        } catch {
            throw .internal("room store \(path): cannot \(what): \(error)")
        }
    }

    private static func save(bans: [RoomBan], in db: Database) throws {
        for ban in bans {
            try db.execute(sql: "INSERT OR REPLACE INTO bans (channel, uid, ip, record) VALUES (?, ?, ?, ?)",
                           arguments: [ban.channel, Int64(ban.uid), ban.ip, try ban.serializedData()])
        }
    }

    private static func save(placements: [RoomChannelPlacement], in db: Database) throws {
        for placement in placements {
            try db.execute(sql: "INSERT OR REPLACE INTO placements (channel, record) VALUES (?, ?)",
                           arguments: [placement.channel, try placement.serializedData()])
        }
    }

    private static func delete(placementsOf channels: [String], in db: Database) throws {
        for channel in channels { try db.execute(sql: "DELETE FROM placements WHERE channel = ?", arguments: [channel]) }
    }

    private static func save(sequences: [RoomChannelSequence], in db: Database) throws {
        for sequence in sequences {
            try db.execute(sql: "INSERT OR REPLACE INTO channel_sequences (channel, record) VALUES (?, ?)",
                           arguments: [sequence.channel, try sequence.serializedData()])
        }
    }

    private static func save(rooms: [RoomRoom], in db: Database) throws {
        for room in rooms {
            try db.execute(
                sql: "INSERT OR REPLACE INTO rooms (room_id, created_at_ms, state, record) VALUES (?, ?, ?, ?)",
                arguments: [room.roomID, room.createdAtMs, room.state.rawValue, try room.serializedData()])
        }
    }

    private static func delete(roomIDs: [String], in db: Database) throws {
        for roomID in roomIDs {
            try db.execute(sql: "DELETE FROM chat_messages WHERE room_id = ?", arguments: [roomID])
            try db.execute(sql: "DELETE FROM rooms WHERE room_id = ?", arguments: [roomID])
        }
    }

    private static func save(messages: [RoomChatMessage], in db: Database) throws {
        for message in messages {
            try db.execute(
                sql: "INSERT OR REPLACE INTO chat_messages (room_id, sequence, record) VALUES (?, ?, ?)",
                arguments: [message.roomID, Int64(bitPattern: message.sequence), try message.serializedData()])
        }
    }

    private static func delete(messages: [(roomID: String, sequence: UInt64)], in db: Database) throws {
        for message in messages {
            try db.execute(
                sql: "DELETE FROM chat_messages WHERE room_id = ? AND sequence = ?",
                arguments: [message.roomID, Int64(bitPattern: message.sequence)])
        }
    }

    /// Decodes every row's `record` with `decode`; a row that does not decode names its kind and key.
    private static func records<Record>(
        _ kind: String, _ sql: String, _ db: Database, _ decode: (Data) throws -> Record
    ) throws -> [Record] {
        try Row.fetchAll(db, sql: sql).map { row in
            let data: Data = row["record"]
            do {
                return try decode(data)
            } catch {
                let key: String = row["key"]
                throw ShowroomError.internal("the stored \(kind) '\(key)' does not decode: \(error)")
            }
        }
    }
}

// MARK: - As a replica's persistence

/// The coordinator's records (``CoordinatorRecords``) persist here: what a copy from another
/// coordinator brought, what start-up reloads, what a coordinator that holds rooms no longer
/// forgets.
extension RoomStore: ReplicaPersistence {
    /// Everything stored, as one record.
    public func loadRecords() throws -> [RoomStateBatch] { [try load()] }

    /// Stores `records` in one transaction: rooms, chat messages, placements (one without an edge
    /// is a removal), event numbers and bans.
    public func save(_ records: [RoomStateBatch]) throws {
        let record = CoordinatorRecords.merged(records)
        guard record != RoomStateBatch() else { return }
        try write("save replicated records") { db in
            try Self.save(rooms: record.rooms, in: db)
            try Self.save(messages: record.messages, in: db)
            try Self.save(placements: record.placements.filter { !$0.edgeID.isEmpty }, in: db)
            try Self.delete(placementsOf: record.placements.filter(\.edgeID.isEmpty).map(\.channel), in: db)
            try Self.save(sequences: record.sequences, in: db)
            try Self.save(bans: record.bans, in: db)
        }
    }

    /// Forgets the rooms (with their chat) of `keys`.
    public func delete(keys: [String]) throws { try delete(roomIDs: keys.filter { $0 != CoordinatorRecords.tablesKey }) }
}
