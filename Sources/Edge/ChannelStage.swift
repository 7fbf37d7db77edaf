/// Who may publish in a channel that runs a room, as the room's owner coordinator decided: its
/// owner, its co-hosts, and a forwarded PK host. Whatever a token allows, in such a channel only
/// these uids publish, and each of them may publish even with a subscriber token (the room granted
/// the seat).
public struct ChannelStage: Sendable, Equatable {
    /// The channel.
    public var channel: String
    /// The room running in it.
    public var roomID: String
    /// The uids on stage.
    public var uids: Set<UInt32>
    /// The room's version when the stage was made: an older stage never replaces a newer one.
    public var version: UInt64
    /// The room closed: the channel keeps the token rules again.
    public var removed: Bool

    /// Creates a stage.
    public init(channel: String, roomID: String, uids: Set<UInt32>, version: UInt64, removed: Bool = false) {
        self.channel = channel
        self.roomID = roomID
        self.uids = uids
        self.version = version
        self.removed = removed
    }
}
