internal import ShowroomWire

// From the room coordinators' messages to the SDK's room values.

extension Room {
    init(_ wire: RoomRoom) {
        self.init(roomID: wire.roomID, name: wire.name, ownerUid: wire.ownerUid, channel: wire.channel)
        channel = wire.channel
        ownerName = wire.ownerName
        ownerAvatar = wire.ownerAvatar
        metadata = wire.metadata
        createdAtMs = wire.createdAtMs
        audienceCount = wire.audienceCount
        audienceUids = wire.audienceUids
        expiresAtMs = wire.expiresAtMs
        state = wire.state == .closed ? .closed : .open
        closeReason = switch wire.closeReason {
        case .ownerClosed: .ownerClosed
        case .expired: .expired
        case .ownerOffline: .ownerOffline
        case .adminClosed: .adminClosed
        default: nil
        }
        closedAtMs = wire.closedAtMs
        ownerOfflineSinceMs = wire.ownerOfflineSinceMs
        version = wire.version
        updatedAtMs = wire.updatedAtMs
        lastChatSequence = wire.lastChatSequence
        interaction = Room.Interaction(wire.interaction)
        pending = wire.pending.map(InteractionRequest.init)
        seats = max(1, wire.seats)
        matchWaitingUntilMs = wire.matchWaitingUntilMs
    }
}

extension ChatMessage {
    init(_ wire: RoomChatMessage) {
        self.init(
            roomID: wire.roomID, sequence: wire.sequence, uid: wire.uid, userName: wire.userName, text: wire.text,
            sentAtMs: wire.sentAtMs)
    }
}

extension RoomPage {
    init(_ wire: RoomListRoomsResponse) {
        self.init(rooms: wire.rooms.map(Room.init), nextPageToken: wire.nextPageToken, total: Int(wire.total))
    }
}
