import ShowroomWire

/// What one change to the registry did, for the shell to carry out: persist ``room`` (and
/// ``message``), publish ``notice`` (if any) under "room/<id>", replicate to the successor.
public struct RoomChange: Sendable, Equatable {
    /// The room after the change (for a purge: its last record).
    public var room: RoomRoom
    /// The chat message the change added, if any.
    public var message: RoomChatMessage?
    /// The notice to publish, if the change is one the room's users hear about.
    public var notice: RoomRoomNoticeKind?
    /// For an INTERACTION_EVENT notice: what happened.
    public var event: RoomRoomInteractionEvent?
    /// The room is gone for good: delete it and its messages from the store.
    public var purged: Bool
    /// Chat messages of this room trimmed by ``RoomSettings/chatHistoryKept``: delete them from
    /// the store.
    public var droppedMessageSequences: [UInt64]

    /// Creates a change.
    public init(
        room: RoomRoom, message: RoomChatMessage? = nil, notice: RoomRoomNoticeKind? = nil,
        purged: Bool = false, droppedMessageSequences: [UInt64] = [], event: RoomRoomInteractionEvent? = nil
    ) {
        self.event = event
        self.room = room
        self.message = message
        self.notice = notice
        self.purged = purged
        self.droppedMessageSequences = droppedMessageSequences
    }
}
