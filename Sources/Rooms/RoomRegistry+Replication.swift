import ShowroomWire
import SwiftProtobuf

extension RoomRegistry {
    /// Takes in rooms and chat messages from another coordinator (replication, catch-up) or from
    /// the store at start-up.
    ///
    /// Per room the record with the higher version is kept (equal: ours). Messages are kept by
    /// (room, sequence), only for rooms held after the rooms are merged, and trimmed to
    /// ``RoomSettings/chatHistoryKept``.
    ///
    /// - Returns: The changes applied, for persisting (never a notice): one per room record taken,
    ///   one per message added (with the room as held then); trimmed sequences ride on a room's
    ///   last message change.
    public mutating func merge(rooms incoming: [RoomRoom], messages: [RoomChatMessage]) -> [RoomChange] {
        var changes: [RoomChange] = []
        var won = Set<String>()
        for room in incoming where !room.roomID.isEmpty {
            guard let kept = Self.merged(rooms[room.roomID], room) else { continue }
            put(kept)
            changes.append(RoomChange(room: kept))
            won.insert(room.roomID)
        }
        let byRoom = Dictionary(grouping: messages, by: \.roomID)
        for roomID in Set(byRoom.keys).union(won).sorted() {
            guard let room = rooms[roomID] else { continue }
            let (added, dropped) = insert(messages: byRoom[roomID] ?? [], roomID: roomID, replacing: won.contains(roomID),
                                          through: room.lastChatSequence)
            for (index, message) in added.enumerated() {
                changes.append(RoomChange(
                    room: room, message: message, droppedMessageSequences: index == added.count - 1 ? dropped : []))
            }
            if added.isEmpty, !dropped.isEmpty {
                // Only possible after chatHistoryKept was lowered: older kept messages made way.
                changes.append(RoomChange(room: room, droppedMessageSequences: dropped))
            }
        }
        return changes
    }

    /// The first room whose chat `incoming` (the new messages of one write, not a whole room)
    /// would leave with a gap: its first message comes after one this registry's copy of the room
    /// lacks (a replica that missed an earlier write). Such a write must be refused and the room
    /// sent whole, else the chat's numbers skip once this copy serves it.
    public func chatGap(before incoming: [RoomChatMessage]) -> String? {
        let first = Dictionary(grouping: incoming, by: \.roomID).mapValues { $0.map(\.sequence).min() ?? 0 }
        return first.keys.sorted().first { roomID in
            let heldThrough = rooms[roomID]?.lastChatSequence ?? 0
            return first[roomID]! > heldThrough && first[roomID]! - heldThrough > 1
        }
    }

    /// The records held here that an owner's write of `incoming` must not be taken over: a newer
    /// one, or another record of the same version. The owner had not seen them when it wrote;
    /// acknowledging its write would tell a client its write holds when the held record replaces
    /// it. The owner is sent these instead, and its write refused.
    public func heldOver(_ incoming: [RoomRoom]) -> [RoomRoom] {
        incoming.compactMap { room in
            rooms[room.roomID].flatMap { held in
                held.version > room.version || (held.version == room.version && held != room) ? held : nil
            }
        }
    }

    /// The record to keep of a room held as `ours` when `incoming` arrives, or nil to keep ours.
    /// Every holder comes to the same record whatever order copies arrive in: the higher version
    /// wins; two different records of one version (two coordinators that both took themselves for
    /// the owner) are ordered by their encoding. Only one side of a partition writes, and a
    /// coordinator that takes a room over raises its version first (``raiseVersion(of:termMs:)``), so
    /// the record a client was answered from is the one that wins.
    static func merged(_ ours: RoomRoom?, _ incoming: RoomRoom) -> RoomRoom? {
        guard let ours, ours != incoming else { return ours == nil ? incoming : nil }
        if incoming.version != ours.version { return incoming.version > ours.version ? incoming : nil }
        let (a, b) = ((try? ours.serializedBytes() as [UInt8]) ?? [], (try? incoming.serializedBytes() as [UInt8]) ?? [])
        return b.lexicographicallyPrecedes(a) ? incoming : nil
    }

    /// Raises a room's version for a coordinator that took the room over, before its first
    /// write, and returns the room (to persist and replicate): to 1,000 per millisecond of
    /// `termMs`, when the coordinator saw the members change (a term that grows with time, so
    /// it is above what an earlier owner, one that has not noticed it was cut off, gave the
    /// room however many unacknowledged writes it made since its own, older, term began), and
    /// at least 1,000 above the room's version (when clocks differ). Its writes then win over
    /// the cut-off owner's.
    public mutating func raiseVersion(of roomID: String, termMs: Int64) -> RoomRoom? {
        guard var room = rooms[roomID] else { return nil }
        var term: UInt64 = 0
        if termMs > 0 {
            let (product, overflow) = UInt64(termMs).multipliedReportingOverflow(by: Self.versionsPerMillisecond)
            if !overflow { term = product }
        }
        room.version = max(room.version &+ Self.versionsPerMillisecond, term)
        put(room)
        return room
    }

    /// How many versions a term leaves a room per millisecond (``raiseVersion(of:termMs:)``).
    public static let versionsPerMillisecond: UInt64 = 1_000

    /// Drops rooms and their chat history without a trace (no change to persist or publish): for
    /// rooms this coordinator is neither owner nor successor of any more.
    public mutating func forget(_ roomIDs: some Sequence<String>) {
        for roomID in roomIDs { remove(roomID: roomID) }
    }
}
