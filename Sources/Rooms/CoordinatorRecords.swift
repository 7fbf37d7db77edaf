import Ownership
import ReplicatedOwnership
import Routing
import ShowroomWire

/// The records a coordinator replicates, in the state machines that hold them: rooms with their
/// chat (``RoomRegistry``) and channel event numbers (``ChannelEventSequencer``), each key held
/// by its owner and successor; placements (``ChannelDirectory``), bans (``BanList``) and the
/// server API's recordings (``RecordingOrders``), held by every coordinator under one key
/// (``tablesKey``) with the event numbers again, for a newcomer.
///
/// A ``ReplicatedStore`` of these records is how a coordinator replicates: its writes, repairs
/// and hand-overs read them here (``records(of:)``), and a copy from another coordinator merges
/// by each machine's rules (``receive(_:nowMs:)``): the higher room version wins and the room's
/// chat follows it, a later series of event numbers wins, placements and bans merge by channel,
/// a recording's higher version wins.
public struct CoordinatorRecords: ReplicaRecords {
    /// The key of the cluster-wide tables (placements, bans, recordings, every channel's event numbers).
    public static let tablesKey = "cluster-tables"

    /// Rooms and their chat.
    public var registry: RoomRegistry
    /// Where channels run: the edges' reports, placements and relays.
    public var directory: ChannelDirectory
    /// Channel event numbers.
    public var sequencer = ChannelEventSequencer()
    /// Bans.
    public var bans = BanList()
    /// The server API's recordings, and the orders the edges were sent.
    public var recordings = RecordingOrders()

    /// The records of `registry` and `directory`, with no event numbers or bans yet.
    public init(registry: RoomRegistry, directory: ChannelDirectory) {
        self.registry = registry
        self.directory = directory
    }

    /// The rooms held here and the tables: what a change of members hands over. A channel's event
    /// numbers reach a newcomer with the tables.
    public var heldKeys: [String] { Array(registry.rooms.keys) + [Self.tablesKey] }

    /// What is held of `keys`: the rooms (with their chat) and channels among them as one record,
    /// the tables as another (never an owner's write: every coordinator writes them).
    public func records(of keys: [String]) -> [RoomStateBatch] {
        var owned = RoomStateBatch()
        var tables: RoomStateBatch?
        for key in keys {
            if key == Self.tablesKey {
                var batch = RoomStateBatch()
                batch.placements = directory.placements.placements.values.sorted { $0.channel < $1.channel }
                batch.sequences = sequencer.sequences
                // Ended and lifted bans too: a copy that missed the lifting must not bring it back.
                batch.bans = bans.held
                batch.recordings = recordings.held
                tables = batch
                continue
            }
            if let room = registry.room(key) {
                owned.rooms.append(room)
                owned.messages += registry.messages(in: key)
            }
            if sequencer.holds(key) { owned.sequences.append(sequencer.sequence(of: key)) }
        }
        return (keys.contains { $0 != Self.tablesKey } ? [owned] : []) + (tables.map { [$0] } ?? [])
    }

    /// Forgets the rooms among `keys` (the tables are every coordinator's).
    public mutating func release(_ keys: [String]) {
        registry.forget(keys.filter { $0 != Self.tablesKey })
    }

    /// The rooms (by id, with their chat) and channels (by name) `record` carries.
    public static func keys(of record: RoomStateBatch) -> [String] {
        Array(Set(record.rooms.map(\.roomID)).union(record.messages.map(\.roomID)).union(record.sequences.map(\.channel))).sorted()
    }

    /// What a write of `changes` sends: each changed room, with its new chat message, to the
    /// room's other holders; an owner's write when this coordinator owns the room.
    public static func sends(of changes: [RoomChange], in replication: Replication) -> [String: RoomStateBatch] {
        var batches: [String: RoomStateBatch] = [:]
        for change in changes where !change.purged {
            for holder in replication.replicas(of: change.room.roomID) {
                batches[holder, default: RoomStateBatch()].ownerWrite = replication.owns(change.room.roomID)
                batches[holder, default: RoomStateBatch()].rooms.append(change.room)
                if let message = change.message { batches[holder, default: RoomStateBatch()].messages.append(message) }
            }
        }
        return batches
    }

    /// Marks the records of `batches` that hold only keys this coordinator owns as an owner's
    /// writes (a holder with a newer record refuses them and sends it back).
    public static func markOwnerWrites(_ batches: inout [Replicator<RoomStateBatch>.Batch], in replication: Replication) {
        for index in batches.indices {
            // The rooms and channels are the first record (``records(of:)``), the tables the last.
            let keys = batches[index].keys.filter { $0 != tablesKey }
            if !keys.isEmpty, keys.allSatisfy(replication.owns), !batches[index].records.isEmpty {
                batches[index].records[0].ownerWrite = true
            }
        }
    }

