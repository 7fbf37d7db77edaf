import ShowroomWire

extension RoomRegistry {
    /// Largest chat history page.
    static let maxHistoryLimit = 100
    /// Chat history page when the request's limit is 0.
    static let defaultHistoryLimit = 50

    /// Adds a chat message to an open room.
    ///
    /// - Returns: The change, with the message (sequence = the room's last + 1) and notice
    ///   MESSAGE_ADDED; messages trimmed from the history are in `droppedMessageSequences`.
    /// - Throws: `INVALID_ARGUMENT` for uid 0, a bad user name or an empty text; `CHAT_MESSAGE_TOO_LARGE` over
    ///   ``RoomSettings/maxChatBytes`` UTF-8 bytes; `ROOM_NOT_FOUND`; `ROOM_CLOSED`.
    public mutating func sendChat(_ request: RoomSendChatRequest, nowMs: Int64) throws(ShowroomError) -> RoomChange {
        guard request.uid != 0 else {
            throw .invalidArgument("uid is 0; send chat with the user's uid (1 – 4294967295)")
        }
        try Names.validateDisplayName(request.userName, field: "user_name", allowEmpty: true)
        let bytes = request.text.utf8.count
        guard bytes <= settings.maxChatBytes else {
            throw .chatMessageTooLarge(
                "the chat message is \(bytes) bytes (UTF-8); a room accepts at most \(settings.maxChatBytes): shorten it or split it")
        }
        guard !request.text.trimmedOfWhitespace.isEmpty else {
            throw .invalidArgument("text is empty; a chat message needs at least one visible character")
        }
        var room = try openRoom(request.roomID)

        var message = RoomChatMessage()
        message.roomID = room.roomID
        message.sequence = room.lastChatSequence + 1
        message.uid = request.uid
        message.userName = request.userName
        message.text = request.text
        message.sentAtMs = nowMs

        room.lastChatSequence = message.sequence
        room = Self.bumped(room, nowMs: nowMs)
        put(room)
        let (_, dropped) = insert(messages: [message], roomID: room.roomID)
        return RoomChange(room: room, message: message, notice: .messageAdded, droppedMessageSequences: dropped)
    }

    /// The most recent chat messages of a room (open or closed, until purged), oldest first.
    ///
    /// - Parameter request: The room, how many (0 means 50, at most 100), and the sequence after
    ///   which to start.
    /// - Returns: Of the messages with a sequence above `afterSequence`, the most recent `limit`.
    /// - Throws: `INVALID_ARGUMENT` for a limit over 100; `ROOM_NOT_FOUND`.
    public func history(_ request: RoomChatHistoryRequest) throws(ShowroomError) -> RoomChatHistoryResponse {
        let limit = request.limit == 0 ? Self.defaultHistoryLimit : Int(request.limit)
        guard limit <= Self.maxHistoryLimit else {
            throw .invalidArgument(
                "limit \(request.limit) is too large; ask for 1 – \(Self.maxHistoryLimit) messages (0 means \(Self.defaultHistoryLimit))")
        }
        let room = try existingRoom(request.roomID)
        let kept = messages(in: room.roomID)
        let first = kept.partitioningIndex { $0.sequence > request.afterSequence }
        var response = RoomChatHistoryResponse()
        response.messages = Array(kept[first...].suffix(limit))
        return response
    }
}
