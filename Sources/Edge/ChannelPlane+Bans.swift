import ShowroomWire

// Bans from the room-coordinators: kicks, refused joins and publishes, expiry.

extension ChannelPlane {
    /// The bans in force, by channel, uid and address.
    public var activeBans: [ChannelBan] {
        bans.values.sorted { $0.key < $1.key }
    }

    /// Enforces bans (`EDGE_BANS` from a room-coordinator, or its `BAN_LIST` answer at start).
    ///
    /// A ban replaces the one held for the same channel, uid and address (the coordinator's latest word
    /// wins; a narrower ban lifts what it no longer lists). Then, for the uid's connection to the
    /// channel:
    /// - a join ban closes it at once: it is told ``EdgeEvent/connectionClosed(channel:reason:)``
    ///   with ``ShowroomError/banned(_:)`` naming the end of the ban, the others see a broadcaster
    ///   go offline (dropped: the client contract has no "kicked"), and the leave is reported
    ///   kicked;
    /// - a publish ban stops its tracks of that kind (the user is told once with a `BANNED`
    ///   error event); it stays, and stays broadcaster, but its frames of that kind are refused.
    ///
    /// Later, while the ban holds, a join is refused with `BANNED`, and so are joining as
    /// broadcaster and switching to broadcaster under a publish ban. A ban whose end has already
    /// passed still closes matching connections (a kick without a ban) but is not kept.
    ///
    /// - Parameters:
    ///   - bans: The bans, in order.
    ///   - now: The current clock value.
    /// - Returns: How many connections were closed, and the directives.
    public mutating func applyBans(_ bans: [ChannelBan], now: Duration) -> (connectionsClosed: Int, directives: [EdgeDirective]) {
        var out: [EdgeDirective] = []
        var closed = 0
        for ban in bans {
            if ban.holds(at: now), !ban.isLifted {
                setBan(ban, for: ban.key)
                if nextBanExpiry == nil || ban.until < nextBanExpiry! { nextBanExpiry = ban.until }
            } else {
                setBan(nil, for: ban.key)
            }
            out.append(.log(EdgeLogEntry(.notice, ban.isLifted ? "ban lifted: \(ban)" : "ban \(ban)")))
            for name in channelNames(matching: ban) {
                guard var channel = take(name) else { continue }
                for session in channel.order {
                    guard let connection = channel.connections[session],
                          ban.matches(uid: connection.uid, address: sessions[session]?.address) else { continue }
                    // The ban as it applies to this user here (a rule may leave uid or channel open).
                    var ban = ban
                    ban.uid = connection.uid
                    ban.channel = name
                    if ban.bansJoining {
                        kick(session, from: &channel, ban: ban, now: now, &out)
                        closed += 1
                    } else {
                        let before = connection.publishing
                        reconcilePublishing(of: session, in: &channel, now: now, &out)
                        for kind in before.kinds where ban.bansPublishing(kind) && ban.holds(at: now) {
                            out.append(.send(.error(publishBanned(ban, kind), channel: name, track: kind), to: session))
                        }
                    }
                }
                store(channel, now: now, &out)
            }
        }
        return (closed, out)
    }

    /// The channels a ban concerns: its own, or for a ban in every channel, those the uid is in
    /// (every channel for an address ban of everyone).
    private func channelNames(matching ban: ChannelBan) -> [String] {
        guard ban.channel.isEmpty else { return [ban.channel] }
        guard ban.uid != 0 else { return channels.keys.sorted() }
        return channels.values.filter { $0.sessionByUID[ban.uid] != nil }.map(\.name).sorted()
    }

