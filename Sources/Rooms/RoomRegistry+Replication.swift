import ShowroomWire

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
        for room in incoming where !room.roomID.isEmpty {
            if let ours = rooms[room.roomID], ours.version >= room.version { continue }
            put(room)
            changes.append(RoomChange(room: room))
        }
        let byRoom = Dictionary(grouping: messages, by: \.roomID)
        for roomID in byRoom.keys.sorted() {
            guard let room = rooms[roomID], let roomMessages = byRoom[roomID] else { continue }
            let (added, dropped) = insert(messages: roomMessages, roomID: roomID)
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

    /// Drops rooms and their chat history without a trace (no change to persist or publish): for
    /// rooms this coordinator is neither owner nor successor of any more.
    public mutating func forget(_ roomIDs: some Sequence<String>) {
        for roomID in roomIDs { remove(roomID: roomID) }
    }
}
