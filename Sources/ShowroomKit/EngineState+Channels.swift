internal import EdgeProtocol

// Channel connections: join (following one redirect), leave, preload, the changes the edge
// accepted, and what the edge tells about them.

extension EngineState {
    /// A change to a joined connection that the edge accepted; the record keeps it, so a rejoin
    /// restores it.
    enum AcceptedChange {
        case options(ChannelMediaOptions)
        case role(ClientRole)
        case subscription(TrackID, subscribed: Bool)
        case remoteMute(TrackID, muted: Bool)
        case token(String)
    }

    /// The app joins a channel on `edge` (placed by the cluster, or known from a preload:
    /// `preloaded`).
    mutating func join(
        token: String, connection: ChannelConnection, options: ChannelMediaOptions, edge: EdgeAddress, preloaded: Bool = false,
        primary: Bool, ticket: EngineTicket, now: ContinuousClock.Instant
    ) -> [EngineDirective] {
        guard !isShutDown else { return [.complete(ticket, .failure(.unavailable("the engine has shut down")))] }
        guard connections[connection.channel] == nil else {
            return [.complete(ticket, .failure(.alreadyJoined("this engine already holds a connection to '\(connection.channel)'")))]
        }
        // A preload is older than what this engine saw since: an edge that failed it (killed, or
        // drained away) is not tried again; the caller asks the cluster at once.
        if preloaded, let failedAt = failedEdges[edge.endpoint], now - failedAt < Self.failedEdgeMemory {
            return [.complete(ticket, .failure(.unavailable(
                "channel '\(connection.channel)' was preloaded on edge \(edge), which failed \(failedAt.duration(to: now).milliseconds) ms ago")))]
        }
        let role = options.joinRole
        var record = ConnectionRecord(
            serial: nextNumber(), connection: connection, edge: edge, token: token, role: role, options: options.joinOptions,
            publishesAsAudience: ConnectionRecord.asksAudienceToPublish(options, role: role), joinStarted: now)
        record.isPrimary = primary
        connections[connection.channel] = record
        var out: [EngineDirective] = []
        setState(.connecting, .joining, of: connection.channel, &out)
        withSession(to: edge, .join(channel: connection.channel, .first(record: record.serial, ticket: ticket, redirected: false)), now: now, &out)
        return out
    }

    /// Whether `attempt` is still wanted for the channel's connection.
    func isCurrent(_ channel: String, _ attempt: JoinAttempt) -> Bool {
        switch attempt {
        case .first(let serial, _, _):
            guard let record = connections[channel] else { return false }
            return record.serial == serial && !record.isJoined
        case .rejoin(let attempt, _): return rejoining(channel, attempt: attempt)
        case .move(let attempt): return moving(channel, attempt: attempt)
        }
    }

    /// The session is open: send the attempt's join with the record's token, uid, role and options.
    mutating func sendJoin(_ channel: String, _ attempt: JoinAttempt, on serial: SessionSerial, now: ContinuousClock.Instant,
                           _ out: inout [EngineDirective]) {
        guard isCurrent(channel, attempt), let record = connections[channel] else {
            if case .first(_, let ticket, _) = attempt {
                out.append(.complete(ticket, .failure(.notJoined("left '\(channel)' before the join completed"))))
            }
            return releaseIfUnused(serial, &out)
        }
        sessions[serial]?.channels.insert(channel)
        let request = EdgeRequest.join(
            channel: channel, uid: record.connection.uid, token: record.token, role: record.role.edgeRole, options: record.wireOptions)
        out.append(.request(request, on: serial, for: .join(channel: channel, attempt)))
    }

