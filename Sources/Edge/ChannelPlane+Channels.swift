import ShowroomWire

// Channel connections: join, leave, role, options, token renewal; publishing follows from them.

extension ChannelPlane {
    /// Joins a channel (`joinChannel` / `joinChannelEx`): one more channel connection for the
    /// session, with its own role and options.
    ///
    /// On success the reply comes first, then what the joiner needs to know about the channel —
    /// user-joined for every broadcaster there, remote-track-published for every track, the start
    /// of its subscriptions (GOP-cache flushes or keyframe requests) — then, if it joined as a
    /// broadcaster, user-joined to the others and its tracks published.
    ///
    /// If another session holds the same uid in the channel, that connection is closed
    /// (``ShowroomError/uidReplaced(_:)``) and its user goes offline (dropped) first: the newer
    /// join wins, as when a client reconnects before its old session timed out.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - name: The channel.
    ///   - requestedUID: The user's uid; 0 takes the grant's uid or, with a wildcard grant, a free
    ///     uid the edge assigns.
    ///   - role: Broadcaster or audience.
    ///   - options: The connection's media options.
    ///   - grant: What the verified token allows.
    ///   - now: The current clock value.
    /// - Returns: The directives, with the channel's creation (first join) and the join reported.
    ///   Refusals: `NO_SESSION`, `INVALID_ARGUMENT` (empty channel name),
    ///   `TOKEN_CHANNEL_MISMATCH`, `TOKEN_UID_MISMATCH`, `TOKEN_EXPIRED`, `TOKEN_MISSING_PRIVILEGE`,
    ///   `PRIVILEGE_EXPIRED`, `BANNED` (from the channel, or from publishing for a broadcaster),
    ///   `ALREADY_JOINED`,
    ///   `TOO_MANY_CHANNELS`, `CHANNEL_FULL`, `TOO_MANY_PUBLISHERS`.
    public mutating func join(
        _ session: SessionID, requestID: UInt64 = 0, channel name: String, uid requestedUID: UInt32,
        role: ClientRole, options: MediaOptions, grant: ChannelGrant, now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        func refuse(_ error: ShowroomError) -> [EdgeDirective] {
            fail(error, .join, requestID: requestID, to: session, channel: name, now: now, &out)
            return out
        }
        guard let client = sessions[session] else {
            return refuse(.noSession("open a session before joining channel \(name)"))
        }
        touch(session, now: now)
        guard !name.isEmpty else { return refuse(.invalidArgument("the channel name is empty")) }
        var channel = take(name) ?? Channel(name: name, createdAt: now)
        defer { store(channel, now: now, &out) }

        var uid = requestedUID != 0 ? requestedUID : grant.uid
        if uid == 0 { uid = assignUID(in: channel) }
        guard grant.covers(channel: name, uid: uid) else {
            return refuse(.grantMismatch(grant, channel: name, uid: uid))
        }
        if grant.tokenExpiry.hasPassed(at: now) {
            return refuse(ShowroomError(.tokenExpired, "the token has expired; fetch a new one from the app server"))
        }
        if let error = grant.refusal(of: .join, at: now, for: "join channel \(name)") { return refuse(error) }
        if let ban = activeBan(channel: name, uid: uid, of: session, now: now), ban.bansJoining {
            return refuse(.banned("uid \(uid) is banned from channel \(name) until \(ban.endDescription)"))
        }
        guard !client.channels.contains(name) else {
            return refuse(.alreadyJoined("this session is already connected to channel \(name); leave it first or update its options"))
        }
        let limits = settings.limits
        guard client.channels.count < limits.maxChannelsPerSession else {
            return refuse(.tooManyChannels("this session holds \(client.channels.count) channel connections, the most an edge allows (\(limits.maxChannelsPerSession)); leave one first"))
        }
        let replaced = channel.sessionByUID[uid]
        let replacedRole = replaced.flatMap { channel.connections[$0]?.role }
        let members = channel.connections.count - (replaced == nil ? 0 : 1)
        guard members < limits.maxSubscribersPerChannel else {
            return refuse(.channelFull("channel \(name) has \(members) connections, the most an edge allows (\(limits.maxSubscribersPerChannel))"))
        }
        if role == .broadcaster {
            if let error = broadcastBanRefusal(channel: name, uid: uid, of: session, now: now) { return refuse(error) }
            if let error = publishRefusal(grant, uid: uid, now: now, channel: name) { return refuse(error) }
            let broadcasters = channel.broadcasters - (replacedRole == .broadcaster ? 1 : 0)
            guard broadcasters < limits.maxPublishersPerChannel else {
                return refuse(.tooManyPublishers("channel \(name) has \(broadcasters) broadcasters, the most an edge allows (\(limits.maxPublishersPerChannel)); join as audience"))
            }
        }

        // A publisher arriving where a relay's stand-in held its uid (this edge became the
        // channel's origin) takes the stand-in's place and tracks over: its viewers keep their
        // subscriptions and see nobody go offline or join.
        var takenOver: TrackKinds?
        if let replaced, role == .broadcaster, replacedRole == .broadcaster, sessions[replaced]?.isStandIn == true,
           let standIn = detach(replaced, from: &channel) {
            out.append(.log(EdgeLogEntry(.info, "uid \(uid) in channel \(name) takes over from its relay stand-in")))
            takenOver = standIn.publishing
            for kind in standIn.publishing.kinds { channel.tracks[TrackKey(uid: uid, kind: kind)]?.publisher = session }
        } else if let replaced {
            out.append(.log(EdgeLogEntry(.info, "uid \(uid) in channel \(name) moves from session \(replaced) to \(session)")))
            removeConnection(replaced, from: &channel, reason: .replaced, now: now, &out)
            out.append(.send(.connectionClosed(channel: name, reason: .uidReplaced("uid \(uid) joined channel \(name) from another session")), to: replaced))
        }

        lastConnectionID += 1
        var connection = ChannelMembership(
            id: ConnectionID(lastConnectionID), session: session, channel: name, uid: uid, joinedAt: now,
            role: role, options: options, grant: grant)
        connection.publishing = takenOver ?? []
        connection.unreported = client.isStandIn || (client.isRelayLink && RelayLinkIdentity.isLinkUID(uid))
        if !connection.unreported {
            if !channel.reported {
                channel.reported = true
                out.append(.report(ChannelActivity(.channelCreated, channel: name, at: now)))
            }
            out.append(.report(ChannelActivity(role == .broadcaster ? .broadcasterJoined : .audienceJoined, channel: name, uid: uid, at: now)))
        }
        channel.connections[session] = connection
        channel.order.append(session)
        channel.sessionByUID[uid] = session
        sessions[session]?.channels.append(name)
        statistics.joins += 1
        out.append(.log(EdgeLogEntry(.info, "session \(session) joined channel \(name) as uid \(uid), \(role) (\(connection.id))")))
        reply(.joined(channel: name, uid: uid, connection: connection.id, role: role), .join, requestID: requestID, to: session, &out)

        // What the joiner needs to know: the visible users, the tracks, its subscriptions.
        for other in channel.broadcasterSessions where other != session {
            out.append(.send(.userJoined(channel: name, uid: channel.connections[other]!.uid), to: session))
        }
        for key in channel.trackKeys where key.uid != uid {
            out.append(.send(.remoteTrackPublished(key.id(in: name)), to: session))
        }
        reconcileSubscriptions(of: session, in: &channel, on: .subscribed, off: .unsubscribed, now: now, &out)

        if role == .broadcaster {
            channel.broadcasters += 1
            if takenOver == nil { announceJoined(session, in: channel, &out) }
            reconcilePublishing(of: session, in: &channel, now: now, &out)
        }
        return out
    }

