import ShowroomWire

/// What identifies a ban: its filter, one uid in one channel (from one address).
public struct BanKey: Hashable, Sendable {
    /// The channel.
    public var channel: String
    /// The banned uid.
    public var uid: UInt32
    /// The address; "" any.
    public var ip: String

    /// Creates a key.
    public init(channel: String, uid: UInt32, ip: String = "") {
        self.channel = channel
        self.uid = uid
        self.ip = ip
    }

    /// The key of `ban`.
    public init(_ ban: RoomBan) {
        self.init(channel: ban.channel, uid: ban.uid, ip: ban.ip)
    }
}

/// The bans in force: per (channel, uid, ip) the privileges withheld and until when. A channel of
/// "", a uid of 0 or an ip of "" leaves that filter open (a server API ban rule).
///
/// Copies on different coordinators merge by the later change (`updatedAtMs`), so a rule
/// shortened or lifted stays so; two copies of the same change combine (privileges united, the
/// later end), as do kicks. A lifted or ended ban is kept ``tombstoneMs`` past its end, and
/// replicated, so that no copy held by a coordinator that missed the change brings it back.
public struct BanList: Sendable {
    /// The join privilege (AccessToken2 number 1): a ban of it withholds every privilege.
    public static let joinPrivilege: UInt32 = 1
    /// How long a ban is kept after its end: longer than any ban lasts, so an older copy of it
    /// has ended too by the time it is forgotten.
    public static let tombstoneMs: Int64 = 25 * 3_600_000

    /// The bans by key.
    public private(set) var bans: [BanKey: RoomBan] = [:]

    /// Creates an empty list.
    public init() {}

    /// Records a ban, combined with the one in force for the same filter: the later
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

    /// Sets a ban rule as given (a rule's new end, or its lifting), whatever the one held: the
    /// change's `updatedAtMs` makes it win over older copies elsewhere.
    ///
    /// - Returns: The ban now held.
    @discardableResult
    public mutating func replace(_ ban: RoomBan) -> RoomBan {
        var ban = ban
        if let current = bans[BanKey(ban)], ban.createdAtMs == 0 { ban.createdAtMs = current.createdAtMs }
        bans[BanKey(ban)] = ban
        return ban
    }

    /// The bans still in force at `nowMs`, by channel then uid.
    public func active(nowMs: Int64) -> [RoomBan] {
        Self.ordered(bans.values.filter { $0.untilMs > nowMs && !$0.lifted })
    }

    /// Every ban held, ended and lifted ones included (what replication carries).
    public var held: [RoomBan] { Self.ordered(bans.values) }

    /// The ban whose rule id (``ruleID(of:)``) is `id`, if held.
    public func rule(id: UInt64) -> RoomBan? {
        bans.values.first { Self.ruleID(of: $0) == id }
    }

    /// A ban rule's id: a number made from its filter, the same on every coordinator (FNV-1a of
    /// "channel|uid", or "channel|uid|ip" for an address rule; 31 bits, never 0).
    public static func ruleID(of ban: RoomBan) -> UInt64 {
        ruleID(channel: ban.channel, uid: ban.uid, ip: ban.ip)
    }

    /// The id of the rule with this filter (``ruleID(of:)``).
    public static func ruleID(channel: String, uid: UInt32, ip: String = "") -> UInt64 {
        var hash: UInt32 = 2_166_136_261
        for byte in (ip.isEmpty ? "\(channel)|\(uid)" : "\(channel)|\(uid)|\(ip)").utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return UInt64(max(hash & 0x7FFF_FFFF, 1))
    }

    /// Removes the bans that ended more than ``tombstoneMs`` before `nowMs`.
    ///
    /// - Returns: The bans removed, by channel then uid.
    public mutating func purge(nowMs: Int64) -> [RoomBan] {
        let gone = Self.ordered(bans.values.filter { $0.untilMs <= nowMs &- Self.tombstoneMs })
        for ban in gone { bans[BanKey(ban)] = nil }
        return gone
    }

    /// Takes in bans from another coordinator or the store, combined as in ``add(_:)``.
    ///
    /// - Returns: The bans whose record changed, as now in force, by channel then uid.
    public mutating func merge(_ incoming: [RoomBan]) -> [RoomBan] {
        var changed: [BanKey: RoomBan] = [:]
        // A ban with no filter, or an address not spelled as the edges compare it, is not taken:
        // an edge would refuse the whole list that carries it.
        for ban in incoming where (!ban.channel.isEmpty || ban.uid != 0 || !ban.ip.isEmpty)
            && (ban.ip.isEmpty || IPAddress.canonical(ban.ip) == ban.ip) {
            let key = BanKey(ban)
            let before = bans[key]
            let after: RoomBan
            if let before, ban.updatedAtMs != before.updatedAtMs {
                // The later change wins whole: a shortened or lifted rule stays so.
                after = ban.updatedAtMs > before.updatedAtMs ? Self.known(ban) : before
            } else if let before, before.lifted {
                // A lifting stands against any copy of the same moment, whatever the order.
                after = before
            } else if ban.lifted {
                after = Self.known(ban)
            } else {
                after = add(ban)
            }
            bans[key] = after
            if after != before { changed[key] = after }
        }
        return Self.ordered(changed.values)
    }

    /// `ban` with the known fields only (a newer coordinator's additions are not carried).
    private static func known(_ ban: RoomBan) -> RoomBan {
        var result = RoomBan()
        result.channel = ban.channel
        result.uid = ban.uid
        result.ip = ban.ip
        result.untilMs = ban.untilMs
        result.privileges = ban.privileges.isEmpty ? [joinPrivilege] : Array(Set(ban.privileges)).sorted()
        result.createdAtMs = ban.createdAtMs
        result.updatedAtMs = ban.updatedAtMs
        result.lifted = ban.lifted
        return result
    }

    private static func combined(_ current: RoomBan?, _ ban: RoomBan) -> RoomBan {
        // Built from the known fields only, so the result does not depend on which copy came
        // last (fields a newer coordinator added are not carried through a merge).
        var result = known(ban)
        if let current, !current.lifted {
            result.privileges = Set(result.privileges).union(current.privileges).sorted()
            result.untilMs = max(current.untilMs, ban.untilMs)
            result.createdAtMs = [current.createdAtMs, ban.createdAtMs].filter { $0 > 0 }.min() ?? 0
            result.updatedAtMs = max(current.updatedAtMs, ban.updatedAtMs)
        }
        result.lifted = false
        return result
    }

    private static func ordered(_ bans: some Sequence<RoomBan>) -> [RoomBan] {
        bans.sorted { ($0.channel, $0.uid, $0.ip) < ($1.channel, $1.uid, $1.ip) }
    }
}
