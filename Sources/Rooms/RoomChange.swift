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

    /// What the room's users hear of this change, published under "room/<id>": the room as it is
    /// now, with the chat message or the interaction event it made, dated `atMs`; nil when the
    /// change is not one they hear about.
    public func roomNotice(atMs: Int64) -> RoomRoomNotice? {
        guard let notice else { return nil }
        return RoomRoomNotice.with {
            $0.roomID = room.roomID
            $0.kind = notice
            $0.room = room
            if let message { $0.message = message }
            if let event { $0.event = event }
            $0.atMs = atMs
        }
    }
}

extension RoomChange {
    /// The notices `changes` make, dated `atMs`: those to publish now, and those to publish once
    /// the changes are replicated. With `withholdingChat`, a chat message is shown only once the
    /// room's other holder has it: an owner that died before then must not have shown a number
    /// its successor gives again.
    public static func notices(of changes: [RoomChange], atMs: Int64,
                               withholdingChat: Bool) -> (now: [RoomRoomNotice], onceReplicated: [RoomRoomNotice]) {
        var now: [RoomRoomNotice] = []
        var withheld: [RoomRoomNotice] = []
        for change in changes {
            guard let notice = change.roomNotice(atMs: atMs) else { continue }
            if withholdingChat, change.message != nil {
                withheld.append(notice)
            } else {
                now.append(notice)
            }
        }
        return (now, withheld)
    }
}
