import ShowroomWire

// The stage of channels that run rooms: who may publish there, granted by the room's coordinator.

extension ChannelPlane {
    /// The stages in force, by channel name.
    public var activeStages: [ChannelStage] { stages.values.sorted { $0.channel < $1.channel } }

    /// Enforces stages (`EDGE_STAGE` from a room's coordinator). A stage replaces the one held for
    /// its channel unless that one is newer; a removed stage gives the channel back to the token
    /// rules. Then, in each channel: a broadcaster no longer on stage becomes audience at once (its
    /// tracks stop, whatever its client keeps sending; the others see it go offline, "became
    /// audience"; it is told with a `NOT_ON_STAGE` error event; a forward link leaves instead, "forward
    /// stopped"); a broadcaster on stage publishes
    /// what its options say even without a publish privilege in its token.
    ///
    /// - Returns: How many connections were made audience, and the directives.
    public mutating func applyStages(_ incoming: [ChannelStage], now: Duration) -> (demoted: Int, directives: [EdgeDirective]) {
        var out: [EdgeDirective] = []
        var demoted = 0
        for stage in incoming {
            if let held = stages[stage.channel], held.version > stage.version { continue }
            stages[stage.channel] = stage.removed ? nil : stage
            out.append(.log(EdgeLogEntry(.info, "stage of channel \(stage.channel): \(stage.removed ? "removed" : "uids \(stage.uids.sorted())")")))
            guard var channel = take(stage.channel) else { continue }
            for session in channel.order {
                guard let connection = channel.connections[session], connection.role == .broadcaster else { continue }
                if let refusal = stageRefusal(channel: channel.name, uid: connection.uid) {
                    if sessions[session]?.isForwardLink == true {
                        // A forwarded host whose PK ended: it leaves (the others see "forward
                        // stopped"); its source edge hears why.
                        removeConnection(session, from: &channel, reason: .quit, now: now, &out)
                        out.append(.send(.connectionClosed(channel: channel.name, reason: refusal), to: session))
                    } else {
                        changeRole(of: session, to: .audience, in: &channel, now: now, &out)
                        out.append(.send(.error(refusal, channel: channel.name, track: nil), to: session))
                    }
                    demoted += 1
                } else {
                    reconcilePublishing(of: session, in: &channel, now: now, &out)
                }
            }
            store(channel, now: now, &out)
        }
        return (demoted, out)
    }

    /// Why `uid` may not publish in `channel` (a room's channel whose stage it is not on), or nil.
    func stageRefusal(channel: String, uid: UInt32) -> ShowroomError? {
        guard let stage = stages[channel], !stage.uids.contains(uid) else { return nil }
        return ShowroomError(.notOnStage,
            "channel \(channel) runs room \(stage.roomID): only its owner and the co-hosts it seats publish there; ask the owner for a seat")
    }

    /// Whether the channel's stage seats `uid` (publishing needs no publish privilege then).
    func seated(channel: String, uid: UInt32) -> Bool {
        stages[channel]?.uids.contains(uid) ?? false
    }

    /// The tracks the connection may publish now: its role and options, then the stage or the
    /// token.
    func allowedTracks(of connection: ChannelMembership, in channel: String, now: Duration) -> TrackKinds {
        guard connection.role == .broadcaster, stageRefusal(channel: channel, uid: connection.uid) == nil else { return [] }
        guard seated(channel: channel, uid: connection.uid) else { return connection.allowedTracks(at: now) }
        var kinds: TrackKinds = []
        for kind in TrackKind.allCases where connection.options.publishes(kind) { kinds.insert(TrackKinds(kind)) }
        return kinds
    }
}
