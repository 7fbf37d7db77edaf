import ShowroomWire

extension RoomChannelStatus {
    /// `channels` with the open room each belongs to (the room whose channel it is) filled in where
    /// they name none yet: a coordinator does it with the rooms it holds, the status view again with
    /// the cluster-wide room list (with three or more coordinators each holds only some rooms).
    public static func naming(_ channels: [RoomChannelStatus], after rooms: some Sequence<RoomRoom>) -> [RoomChannelStatus] {
        var roomsByChannel: [String: RoomRoom] = [:]
        for room in rooms where room.state == .open { roomsByChannel[room.channel] = room }
        return channels.map { channel in
            guard channel.roomID.isEmpty, let room = roomsByChannel[channel.name] else { return channel }
            var named = channel
            named.roomID = room.roomID
            named.roomName = room.name
            return named
        }
    }
}
