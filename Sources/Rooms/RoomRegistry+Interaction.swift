import ShowroomWire

extension RoomRegistry {
    /// The room's owner entered a 1v1 call (kind CALL with the call's id) or left it (kind IDLE
    /// with the same id). A clear naming another interaction than the room's changes nothing (a
    /// late message of an older call); so does a repeat.
    ///
    /// - Returns: The change, with notice INTERACTION_CHANGED; nil when nothing changed.
    /// - Throws: `ROOM_NOT_FOUND`; `NOT_ROOM_OWNER` when `owner_uid` does not own the room;
    ///   `ROOM_CLOSED`; `INVALID_ARGUMENT` for an id that is empty or too long.
    public mutating func setInteraction(_ request: RoomSetInteractionRequest, nowMs: Int64) throws(ShowroomError) -> RoomChange? {
        var room = try existingRoom(request.roomID)
        guard request.ownerUid == room.ownerUid else {
            throw .notRoomOwner("room \(room.roomID) is owned by uid \(room.ownerUid), not uid \(request.ownerUid)")
        }
        guard room.state == .open else { throw closedError(room) }
        guard !request.id.isEmpty, request.id.utf8.count <= 64 else {
            throw .invalidArgument("an interaction names its id (1 – 64 bytes)")
        }
        switch request.kind {
        case .call:
            guard room.interaction.kind != .call || room.interaction.id != request.id else { return nil }
            // A PK or co-hosting keeps the room's stage; the call shows once it ends.
            guard room.interaction.kind == .idle || room.interaction.kind == .call else { return nil }
            room.interaction = RoomRoomInteraction.with {
                $0.kind = .call
                $0.id = request.id
                $0.sinceMs = nowMs
            }
        case .idle:
            guard room.interaction.kind != .idle, room.interaction.id == request.id else { return nil }
            room.interaction = RoomRoomInteraction()
        case .pk, .cohost:
            throw .invalidArgument("PK and co-hosting start through their own requests, not this one")
        case .UNRECOGNIZED(let kind):
            throw .invalidArgument("interaction kind \(kind) is not one of idle (0), call (1)")
        }
        room = Self.bumped(room, nowMs: nowMs)
        put(room)
        return RoomChange(room: room, notice: .interactionChanged)
    }
}