    /// Leaves a channel (`leaveChannel` / `leaveChannelEx`): a broadcaster goes offline (quit) for
    /// the others, its tracks stop.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - name: The channel.
    ///   - now: The current clock value.
    /// - Returns: The directives; `NOT_JOINED` if the session is not connected to the channel.
    public mutating func leave(_ session: SessionID, requestID: UInt64 = 0, channel name: String, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard sessions[session] != nil else {
            fail(.noSession("no session is open on this connection"), .leave, requestID: requestID, to: session, channel: name, now: now, &out)
            return out
        }
        // Through joinedChannel: a leave of a channel this session is not in must put the channel
        // back untouched (taking it out and failing dropped everyone in it, silently).
        guard var channel = joinedChannel(session, name, .leave, requestID: requestID, now: now, &out) else { return out }
        removeConnection(session, from: &channel, reason: .quit, now: now, &out)
        store(channel, now: now, &out)
        reply(.left(channel: name), .leave, requestID: requestID, to: session, &out)
        return out
    }

    /// Switches the role of a channel connection (`setClientRole`). Becoming a broadcaster needs a
    /// publish privilege and room among the channel's broadcasters; the others then see the user
    /// join and its tracks published. Becoming audience stops its tracks and the others see it go
    /// offline (became audience).
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - name: The channel.
    ///   - role: The new role.
    ///   - now: The current clock value.
    /// - Returns: The directives, with the role change reported; refusals `NOT_JOINED`,
    ///   `BANNED` (from publishing), `TOKEN_MISSING_PRIVILEGE`, `PRIVILEGE_EXPIRED`,
    ///   `TOO_MANY_PUBLISHERS`.
    public mutating func setRole(_ session: SessionID, requestID: UInt64 = 0, channel name: String, role: ClientRole, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard var channel = joinedChannel(session, name, .setRole, requestID: requestID, now: now, &out) else { return out }
        defer { store(channel, now: now, &out) }
        if let error = roleChangeRefusal(session, to: role, in: channel, now: now) {
            fail(error, .setRole, requestID: requestID, to: session, channel: name, now: now, &out)
            return out
        }
        changeRole(of: session, to: role, in: &channel, now: now, &out)
        reply(.roleSet(channel: name, role: role), .setRole, requestID: requestID, to: session, &out)
        return out
    }

