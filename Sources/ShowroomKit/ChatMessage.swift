/// A chat message in a room.
public struct ChatMessage: Sendable, Hashable {
    /// The room.
    public var roomID: String
    /// Per room, from 1, +1 per message.
    public var sequence: UInt64
    /// The sender's uid.
    public var uid: UInt32
    /// The sender's display name.
    public var userName: String
    /// The text, at most 1024 bytes of UTF-8.
    public var text: String
    /// When it was sent, ms since the Unix epoch.
    public var sentAtMs: Int64

    /// Creates a message value (the coordinators make messages; this is for tests and app models).
    ///
    /// - Parameters:
    ///   - roomID: The room.
    ///   - sequence: The sequence number in the room.
    ///   - uid: The sender's uid.
    ///   - userName: The sender's display name.
    ///   - text: The text.
    ///   - sentAtMs: When it was sent, ms since the Unix epoch.
    public init(roomID: String, sequence: UInt64, uid: UInt32, userName: String = "", text: String, sentAtMs: Int64 = 0) {
        self.roomID = roomID
        self.sequence = sequence
        self.uid = uid
        self.userName = userName
        self.text = text
        self.sentAtMs = sentAtMs
    }
}