    /// The edge answered a join.
    mutating func joinAnswered(_ channel: String, _ attempt: JoinAttempt, on serial: SessionSerial, _ result: Result<EdgeReplyBody, ShowroomError>,
                               now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        let edge = sessions[serial]?.edge
        guard isCurrent(channel, attempt) else {
            if case .first(_, let ticket, _) = attempt {
                if case .failure(let error) = result { out.append(.complete(ticket, .failure(error))) } else {
                    out.append(.complete(ticket, .failure(.notJoined("left '\(channel)' before the join completed"))))
                }
            }
            // An attempt no longer wanted lets the edge go (leaving the channel there if it joined).
            if case .success = result { return leaveQuietly(channel, on: serial, &out) }
            sessions[serial]?.channels.remove(channel)
            return releaseIfUnused(serial, &out)
        }
        switch result {
        case .success(.joined(_, let uid, _, let grantedRole)):
            switch attempt {
            case .first(_, let ticket, _): joined(channel, uid: uid, role: ClientRole(grantedRole), ticket: ticket, now: now, &out)
            case .rejoin: rejoined(channel, on: serial, role: ClientRole(grantedRole), now: now, &out)
            case .move: moveJoined(channel, on: serial, &out)
            }
        case .success(let body):
            if case .first = attempt {
                sessions[serial]?.channels.remove(channel)
                releaseIfUnused(serial, &out)
            } else {
                leaveQuietly(channel, on: serial, &out)
            }
            joinFailed(channel, attempt, .malformed("the edge answered a join with \(body)"), on: edge, now: now, &out)
        case .failure(let error):
            sessions[serial]?.channels.remove(channel)
            releaseIfUnused(serial, &out)
            joinFailed(channel, attempt, error, on: edge, now: now, &out)
        }
    }

    /// An attempt failed on `edge`: a `CHANNEL_ELSEWHERE` refusal is followed once (no loops);
    /// otherwise a first join fails, a rejoin backs off, a move stays.
    mutating func joinFailed(_ channel: String, _ attempt: JoinAttempt, _ error: ShowroomError, on edge: EdgeAddress?,
                             now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        switch attempt {
        case .first(let serial, let ticket, let redirected):
            guard isCurrent(channel, attempt) else { return out.append(.complete(ticket, .failure(error))) }
            if !redirected, let target = Self.redirectTarget(of: error) {
                connections[channel]?.edge = target
                return withSession(to: target, .join(channel: channel, .first(record: serial, ticket: ticket, redirected: true)), now: now, &out)
            }
            if let record = connections.removeValue(forKey: channel) { report(.failed, .joinFailed(error), of: record, &out) }
            out.append(.complete(ticket, .failure(error)))
        case .rejoin(let number, let redirected):
            guard isCurrent(channel, attempt) else { return }
            if !redirected, let target = Self.redirectTarget(of: error) {
                return withSession(to: target, .join(channel: channel, .rejoin(attempt: number, redirected: true)), now: now, &out)
            }
            rejoinFailed(channel, error, on: edge, now: now, &out)
        case .move:
            guard isCurrent(channel, attempt) else { return }
            moveFailed(channel, &out)
        }
    }

    /// The edge accepted the app's join.
    private mutating func joined(_ channel: String, uid: UInt32, role: ClientRole, ticket: EngineTicket, now: ContinuousClock.Instant,
                                 _ out: inout [EngineDirective]) {
        guard var record = connections[channel] else { return }
        record.connection.uid = uid
        record.role = role
        record.isJoined = true
        connections[channel] = record
        if record.isPrimary { primaryChannel = channel }
        out.append(.emit(.joined(record.connection, elapsed: record.joinStarted.duration(to: now))))
        setState(.connected, .joinSucceeded, of: channel, &out)
        out.append(.refreshPublishing)
        out.append(.complete(ticket, .success(record.connection)))
    }

    /// The edge a `CHANNEL_ELSEWHERE` refusal names, if it names one.
    static func redirectTarget(of error: ShowroomError) -> EdgeAddress? {
        guard error.code == .channelElsewhere, let redirect = error.redirect,
              !redirect.edgeID.isEmpty, !redirect.clientEndpoint.isEmpty
        else { return nil }
        return EdgeAddress(id: redirect.edgeID, endpoint: redirect.clientEndpoint, curvePublicKey: redirect.clientCurvePublicKey)
    }

