/// A live room as the room coordinators keep it: its show's channel, its owner (the host), its
/// audience and its lifetime.
public struct Room: Sendable, Hashable {
    /// Whether a room is open.
    public enum State: Sendable, Hashable {
        /// Open: it can be joined and chatted in.
        case open
        /// Closed for good (see ``Room/closeReason``).
        case closed
    }

    /// Why a room closed.
    public enum CloseReason: Sendable, Hashable {
        /// The owner closed it.
        case ownerClosed
        /// Its lifetime ended.
        case expired
        /// The owner was away from the room's channel longer than the grace period.
        case ownerOffline
        /// An administrator closed it.
        case adminClosed
    }

    /// What the room's host is doing with others.
    public enum Interaction: Sendable, Hashable {
        /// Live on its own.
        case idle
        /// In a 1v1 call (its live stream is paused until the call ends): the call's id, and
        /// since when (ms since the Unix epoch).
        case call(id: String, sinceMs: Int64)
        /// In a PK with another room's host.
        case pk(PK)
        /// Sharing the stage with co-hosts, one per seat.
        case coHosting([CoHostSeat])
    }

    /// The room id.
    public var roomID: String
    /// What the room is called.
    public var name: String
    /// The host's uid.
    public var ownerUid: UInt32
    /// The host's display name.
    public var ownerName: String
    /// The host's avatar URL.
    public var ownerAvatar: String
    /// What the app keeps with the room (set by its business server, at most 4096 bytes).
    public var metadata: String = ""
    /// When it was created, ms since the Unix epoch.
    public var createdAtMs: Int64
    /// Audience members in the room (joined and not left).
    public var audienceCount: UInt32
    /// The audience's uids.
    public var audienceUids: [UInt32]
    /// The RTC channel of the room's show.
    public var channel: String
    /// When it closes by expiry, ms since the Unix epoch.
    public var expiresAtMs: Int64
    /// Open or closed.
    public var state: State
    /// Why it closed; `nil` while open.
    public var closeReason: CloseReason?
    /// When it closed, ms since the Unix epoch; 0 while open.
    public var closedAtMs: Int64
    /// Since when the owner has been away from the room's channel, ms since the Unix epoch; 0
    /// while the owner is there.
    public var ownerOfflineSinceMs: Int64
    /// +1 on every change: of two copies of a room, the higher version is the newer.
    public var version: UInt64
    /// When it last changed, ms since the Unix epoch.
    public var updatedAtMs: Int64
    /// The sequence number of its last chat message; 0 for none.
    public var lastChatSequence: UInt64
    /// What the host is doing with others (a 1v1 call shows here while it lasts).
    public var interaction: Interaction = .idle
    /// Open PK invitations (sent and received) and co-host applications and invitations.
    public var pending: [InteractionRequest] = []
    /// Co-host seats.
    public var seats: UInt32 = 1
    /// Waiting for a random PK match until this time, ms since the Unix epoch; 0 when not waiting.
    public var matchWaitingUntilMs: Int64 = 0

    /// Creates a room value (the coordinators make rooms; this is for tests and app models).
    ///
    /// - Parameters:
    ///   - roomID: The room id.
    ///   - name: The room's name.
    ///   - ownerUid: The host's uid.
    ///   - channel: The show's channel; the room id if empty.
    public init(roomID: String, name: String = "", ownerUid: UInt32 = 0, channel: String = "") {
        self.roomID = roomID
        self.name = name
        self.ownerUid = ownerUid
        ownerName = ""
        ownerAvatar = ""
        createdAtMs = 0
        audienceCount = 0
        audienceUids = []
        self.channel = channel.isEmpty ? roomID : channel
        expiresAtMs = 0
        state = .open
        closeReason = nil
        closedAtMs = 0
        ownerOfflineSinceMs = 0
        version = 0
        updatedAtMs = 0
        lastChatSequence = 0
    }
}
