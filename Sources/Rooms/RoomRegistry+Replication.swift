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

    /// The record to keep of a room held as `ours` when `incoming` arrives, or nil to keep ours.
    /// Every holder comes to the same record whatever order copies arrive in: the higher version
    /// wins; two different records of one version (two coordinators that both took themselves for
    /// the owner) are ordered by their encoding. Only one side of a partition writes, and a
    /// coordinator that takes a room over raises its version first (``raiseVersion(of:by:)``), so
    /// the record a client was answered from is the one that wins.
    static func merged(_ ours: RoomRoom?, _ incoming: RoomRoom) -> RoomRoom? {
        guard let ours, ours != incoming else { return ours == nil ? incoming : nil }
        if incoming.version != ours.version { return incoming.version > ours.version ? incoming : nil }
        let (a, b) = ((try? ours.serializedBytes() as [UInt8]) ?? [], (try? incoming.serializedBytes() as [UInt8]) ?? [])
        return b.lexicographicallyPrecedes(a) ? incoming : nil
    }

    /// Raises a room's version by `step` and returns the room (to persist and replicate): a coordinator that took a room over does so before its first write, so that its
    /// writes win over those a coordinator that still took itself for the owner made meanwhile
    /// (never acknowledged: that one could not reach most of the cluster).
    public mutating func raiseVersion(of roomID: String, by step: UInt64) -> RoomRoom? {
        guard var room = rooms[roomID] else { return nil }
        room.version &+= step
        put(room)
        return room
    }

    /// Drops rooms and their chat history without a trace (no change to persist or publish): for
    /// rooms this coordinator is neither owner nor successor of any more.
    public mutating func forget(_ roomIDs: some Sequence<String>) {
        for roomID in roomIDs { remove(roomID: roomID) }
    }
}