    /// Changes a channel connection's options (`updateChannelEx`): what it publishes, what it
    /// subscribes to automatically, and its role if the update sets one. All or nothing: a refused
    /// role switch changes nothing.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - name: The channel.
    ///   - update: The fields to change.
    ///   - now: The current clock value.
    /// - Returns: The directives; refusals as for ``setRole(_:requestID:channel:role:now:)``.
    public mutating func updateOptions(
        _ session: SessionID, requestID: UInt64 = 0, channel name: String, update: MediaOptionsUpdate, now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard var channel = joinedChannel(session, name, .updateOptions, requestID: requestID, now: now, &out) else { return out }
        defer { store(channel, now: now, &out) }
        let connection = channel.connections[session]!
        if let role = update.role, let error = roleChangeRefusal(session, to: role, in: channel, now: now) {
            fail(error, .updateOptions, requestID: requestID, to: session, channel: name, now: now, &out)
            return out
        }
        let options = connection.options.applying(update)
        channel.connections[session]!.options = options
        if let role = update.role {
            changeRole(of: session, to: role, in: &channel, now: now, &out)
        }
        reconcilePublishing(of: session, in: &channel, now: now, &out)
        if options.autoSubscribeAudio != connection.options.autoSubscribeAudio
            || options.autoSubscribeVideo != connection.options.autoSubscribeVideo
        {
            reconcileSubscriptions(of: session, in: &channel, on: .subscribed, off: .unsubscribed, now: now, &out)
        }
        reply(.optionsUpdated(channel: name), .updateOptions, requestID: requestID, to: session, &out)
        return out
    }