    /// Whether a write whose replicas all answered or left may be answered to its client: when
    /// every replica holds it, or when this coordinator still owns its key (anyone may write the
    /// tables) and sees most of the cluster. Otherwise it may lose to another's write: its client
    /// is told nothing and retries.
    public static func mayAnswer(_ write: Replication.Acknowledged, in replication: Replication, seesMostOfTheCluster: Bool) -> Bool {
        write.fullyReplicated || (seesMostOfTheCluster && (write.key == tablesKey || replication.owns(write.key)))
    }

    // MARK: - Copies from other coordinators

    /// Why `batch` from coordinator `batch.from` must be refused before anything of it is taken,
    /// with the rooms to send back to it: an owner's write from a coordinator this one does not
    /// take for the owner, or from a record older than the one held here (``RoomRegistry/heldOver(_:)``:
    /// the sender learns the newer one); a write of chat messages this copy would hold with a gap
    /// (the sender sends the room whole). Nil: take it.
    public func refusal(of batch: RoomStateBatch, selfID: String, in replication: Replication)
        -> (error: ShowroomError, sendBack: [String])? {
        if batch.ownerWrite {
            let keys = batch.rooms.map(\.roomID) + batch.sequences.map(\.channel)
            if let key = keys.first(where: { replication.owner(of: $0) != batch.from }) {
                return (.unavailable("coordinator \(selfID) takes \(replication.owner(of: key)) for the owner of \(key), not \(batch.from); the members are settling"), [])
            }
            let newer = registry.heldOver(batch.rooms)
            if !newer.isEmpty {
                return (.unavailable("coordinator \(selfID) holds a newer record of room \(newer[0].roomID) than \(batch.from) wrote to"),
                        newer.map(\.roomID))
            }
        }
        if batch.changesOnly, let roomID = registry.chatGap(before: batch.messages) {
            return (.unavailable("coordinator \(selfID) misses chat messages of room \(roomID) before those sent; send the room whole"), [])
        }
        return nil
    }

    /// What taking a copy changed here.
    public struct Received: Sendable {
        /// Room records and chat messages taken, to persist (never a notice).
        public var changes: [RoomChange] = []
        /// Rooms whose record here was replaced: writes of them still waiting for replicas are
        /// not in the record kept, and are never acknowledged.
        public var replaced: [String] = []
        /// The placements (a removal has no edge), event numbers, bans and recordings taken, to
        /// persist (recordings are not: they live as long as some coordinator does).
        public var tables = RoomStateBatch()
    }

    /// Takes `batch` (a replica of a write, a repair, a hand-over or a catch-up page), each
    /// record where it wins over the one held (see the type's rules).
    public mutating func receive(_ batch: RoomStateBatch, nowMs: Int64) -> Received {
        var received = Received()
        received.changes = registry.merge(rooms: batch.rooms, messages: batch.messages)
        received.replaced = Set(received.changes.filter { $0.message == nil }.map(\.room.roomID)).sorted()
        received.tables.placements = directory.merge(batch.placements, nowMs: nowMs)
        received.tables.sequences = sequencer.merge(batch.sequences, nowMs: nowMs)
        received.tables.bans = bans.merge(batch.bans)
        received.tables.recordings = recordings.merge(batch.recordings)
        return received
    }

    /// One page of a catch-up for coordinator `request.from`, which takes the members to be
    /// `request.members`: the rooms (with their chat) after its cursor it holds among them, at
    /// most `pageRooms`, and the tables on the first page. Refused while this coordinator does not
    /// see the asker (it may still write what the asker takes over: the asker asks again).
    public func catchUpPage(for request: RoomStateBatch, selfID: String, members: [String], pageRooms: Int)
        throws(ShowroomError) -> RoomStateBatchResponse {
        guard request.members.count <= 1_000, request.members.allSatisfy({ $0.utf8.count <= 256 }) else {
            throw .invalidArgument("a catch-up request names at most 1000 members of at most 256 bytes")
        }
        guard members.contains(request.from) else {
            throw .unavailable("coordinator \(selfID) does not see \(request.from) among the coordinators yet; ask again")
        }
        let asker = OwnerRing(.coordinator, memberIDs: Set(request.members).union([request.from]))
        let roomIDs = registry.rooms.keys.filter { $0 > request.afterRoomID && asker.holders(of: $0, count: 2).contains(request.from) }.sorted()
        var answer = RoomStateBatchResponse()
        let keys = (request.afterRoomID.isEmpty ? [Self.tablesKey] : []) + Array(roomIDs.prefix(pageRooms))
        answer.batch = Self.merged(records(of: keys))
        answer.more = roomIDs.count > pageRooms
        return answer
    }

    /// One wire batch of `records`.
    public static func merged(_ records: [RoomStateBatch]) -> RoomStateBatch {
        var wire = RoomStateBatch()
        for record in records {
            wire.rooms += record.rooms
            wire.messages += record.messages
            wire.sequences += record.sequences
            wire.placements += record.placements
            wire.bans += record.bans
            wire.recordings += record.recordings
            wire.ownerWrite = wire.ownerWrite || record.ownerWrite
        }
        return wire
    }
}
