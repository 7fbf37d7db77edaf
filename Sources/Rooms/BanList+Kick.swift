import ShowroomWire

extension BanList {
    /// The longest ban a kick may ask for: a day.
    public static let maxBanSeconds: UInt32 = 86_400
    /// The longest ban rule: Agora's 86,430 seconds.
    public static let maxRuleSeconds: UInt32 = 86_430
    /// The most bans held (rules and kicks, ended ones until they are forgotten).
    public static let maxBans = 10_000

    /// The ban a ban rule asks for, checked: a valid channel or "" (every channel), a uid or 0
    /// (everyone), an IP address or "" (any address), not all three open; privileges among join
    /// (1), publish audio (2) and publish video (3), at least one; at most ``maxRuleSeconds``. 0
    /// seconds is a ban that has ended already: it kicks who matches now and keeps nothing. The
    /// address is kept in its canonical spelling (``IPAddress/canonical(_:)``), the one edges
    /// compare.
    ///
    /// - Throws: `INVALID_ARGUMENT`, saying what to change.
    public static func rule(for request: RoomBanRuleCreate, nowMs: Int64) throws(ShowroomError) -> RoomBan {
        if !request.channel.isEmpty { try Names.validateChannel(request.channel) }
        var ip = ""
        if !request.ip.isEmpty {
            guard let canonical = IPAddress.canonical(request.ip) else {
                throw .invalidArgument("ip '\(request.ip.prefix(48))' is not an IPv4 or IPv6 address (no host names, ports or prefixes)")
            }
            ip = canonical
        }
        guard !request.channel.isEmpty || request.uid != 0 || !ip.isEmpty else {
            throw .invalidArgument("a ban rule names a channel (cname), a uid, an ip or some of them; this one names none")
        }
        guard !request.privileges.isEmpty else {
            throw .invalidArgument("a ban rule lists its privileges: join_channel, publish_audio, publish_video")
        }
        if let bad = request.privileges.first(where: { !(1...3).contains($0) }) {
            throw .invalidArgument("privilege \(bad) cannot be banned; use 1 (join), 2 (publish audio) or 3 (publish video)")
        }
        guard request.seconds <= maxRuleSeconds else {
            throw .invalidArgument("a ban rule lasts at most \(maxRuleSeconds) s, not \(request.seconds)")
        }
        var ban = RoomBan()
        ban.channel = request.channel
        ban.uid = request.uid
        ban.ip = ip
        ban.privileges = Array(Set(request.privileges)).sorted()
        ban.untilMs = nowMs &+ Int64(request.seconds) * 1000
        ban.createdAtMs = nowMs
        ban.updatedAtMs = nowMs
        return ban
    }

    /// The ban a kick request asks for, checked: a channel and a non-zero uid, at most a day,
    /// privileges among join (1), publish audio (2) and publish video (3) — none means join. A kick
    /// without a ban still closes the connection: a ban that ends a second from `nowMs`. The
    /// request's admin signature is the caller's to verify.
    ///
    /// - Throws: `INVALID_ARGUMENT`, saying what to change.
    public static func ban(for request: RoomKickRequest, nowMs: Int64) throws(ShowroomError) -> RoomBan {
        guard request.uid != 0 else {
            throw .invalidArgument("a kick names a non-zero uid")
        }
        // A ban is stored and replicated to every coordinator and edge: only a channel a client
        // could be in is worth one.
        try Names.validateChannel(request.channel)
        guard request.banSeconds <= maxBanSeconds else {
            throw .invalidArgument("ban of \(request.banSeconds) s is over a day (\(maxBanSeconds) s)")
        }
        if let bad = request.privileges.first(where: { !(1...3).contains($0) }) {
            throw .invalidArgument("privilege \(bad) cannot be banned; use 1 (join), 2 (publish audio) or 3 (publish video)")
        }
        var ban = RoomBan()
        ban.channel = request.channel
        ban.uid = request.uid
        ban.privileges = request.privileges.isEmpty ? [joinPrivilege] : request.privileges
        ban.untilMs = nowMs &+ Int64(max(1, request.banSeconds)) * 1000
        ban.createdAtMs = nowMs
        ban.updatedAtMs = nowMs
        return ban
    }
}

extension BanList {
    /// What a `BAN_RULE` request comes to (``change(_:nowMs:)``).
    public enum RuleChange: Equatable, Sendable {
        /// The rules in force, by filter.
        case list([RoomBan])
        /// The rule as it now stands, for every edge to enforce and the caller to be answered
        /// with; `keep` is false for a rule of 0 seconds, a kick that leaves no rule behind.
        case enforce(RoomBan, keep: Bool)
    }

    /// Carries out a `BAN_RULE` request on the list: a rule made (checked as
    /// ``rule(for:nowMs:)``, and joined with the one of the same filter), a rule's end set anew
    /// from now, a rule lifted (its tombstone kept), or the list.
    ///
    /// - Throws: `INVALID_ARGUMENT` for a rule that is not one, a duration past
    ///   ``maxRuleSeconds``, a full list (``maxBans``) or a request that names no change;
    ///   `BAN_RULE_NOT_FOUND` for changing a rule that is not in force.
    public mutating func change(_ request: RoomBanRuleRequest, nowMs: Int64) throws(ShowroomError) -> RuleChange {
        switch request.change {
        case .list:
            return .list(active(nowMs: nowMs))
        case .create(let create):
            let rule = try Self.rule(for: create, nowMs: nowMs)
            guard create.seconds > 0 else { return .enforce(rule, keep: false) }
            guard bans.count < Self.maxBans || bans[BanKey(rule)] != nil else {
                throw .invalidArgument("the cluster holds \(Self.maxBans) bans already; lift some first")
            }
            return .enforce(add(rule), keep: true)
        case .update(let update):
            return .enforce(try setEnd(ofRule: update.id, seconds: update.seconds, nowMs: nowMs), keep: true)
        case .deleteID(let id):
            return .enforce(try setEnd(ofRule: id, seconds: 0, nowMs: nowMs), keep: true)
        case nil:
            throw .invalidArgument("a BAN_RULE request makes, changes, deletes or lists rules; it named none")
        }
    }

    /// Sets rule `id` to end `seconds` from now; 0 lifts it. The change is later than any copy
    /// of the rule, so it wins where copies meet.
    private mutating func setEnd(ofRule id: UInt64, seconds: UInt32, nowMs: Int64) throws(ShowroomError) -> RoomBan {
        guard seconds <= Self.maxRuleSeconds else {
            throw .invalidArgument("a ban rule lasts at most \(Self.maxRuleSeconds) s, not \(seconds)")
        }
        guard var rule = rule(id: id), !rule.lifted, rule.untilMs > nowMs else {
            throw ShowroomError(.banRuleNotFound, "no ban rule \(id) is in force: it was never made, or was lifted or has ended")
        }
        rule.untilMs = nowMs &+ Int64(seconds) * 1000
        rule.updatedAtMs = max(nowMs, rule.updatedAtMs &+ 1)
        rule.lifted = seconds == 0
        return replace(rule)
    }
}
