import ShowroomWire

extension RoomRegistry {
    /// An audience member enters an open room. Idempotent per uid; the owner is never counted.
    ///
    /// - Returns: The change: notice USER_COUNT_CHANGED when the count changed; otherwise the room
    ///   as it is, no notice, no new version.
    /// - Throws: `INVALID_ARGUMENT` for uid 0 or a bad user name; `ROOM_NOT_FOUND`; `ROOM_CLOSED`.
    public mutating func join(_ request: RoomJoinRoomRequest, nowMs: Int64) throws(ShowroomError) -> RoomChange {
        try Names.validateDisplayName(request.userName, field: "user_name", allowEmpty: true)
        return try updateAudience(roomID: request.roomID, uid: request.uid, joining: true, nowMs: nowMs)
    }

    /// An audience member leaves an open room. Idempotent per uid.
    ///
    /// - Returns: The change: notice USER_COUNT_CHANGED when the count changed; otherwise the room
    ///   as it is, no notice, no new version.
    /// - Throws: `INVALID_ARGUMENT` for uid 0; `ROOM_NOT_FOUND`; `ROOM_CLOSED`.
    public mutating func leave(_ request: RoomLeaveRoomRequest, nowMs: Int64) throws(ShowroomError) -> RoomChange {
        try updateAudience(roomID: request.roomID, uid: request.uid, joining: false, nowMs: nowMs)
    }

    private mutating func updateAudience(roomID: String, uid: UInt32, joining: Bool, nowMs: Int64) throws(ShowroomError) -> RoomChange {
        guard uid != 0 else {
            throw .invalidArgument("uid is 0; \(joining ? "join" : "leave") a room with the user's uid (1 – 4294967295)")
        }
        var room = try openRoom(roomID)
        // Kept sorted so that every replica holds the same bytes for the same audience.
        let index = room.audienceUids.partitioningIndex { $0 >= uid }
        let present = index < room.audienceUids.count && room.audienceUids[index] == uid
        if joining {
            guard !present, uid != room.ownerUid else { return RoomChange(room: room) }
            room.audienceUids.insert(uid, at: index)
        } else {
            guard present else { return RoomChange(room: room) }
            room.audienceUids.remove(at: index)
        }
        room.audienceCount = UInt32(room.audienceUids.count)
        room = Self.bumped(room, nowMs: nowMs)
        put(room)
        return RoomChange(room: room, notice: .userCountChanged)
    }
}

extension Array {
    /// The first index whose element satisfies `belongsInSecondPart`, for an array partitioned by it
    /// (all `false` first, then all `true`); `endIndex` when none does.
    func partitioningIndex(where belongsInSecondPart: (Element) -> Bool) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if belongsInSecondPart(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