    /// Replaces a connection's grant in place (`renewToken`): no rejoin, nothing interrupted. The
    /// expiry warning is re-armed, and tracks stopped by an expired privilege the new grant renews
    /// are published again.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - name: The channel.
    ///   - grant: What the new, verified token allows.
    ///   - now: The current clock value.
    /// - Returns: The directives; refusals `NOT_JOINED`, `TOKEN_CHANNEL_MISMATCH` /
    ///   `TOKEN_UID_MISMATCH` (another channel or uid), `TOKEN_EXPIRED`, `TOKEN_MISSING_PRIVILEGE` or
    ///   `PRIVILEGE_EXPIRED` (no valid join privilege).
    public mutating func renewToken(_ session: SessionID, requestID: UInt64 = 0, channel name: String, grant: ChannelGrant, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard var channel = joinedChannel(session, name, .renewToken, requestID: requestID, now: now, &out) else { return out }
        defer { store(channel, now: now, &out) }
        let uid = channel.connections[session]!.uid
        var refusal: ShowroomError? = nil
        if !grant.covers(channel: name, uid: uid) {
            refusal = .grantMismatch(grant, channel: name, uid: uid)
        } else if grant.tokenExpiry.hasPassed(at: now) {
            refusal = ShowroomError(.tokenExpired, "the new token has already expired; fetch a new one from the app server")
        } else {
            refusal = grant.refusal(of: .join, at: now, for: "stay in channel \(name)")
        }
        if let refusal {
            fail(refusal, .renewToken, requestID: requestID, to: session, channel: name, now: now, &out)
            return out
        }
        channel.connections[session]!.grant = grant
        channel.connections[session]!.warnedDeadline = nil
        channel.connections[session]!.expiredPrivileges = []
        reconcilePublishing(of: session, in: &channel, now: now, &out)
        reply(.tokenRenewed(channel: name), .renewToken, requestID: requestID, to: session, &out)
        return out
    }

    // MARK: - Internals

    /// The channel a request is about, taken out for mutation, or nil after failing the request
    /// (no session, not joined).
    mutating func joinedChannel(
        _ session: SessionID, _ name: String, _ kind: EdgeRequestKind, requestID: UInt64, now: Duration,
        _ out: inout [EdgeDirective]
    ) -> Channel<Frame>? {
        guard sessions[session] != nil else {
            fail(.noSession("no session is open on this connection"), kind, requestID: requestID, to: session, channel: name, now: now, &out)
            return nil
        }
        touch(session, now: now)
        guard let channel = take(name) else {
            fail(notJoined(name), kind, requestID: requestID, to: session, channel: name, now: now, &out)
            return nil
        }
        guard channel.connections[session] != nil else {
            store(channel, now: now, &out)
            fail(notJoined(name), kind, requestID: requestID, to: session, channel: name, now: now, &out)
            return nil
        }
        return channel
    }

    func notJoined(_ name: String) -> ShowroomError {
        .notJoined("this session is not connected to channel \(name); join it first")
    }

    /// A uid nobody holds in the channel, from the edge's own range.
    mutating func assignUID(in channel: Channel<Frame>) -> UInt32 {
        repeat {
            lastAssignedUID = lastAssignedUID < Self.firstAssignedUID || lastAssignedUID == .max ? Self.firstAssignedUID : lastAssignedUID + 1
        } while channel.sessionByUID[lastAssignedUID] != nil
        return lastAssignedUID
    }

    /// Why the grant does not allow becoming a broadcaster (no usable publish privilege), or nil.
    func publishRefusal(_ grant: ChannelGrant, uid: UInt32, now: Duration, channel: String) -> ShowroomError? {
        // A room's channel: the stage decides, whatever the token allows.
        if let refusal = stageRefusal(channel: channel, uid: uid) { return refusal }
        if seated(channel: channel, uid: uid) { return nil }
        if grant.allows(.publishAudio, at: now) || grant.allows(.publishVideo, at: now) { return nil }
        if grant.privileges[.publishAudio] != nil || grant.privileges[.publishVideo] != nil {
            return .privilegeExpired("the token's publish privileges have expired; renew the token to broadcast in channel \(channel)")
        }
        return ShowroomError(.tokenMissingPrivilege, "the token grants no publish privilege, needed to broadcast in channel \(channel); ask the app server for a publisher token")
    }

