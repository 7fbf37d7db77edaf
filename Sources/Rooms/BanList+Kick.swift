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
