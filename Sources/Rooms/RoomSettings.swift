/// The room registry's limits and lifetimes, in one place for configuration.
public struct RoomSettings: Sendable, Equatable {
    /// A room closes (reason EXPIRED) this long after its creation. Default 20 minutes.
    public var roomExpiryMs: Int64
    /// A room closes (reason OWNER_OFFLINE) when its owner has been away from the room's channel
    /// this long; the wait starts at creation, before the owner first joins. Default 5 minutes.
    public var ownerGraceMs: Int64
    /// The largest chat message a room accepts, in UTF-8 bytes. Default 1024.
    public var maxChatBytes: Int
    /// Chat messages kept per room; older ones are dropped. Default 200.
    public var chatHistoryKept: Int
    /// Closed rooms still answer GET (and chat history) this long, then are purged. Default 10 minutes.
    public var closedRoomRetentionMs: Int64
    /// A PK invitation, or a co-host invitation, expires this long after it was made. Default 15 s.
    public var invitationExpiryMs: Int64
    /// A co-host application expires this long after it was made. Default 60 s.
    public var applicationExpiryMs: Int64
    /// A PK start (the two-key intent) is dropped and aborted this long after it began unless the
    /// other room committed. Default 5 s.
    public var pkIntentExpiryMs: Int64
    /// A room waits this long for a random PK match. Default 30 s.
    public var matchWaitMs: Int64

    /// Creates settings; every value has the documented default.
    public init(
        roomExpiryMs: Int64 = 20 * 60_000,
        ownerGraceMs: Int64 = 5 * 60_000,
        maxChatBytes: Int = 1024,
        chatHistoryKept: Int = 200,
        closedRoomRetentionMs: Int64 = 10 * 60_000,
        invitationExpiryMs: Int64 = 15_000,
        applicationExpiryMs: Int64 = 60_000,
        pkIntentExpiryMs: Int64 = 5_000,
        matchWaitMs: Int64 = 30_000
    ) {
        self.invitationExpiryMs = invitationExpiryMs
        self.applicationExpiryMs = applicationExpiryMs
        self.pkIntentExpiryMs = pkIntentExpiryMs
        self.matchWaitMs = matchWaitMs
        self.roomExpiryMs = roomExpiryMs
        self.ownerGraceMs = ownerGraceMs
        self.maxChatBytes = maxChatBytes
        self.chatHistoryKept = chatHistoryKept
        self.closedRoomRetentionMs = closedRoomRetentionMs
    }
}