    /// Why `session` may not switch to `role`, or nil.
    func roleChangeRefusal(_ session: SessionID, to role: ClientRole, in channel: Channel<Frame>, now: Duration) -> ShowroomError? {
        let connection = channel.connections[session]!
        guard role == .broadcaster, connection.role != .broadcaster else { return nil }
        if let error = broadcastBanRefusal(channel: channel.name, uid: connection.uid, of: session, now: now) { return error }
        if let error = publishRefusal(connection.grant, uid: connection.uid, now: now, channel: channel.name) { return error }
        let limit = settings.limits.maxPublishersPerChannel
        if channel.broadcasters >= limit {
            return .tooManyPublishers("channel \(channel.name) has \(channel.broadcasters) broadcasters, the most an edge allows (\(limit))")
        }
        return nil
    }

    /// Switches a connection's role (already validated) with its visibility and publishing effects.
    mutating func changeRole(of session: SessionID, to role: ClientRole, in channel: inout Channel<Frame>, now: Duration, _ out: inout [EdgeDirective]) {
        let connection = channel.connections[session]!
        guard connection.role != role else { return }
        out.append(.log(EdgeLogEntry(.info, "uid \(connection.uid) in channel \(channel.name) is now \(role)")))
        switch role {
        case .audience:
            for kind in connection.publishing.kinds {
                unpublish(TrackKey(uid: connection.uid, kind: kind), in: &channel, reason: .remoteOffline, announce: false, &out)
            }
            channel.connections[session]!.role = .audience
            channel.broadcasters -= 1
            out.append(.report(ChannelActivity(.roleToAudience, channel: channel.name, uid: connection.uid, at: now)))
            for other in channel.order where other != session {
                out.append(.send(.userOffline(channel: channel.name, uid: connection.uid, reason: .becameAudience), to: other))
            }
        case .broadcaster:
            channel.connections[session]!.role = .broadcaster
            channel.broadcasters += 1
            out.append(.report(ChannelActivity(.roleToBroadcaster, channel: channel.name, uid: connection.uid, at: now)))
            announceJoined(session, in: channel, &out)
            reconcilePublishing(of: session, in: &channel, now: now, &out)
        }
    }

    /// Tells everyone else that the broadcaster `session` is in the channel.
    func announceJoined(_ session: SessionID, in channel: Channel<Frame>, _ out: inout [EdgeDirective]) {
        let uid = channel.connections[session]!.uid
        for other in channel.order where other != session {
            out.append(.send(.userJoined(channel: channel.name, uid: uid), to: other))
        }
    }

    /// Removes a connection: its tracks stop (subscribers see the publisher go offline), its
    /// subscriptions end, a broadcaster goes offline for the others (quit, or dropped for any
    /// other `reason`), and the leave is reported with `reason`.
    mutating func removeConnection(
        _ session: SessionID, from channel: inout Channel<Frame>, reason: ChannelActivity.LeaveReason, now: Duration,
        _ out: inout [EdgeDirective]
    ) {
        guard let connection = channel.connections[session] else { return }
        // Every removal is logged with its reason, whatever led to it.
        out.append(.log(EdgeLogEntry(.info, "session \(session) (uid \(connection.uid), \(connection.role)) out of channel \(channel.name): \(reason)")))
        for kind in connection.publishing.kinds {
            unpublish(TrackKey(uid: connection.uid, kind: kind), in: &channel, reason: .remoteOffline, announce: false, &out)
        }
        for key in channel.trackKeys {
            channel.tracks[key]!.removeSubscriber(session)
        }
        detach(session, from: &channel)
        if connection.role == .broadcaster {
            let offline: UserOfflineReason = reason == .quit && sessions[session]?.isForwardLink == true ? .forwardStopped : reason.offlineReason
            for other in channel.order {
                out.append(.send(.userOffline(channel: channel.name, uid: connection.uid, reason: offline), to: other))
            }
        }
        guard !connection.unreported else { return }
        out.append(.report(ChannelActivity(
            connection.role == .broadcaster ? .broadcasterLeft : .audienceLeft, channel: channel.name, uid: connection.uid,
            reason: reason, at: now)))
    }