    /// The app leaves a joined connection: it is forgotten at once (no more frames out or in,
    /// whatever the edge answers), and `ticket` ends with the edge's answer.
    mutating func leave(_ connection: ChannelConnection?, ticket: EngineTicket) -> [EngineDirective] {
        let record: ConnectionRecord
        do throws(ShowroomError) { record = try self.record(for: connection) } catch { return [.complete(ticket, .failure(error))] }
        let channel = record.connection.channel
        var out: [EngineDirective] = []
        connections[channel] = nil
        forget(channel, &out)
        out.append(.refreshPublishing)
        report(.disconnected, .left, of: record, &out)
        // A connection moving off a draining edge leaves where it joined ahead; a broadcaster
        // that moved leaves the draining edge it stayed on.
        for edge in [record.move?.to, record.lingeringOn].compactMap({ $0 }) {
            if let other = active[edge.endpoint] { leaveQuietly(channel, on: other, &out) }
        }
        guard let serial = openSession(to: record.edgeEndpoint) else {
            out.append(.complete(ticket, .success(nil)))
            return out
        }
        out.append(.request(.leave(channel: channel), on: serial, for: .leave(channel: channel, ticket: ticket)))
        return out
    }

    /// Leaves `channel` on a session for a connection that lives elsewhere now (or never came to
    /// be there); the session then goes warm, or closes if it drains.
    mutating func leaveQuietly(_ channel: String, on serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], session.phase == .open, session.channels.contains(channel) else {
            return releaseIfUnused(serial, &out)
        }
        out.append(.request(.leave(channel: channel), on: serial, for: .leaveQuietly(channel: channel)))
    }

    /// Gets a channel ready to join: a session to its edge opened (or kept) warm, and the token
    /// checked ahead by the edge (`PRELOAD_CHANNEL`).
    mutating func preload(channel: String, uid: UInt32, token: String, on edge: EdgeAddress, ticket: EngineTicket,
                          now: ContinuousClock.Instant) -> [EngineDirective] {
        guard !isShutDown else { return [.complete(ticket, .failure(.unavailable("the engine has shut down")))] }
        var out: [EngineDirective] = []
        withSession(to: edge, .preload(ticket: ticket, channel: channel, uid: uid, token: token), now: now, &out)
        return out
    }

    /// The edge accepted a change to a joined connection: the record keeps it.
    mutating func accepted(_ change: AcceptedChange, channel: String) -> [EngineDirective] {
        guard var record = connections[channel] else { return [] }
        var out: [EngineDirective] = []
        switch change {
        case .options(let options):
            record.options = record.options.applying(options.edgeUpdate)
            if let role = options.role { record.role = role }
            record.publishesAsAudience = ConnectionRecord.asksAudienceToPublish(options, role: record.role)
            out.append(.refreshPublishing)
        case .role(let role):
            record.role = role
            record.publishesAsAudience = false
            out.append(.refreshPublishing)
        case .subscription(let track, let subscribed):
            record.subscriptions[track] = subscribed
        case .remoteMute(let track, let muted):
            if muted { record.remoteMutes.insert(track) } else { record.remoteMutes.remove(track) }
        case .token(let token):
            record.token = token
        }
        connections[channel] = record
        return out
    }

    /// Puts back the options a refused update had changed ahead of the edge's answer.
    mutating func restore(_ options: MediaOptions, publishesAsAudience: Bool, channel: String) -> [EngineDirective] {
        guard connections[channel] != nil else { return [] }
        connections[channel]?.options = options
        connections[channel]?.publishesAsAudience = publishesAsAudience
        return [.refreshPublishing]
    }

    /// Mutes (or unmutes) a local track of a joined connection at once; the options update to
    /// tell the edge, so the others see the track unpublished rather than frozen.
    mutating func muteLocal(_ kind: TrackKind, muted: Bool, _ connection: ChannelConnection?) throws(ShowroomError)
        -> (channel: String, update: MediaOptionsUpdate) {
        var record = try record(for: connection)
        if kind == .audio { record.audioMuted = muted } else { record.videoMuted = muted }
        connections[record.connection.channel] = record
        return (record.connection.channel, kind == .audio
            ? MediaOptionsUpdate(publishAudio: record.wirePublishes(.audio))
            : MediaOptionsUpdate(publishVideo: record.wirePublishes(.video)))
    }

    // MARK: - From the edge

    /// The connection of `channel` if `serial` serves it (during a move, the other edge's events
    /// are about the same users and tracks, and a channel's events count from one edge).
    func current(_ channel: String, on serial: SessionSerial) -> ConnectionRecord? {
        guard let record = connections[channel], record.edgeEndpoint == sessions[serial]?.edge.endpoint else { return nil }
        return record
    }

    /// An event from the session's edge.
    mutating func edgeEvent(_ event: EdgeEvent, on serial: SessionSerial, now: ContinuousClock.Instant) -> [EngineDirective] {
        guard sessions[serial] != nil else { return [] }
        var out: [EngineDirective] = []
        func emit(_ channel: String, _ make: (ChannelConnection) -> EngineEvent) {
            if let record = current(channel, on: serial) { out.append(.emit(make(record.connection))) }
        }
        switch event {
        case .userJoined(let channel, let uid):
            emit(channel) { .userJoined($0, uid: uid) }
        case .userOffline(let channel, let uid, let reason):
            guard current(channel, on: serial) != nil else { break }
            connections[channel]?.firstFrameReported.remove(uid)
            out.append(.forgetPendingVideo(channel: channel, uid: uid))
            emit(channel) { .userOffline($0, uid: uid, reason: UserOfflineReason(reason)) }
        case .remoteTrackPublished(let track):
            emit(track.channel) { .remoteTrackPublished($0, uid: track.uid, track: TrackKind(track.kind)) }
        case .remoteTrackUnpublished(let track):
            guard current(track.channel, on: serial) != nil else { break }
            if track.kind == .video {
                connections[track.channel]?.firstFrameReported.remove(track.uid)
                out.append(.forgetPendingVideo(channel: track.channel, uid: track.uid))
            }
            emit(track.channel) { .remoteTrackUnpublished($0, uid: track.uid, track: TrackKind(track.kind)) }
        case .remoteVideoStateChanged(let track, let state, let reason):
            emit(track.channel) { .remoteVideoStateChanged($0, uid: track.uid, state: RemoteVideoState(state), reason: RemoteVideoStateReason(reason)) }
        case .volumeIndication(let channel, let speakers):
            emit(channel) { .volumeIndication($0, speakers: speakers.map(SpeakerVolume.init)) }
        case .streamMessage(let channel, let uid, let streamID, let sequence, let data):
            emit(channel) { .streamMessage($0, uid: uid, streamID: streamID, sequence: sequence, data: data) }
        case .tokenWillExpire(let channel, let expiresIn):
            emit(channel) { .tokenWillExpire($0, expiresIn: expiresIn) }
        case .privilegeExpired(let channel, let privilege):
            emit(channel) { .privilegeExpired($0, privilege: Privilege(privilege)) }
        case .forwardStateChanged(let change):
            emit(change.channel) { .forwardStateChanged($0, destination: ForwardDestinationStatus(change.destination)) }
        case .error(let error, let channel, _):
            // A frame sent just before the app left the channel (or the edge put it out) is refused
            // when it arrives: nothing is wrong, and the app has nothing to act on.
            if error.code == .notJoined, !channel.isEmpty, connections[channel] == nil { break }
            out.append(.emit(.error(connections[channel]?.connection, error)))
            // A refused frame or request of a connection this edge should hold: it forgot it.
            if error.code == .notJoined { out += forgottenByEdge(channel, on: serial, error, now: now) }
        case .connectionClosed(let channel, let reason):
            // The channel runs on another edge (it was placed twice across a partition): go there.
            if let target = Self.redirectTarget(of: reason), movedElsewhere(channel, from: serial, to: target, reason, now: now, &out) {
                break
            }
            sessions[serial]?.channels.remove(channel)
            // A connection that lives on another edge now: only this edge's part of it ended.
            if current(channel, on: serial) != nil, let record = connections.removeValue(forKey: channel) {
                forget(channel, &out)
                out.append(.emit(.connectionClosed(record.connection, error: reason)))
                report(.failed, .closedByEdge(reason), of: record, &out)
                out.append(.refreshPublishing)
            }
            releaseIfUnused(serial, &out)
        case .sessionClosed(let reason):
            guard sessions[serial]?.phase == .open else { break }
            // A draining edge (UNAVAILABLE: join again through the cluster) or one that timed the
            // session out: the channels go on elsewhere. A replaced session stays closed.
            if reason.code == .unavailable || reason.code == .sessionTimedOut {
                edgeFailed(serial, reason, now: now, &out)
            } else {
                closeConnections(of: serial, state: .failed, reason: .closedByEdge(reason), error: reason, &out)
                teardown(serial, reason, now: now, &out)
            }
        case .draining:
            edgeDraining(serial, now: now, &out)
        }
        return out
    }
}