    /// Closes a banned user's connection.
    mutating func kick(_ session: SessionID, from channel: inout Channel<Frame>, ban: ChannelBan, now: Duration, _ out: inout [EdgeDirective]) {
        let name = channel.name
        let error: ShowroomError
        if ban.holds(at: now) {
            error = .banned("uid \(ban.uid) is banned from channel \(name) until \(ban.endDescription); rejoin after that")
        } else {
            error = .banned("uid \(ban.uid) was removed from channel \(name) by an administrator")
        }
        out.append(.log(EdgeLogEntry(.notice, "session \(session) kicked from channel \(name): \(error.message)")))
        removeConnection(session, from: &channel, reason: .kicked, now: now, &out)
        out.append(.send(.connectionClosed(channel: name, reason: error), to: session))
    }

    /// The ban that holds for the uid of `session` in the channel at `now`, if any.
    /// A ban of the uid in every channel, one of everyone in the channel, and those of the
    /// session's address count too: what holds is their union, to the latest end. Looked up key
    /// by key, with nothing allocated: the media path asks for every frame while bans exist.
    func activeBan(channel: String, uid: UInt32, of session: SessionID, now: Duration) -> ChannelBan? {
        guard !bans.isEmpty else { return nil }
        var union: ChannelBan?
        func add(_ key: ChannelBan.Key) {
            guard let ban = bans[key], ban.holds(at: now) else { return }
            guard var combined = union else { return union = ban }
            combined.privileges.formUnion(ban.privileges)
            if ban.until > combined.until {
                combined.until = ban.until
                combined.untilMs = ban.untilMs
            }
            union = combined
        }
        add(ChannelBan.Key(channel: channel, uid: uid))
        add(ChannelBan.Key(channel: "", uid: uid))
        add(ChannelBan.Key(channel: channel, uid: 0))
        if addressBans > 0, let address = sessions[session]?.address {
            add(ChannelBan.Key(channel: channel, uid: uid, ip: address))
            add(ChannelBan.Key(channel: "", uid: uid, ip: address))
            add(ChannelBan.Key(channel: channel, uid: 0, ip: address))
            add(ChannelBan.Key(channel: "", uid: 0, ip: address))
        }
        guard var ban = union else { return nil }
        ban.channel = channel
        ban.uid = uid
        return ban
    }

    /// Why the uid of `session` may not become broadcaster in the channel (a publish ban), or nil.
    func broadcastBanRefusal(channel: String, uid: UInt32, of session: SessionID, now: Duration) -> ShowroomError? {
        guard let ban = activeBan(channel: channel, uid: uid, of: session, now: now), ban.bansBroadcasting else { return nil }
        let kinds = TrackKind.allCases.filter { ban.bansPublishing($0) }.map { "\($0)" }.joined(separator: " and ")
        return .banned("uid \(uid) is banned from publishing \(kinds) in channel \(channel) until \(ban.endDescription); stay audience")
    }

    /// The refusal of a banned publish.
    func publishBanned(_ ban: ChannelBan, _ kind: TrackKind) -> ShowroomError {
        .banned("uid \(ban.uid) is banned from publishing \(kind) in channel \(ban.channel) until \(ban.endDescription)")
    }

    /// Forgets the bans that ended; tracks a publish ban stopped are published again if role,
    /// options and grant still allow it.
    mutating func expireBans(now: Duration, _ out: inout [EdgeDirective]) {
        guard let next = nextBanExpiry, next <= now else { return }
        var ended: [ChannelBan] = []
        nextBanExpiry = nil
        for ban in bans.values {
            if ban.holds(at: now) {
                if nextBanExpiry == nil || ban.until < nextBanExpiry! { nextBanExpiry = ban.until }
            } else {
                ended.append(ban)
            }
        }
        for ban in ended.sorted(by: { $0.key < $1.key }) {
            setBan(nil, for: ban.key)
            out.append(.log(EdgeLogEntry(.info, "ban ended: \(ban)")))
            guard ban.bansBroadcasting else { continue }
            for name in channelNames(matching: ban) {
                guard var channel = take(name) else { continue }
                for session in channel.order
                where channel.connections[session].map({ ban.matches(uid: $0.uid, address: sessions[session]?.address) }) == true {
                    reconcilePublishing(of: session, in: &channel, now: now, &out)
                }
                store(channel, now: now, &out)
            }
        }
    }
}