    /// Takes a connection out of the channel's books (membership, order, uid, the session's
    /// channels, the broadcaster count), telling nobody: its tracks and subscriptions are the
    /// caller's.
    @discardableResult
    mutating func detach(_ session: SessionID, from channel: inout Channel<Frame>) -> ChannelMembership? {
        guard let connection = channel.connections.removeValue(forKey: session) else { return nil }
        channel.order.removeAll { $0 == session }
        if channel.sessionByUID[connection.uid] == session { channel.sessionByUID[connection.uid] = nil }
        sessions[session]?.channels.removeAll { $0 == channel.name }
        if connection.role == .broadcaster { channel.broadcasters -= 1 }
        return connection
    }

    /// Publishes or stops the connection's tracks so they match what role, options and grant allow.
    mutating func reconcilePublishing(of session: SessionID, in channel: inout Channel<Frame>, now: Duration, _ out: inout [EdgeDirective]) {
        guard let connection = channel.connections[session] else { return }
        var allowed = allowedTracks(of: connection, in: channel.name, now: now)
        if let ban = activeBan(channel: channel.name, uid: connection.uid, of: session, now: now) {
            for kind in TrackKind.allCases where ban.bansPublishing(kind) { allowed.remove(TrackKinds(kind)) }
        }
        for kind in TrackKind.allCases {
            let key = TrackKey(uid: connection.uid, kind: kind)
            if allowed.contains(kind), !connection.publishing.contains(kind) {
                publish(key, by: session, in: &channel, now: now, &out)
            } else if !allowed.contains(kind), connection.publishing.contains(kind) {
                unpublish(key, in: &channel, reason: .remoteMuted, announce: true, &out)
            }
        }
    }

    /// Starts a track: every other connection hears of it and subscribes if it wants to.
    mutating func publish(_ key: TrackKey, by session: SessionID, in channel: inout Channel<Frame>, now: Duration, _ out: inout [EdgeDirective]) {
        channel.tracks[key] = TrackForwarder(kind: key.kind, publisher: session, gopMaxFrames: settings.gopMaxFrames, gopMaxBytes: settings.gopMaxBytes)
        channel.connections[session]!.publishing.insert(TrackKinds(key.kind))
        let track = key.id(in: channel.name)
        for other in channel.order where other != session {
            out.append(.send(.remoteTrackPublished(track), to: other))
            reconcileSubscription(of: other, to: key, in: &channel, on: .remoteUnmuted, off: .unsubscribed, now: now, &out)
        }
    }

    /// Stops a track: its video subscribers see it stop with `reason`; with `announce`, every
    /// other connection hears it is unpublished (not when its publisher goes offline: offline says
    /// it all).
    mutating func unpublish(_ key: TrackKey, in channel: inout Channel<Frame>, reason: RemoteVideoStateReason, announce: Bool, _ out: inout [EdgeDirective]) {
        guard let forwarder = channel.tracks.removeValue(forKey: key) else { return }
        channel.connections[forwarder.publisher]?.publishing.remove(TrackKinds(key.kind))
        if key.kind == .audio { channel.volume.remove(uid: key.uid) }
        let track = key.id(in: channel.name)
        if key.kind == .video {
            forwarder.forEachSubscriber { subscriber, _, muted in
                // A muted subscriber was told "stopped" when it muted.
                if !muted { out.append(.send(.remoteVideoStateChanged(track, state: .stopped, reason: reason), to: subscriber)) }
            }
        }
        if announce {
            for other in channel.order where other != forwarder.publisher {
                out.append(.send(.remoteTrackUnpublished(track), to: other))
            }
        }
    }
}
