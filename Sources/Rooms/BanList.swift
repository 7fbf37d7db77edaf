import ShowroomWire

/// What identifies a ban: one uid in one channel.
public struct BanKey: Hashable, Sendable {
    /// The channel.
    public var channel: String
    /// The banned uid.
    public var uid: UInt32

    /// Creates a key.
    public init(channel: String, uid: UInt32) {
        self.channel = channel
        self.uid = uid
    }

    /// The key of `ban`.
    public init(_ ban: RoomBan) {
        self.init(channel: ban.channel, uid: ban.uid)
    }
}

/// The bans in force: per (channel, uid) the privileges withheld and until when.
public struct BanList: Sendable {
    /// The join privilege (AccessToken2 number 1): a ban of it withholds every privilege.
    public static let joinPrivilege: UInt32 = 1

    /// The bans by key.
    public private(set) var bans: [BanKey: RoomBan] = [:]

    /// Creates an empty list.
    public init() {}

    /// Records a ban, combined with the one in force for the same (channel, uid): the later
    /// `untilMs` wins and the privileges are unioned. A ban listing no privilege withholds join.
    ///
    /// - Returns: The ban now in force for that key.
    @discardableResult
    public mutating func add(_ ban: RoomBan) -> RoomBan {
        let key = BanKey(ban)
        let combined = Self.combined(bans[key], ban)
        bans[key] = combined
        return combined
    }

    /// The bans still in force at `nowMs`, by channel then uid.
    public func active(nowMs: Int64) -> [RoomBan] {
        Self.ordered(bans.values.filter { $0.untilMs > nowMs })
    }

    /// Removes the bans that ended by `nowMs`.
    ///
    /// - Returns: The bans removed, by channel then uid.
    public mutating func purge(nowMs: Int64) -> [RoomBan] {
        let ended = Self.ordered(bans.values.filter { $0.untilMs <= nowMs })
        for ban in ended { bans[BanKey(ban)] = nil }
        return ended
    }

    /// Takes in bans from another coordinator or the store, combined as in ``add(_:)``.
    ///
    /// - Returns: The bans whose record changed, as now in force, by channel then uid.
    public mutating func merge(_ incoming: [RoomBan]) -> [RoomBan] {
        var changed: [BanKey: RoomBan] = [:]
        for ban in incoming where !ban.channel.isEmpty {
            let key = BanKey(ban)
            let before = bans[key]
            let after = add(ban)
            if after != before { changed[key] = after }
        }
        return Self.ordered(changed.values)
    }

    private static func combined(_ current: RoomBan?, _ ban: RoomBan) -> RoomBan {
        // Built from the known fields only, so the result does not depend on which copy came
        // last (fields a newer coordinator added are not carried through a merge).
        var result = RoomBan()
        result.channel = ban.channel
        result.uid = ban.uid
        result.untilMs = ban.untilMs
        var privileges = Set(ban.privileges.isEmpty ? [joinPrivilege] : ban.privileges)
        if let current {
            privileges.formUnion(current.privileges)
            result.untilMs = max(current.untilMs, ban.untilMs)
        }
        result.privileges = privileges.sorted()
        return result
    }

    private static func ordered(_ bans: some Sequence<RoomBan>) -> [RoomBan] {
        bans.sorted { $0.channel != $1.channel ? $0.channel < $1.channel : $0.uid < $1.uid }
    }
}
