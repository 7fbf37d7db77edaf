internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

// Channel connections: join, leave, options, role, token, subscriptions, mutes, sinks.

extension EngineShell {
    func join(
        token: String, connection: ChannelConnection, options: ChannelMediaOptions, edge: EdgeAddress,
        primary: Bool, started: ContinuousClock.Instant, _ complete: @escaping Completion<ChannelConnection>
    ) {
        guard !isShutDown else { return complete(.failure(.unavailable("the engine has shut down"))) }
        guard connections[connection.channel] == nil else {
            return complete(.failure(.alreadyJoined("this engine already holds a connection to '\(connection.channel)'")))
        }
        let role = options.joinRole
        let record = ConnectionRecord(
            connection: connection, edge: edge, token: token, role: role, options: options.joinOptions,
            publishesAsAudience: ConnectionRecord.asksAudienceToPublish(options, role: role), joinStarted: started)
        connections[connection.channel] = record
        setState(.connecting, .joining, of: record)

        let fail = { [weak self] (error: ShowroomError, session: EdgeSession?) in
            guard let self else { return }
            if self.connections[connection.channel] === record { self.connections[connection.channel] = nil }
            self.setState(.failed, .joinFailed(error), of: record)
            if let session {
                session.channels.remove(connection.channel)
                self.releaseIfUnused(session)
            }
            complete(.failure(error))
        }
        // An edge that does not host the channel may answer CHANNEL_ELSEWHERE naming the edge
        // that does: the join goes there, once per join (no loops), and the app sees only its end.
        func attempt(on edge: EdgeAddress, redirected: Bool) {
            record.edge = edge
            withOpenSession(to: edge) { [weak self] result in
                guard let self else { return }
                let session: EdgeSession
                switch result {
                case .success(let open): session = open
                case .failure(let error): return fail(error, nil)
                }
                // Left (or shut down) while the session was opening.
                guard self.connections[connection.channel] === record else {
                    self.releaseIfUnused(session)
                    return complete(.failure(.notJoined("left '\(connection.channel)' before the join completed")))
                }
                session.channels.insert(connection.channel)
                let request = EdgeRequest.join(
                    channel: connection.channel, uid: connection.uid, token: token, role: role.edgeRole, options: record.wireOptions)
                self.request(request, on: session) { [weak self] result in
                    guard let self else { return }
                    switch result {
                    case .success(.joined(_, let uid, _, let grantedRole)):
                        guard self.connections[connection.channel] === record else {
                            return complete(.failure(.notJoined("left '\(connection.channel)' before the join completed")))
                        }
                        record.connection.uid = uid
                        record.role = ClientRole(grantedRole)
                        record.isJoined = true
                        if primary { self.primaryChannel = connection.channel }
                        self.emit(.joined(record.connection, elapsed: started.duration(to: .now)))
                        self.setState(.connected, .joinSucceeded, of: record)
                        self.refreshPublishing()
                        complete(.success(record.connection))
                    case .success(let body):
                        fail(.malformed("the edge answered a join with \(body)"), session)
                    case .failure(let error):
                        guard !redirected, let target = Self.redirectTarget(of: error),
                              self.connections[connection.channel] === record
                        else { return fail(error, session) }
                        session.channels.remove(connection.channel)
                        self.releaseIfUnused(session)
                        attempt(on: target, redirected: true)
                    }
                }
            }
        }
        attempt(on: edge, redirected: false)
    }

    /// The edge a `CHANNEL_ELSEWHERE` refusal names, if it names one.
    static func redirectTarget(of error: ShowroomError) -> EdgeAddress? {
        guard error.code == .channelElsewhere, let redirect = error.redirect,
              !redirect.edgeID.isEmpty, !redirect.clientEndpoint.isEmpty
        else { return nil }
        return EdgeAddress(id: redirect.edgeID, endpoint: redirect.clientEndpoint, curvePublicKey: redirect.clientCurvePublicKey)
    }

    func leave(_ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let record: ConnectionRecord
        do throws(ShowroomError) { record = try self.record(for: connection) } catch { return complete(.failure(error)) }
        let channel = record.connection.channel
        // Forget the connection at once: no more frames out or in, whatever the edge answers.
        connections[channel] = nil
        forget(channel)
        refreshPublishing()
        setState(.disconnected, .left, of: record)
        // A connection moving off a draining edge leaves where it joined ahead; a broadcaster
        // that moved leaves the draining edge it stayed on.
        for edge in [record.move?.to, record.lingeringOn].compactMap({ $0 }) {
            if let other = sessions[edge.endpoint] { leaveQuietly(channel, on: other) }
        }
        guard let session = sessions[record.edgeEndpoint], session.phase == .open else { return complete(.success(())) }
        request(.leave(channel: channel), on: session) { [weak self, weak session] result in
            if let self, let session {
                session.channels.remove(channel)
                self.keepWarm(session)
            }
            // Not joined any more is what leaving wanted.
            if case .failure(let error) = result, error.code != .notJoined { return complete(.failure(error)) }
            complete(.success(()))
        }
    }

    func update(_ options: ChannelMediaOptions, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let record: ConnectionRecord
        do throws(ShowroomError) { record = try self.record(for: connection) } catch { return complete(.failure(error)) }
        var update = options
        // A locally muted track stays unpublished whatever the option says.
        if let value = update.publishAudio { update.publishAudio = value && !record.audioMuted }
        if let value = update.publishVideo { update.publishVideo = value && !record.videoMuted }
        request(.updateOptions(channel: record.connection.channel, update: update.edgeUpdate), for: connection, complete) { [weak self] record, _ in
            record.options = record.options.applying(options.edgeUpdate)
            if let role = options.role { record.role = role }
            record.publishesAsAudience = ConnectionRecord.asksAudienceToPublish(options, role: record.role)
            self?.refreshPublishing()
        }
    }

    func setRole(_ role: ClientRole, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let channel: String
        do throws(ShowroomError) { channel = try record(for: connection).connection.channel } catch { return complete(.failure(error)) }
        request(.setRole(channel: channel, role: role.edgeRole), for: connection, complete) { [weak self] record, _ in
            record.role = role
            record.publishesAsAudience = false
            self?.refreshPublishing()
        }
    }

    func muteLocal(_ kind: TrackKind, muted: Bool, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let record: ConnectionRecord
        do throws(ShowroomError) { record = try self.record(for: connection) } catch { return complete(.failure(error)) }
        // Stop (or start) sending at once; then tell the edge, so the others see the track
        // unpublished rather than frozen.
        if kind == .audio { record.audioMuted = muted } else { record.videoMuted = muted }
        refreshPublishing()
        let update = kind == .audio
            ? MediaOptionsUpdate(publishAudio: record.wirePublishes(.audio))
            : MediaOptionsUpdate(publishVideo: record.wirePublishes(.video))
        request(.updateOptions(channel: record.connection.channel, update: update), for: connection, complete) { _, _ in }
    }

    /// A request about one remote track (subscribe, unsubscribe, mute); what the edge accepted
    /// is remembered, so a rejoin restores it.
    func trackRequest(_ connection: ChannelConnection?, _ make: (String) -> EdgeRequest, _ complete: @escaping Completion<Void>) {
        let channel = (try? record(for: connection).connection.channel) ?? ""
        let edgeRequest = make(channel)
        request(edgeRequest, for: connection, complete) { record, _ in
            switch edgeRequest {
            case .subscribe(let track): record.subscriptions[track] = true
            case .unsubscribe(let track): record.subscriptions[track] = false
            case .muteRemote(let track, let muted):
                if muted { record.remoteMutes.insert(track) } else { record.remoteMutes.remove(track) }
            default: break
            }
        }
    }

    /// Replaces a connection's token; a later rejoin presents the new one.
    func renewToken(_ token: String, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let channel = (try? record(for: connection).connection.channel) ?? ""
        request(.renewToken(channel: channel, token: token), for: connection, complete) { record, _ in
            record.token = token
        }
    }

    func enableVolumeIndication(_ config: VolumeIndicationConfig?, _ complete: @escaping Completion<Void>) {
        volumeIndication = config
        let open = sessions.values.filter { $0.phase == .open }
        guard !open.isEmpty else { return complete(.success(())) }
        var remaining = open.count
        var firstError: ShowroomError?
        for session in open {
            request(.enableVolumeIndication(config), on: session) { result in
                if case .failure(let error) = result, firstError == nil { firstError = error }
                remaining -= 1
                if remaining == 0 { complete(firstError.map { .failure($0) } ?? .success(())) }
            }
        }
    }

    /// The channel a sink call names: the connection's (joined or not: sinks may be set before
    /// joining, so no frame of the GOP cache burst is missed), or the primary one.
    private func sinkChannel(_ connection: ChannelConnection?) throws(ShowroomError) -> String {
        if let channel = connection?.channel ?? primaryChannel { return channel }
        throw .notJoined("no channel joined: name the connection the sink is for")
    }

    func setVideoSink(_ sink: (any RemoteVideoSink)?, uid: UInt32, _ connection: ChannelConnection?) throws(ShowroomError) {
        let channel = try sinkChannel(connection)
        videoSinks[channel, default: [:]][uid] = sink.map { ($0, ContinuousClock.now) }
        connections[channel]?.firstFrameReported.remove(uid)
        // A sink set after the track's frames began gets them from its last keyframe at once: the
        // first decoded frame is timed from the join, when they arrived, not from the sink's set-up.
        let kept = pendingVideo[channel]?.take(uid) ?? []
        guard let sink, let record = connections[channel], !kept.isEmpty else { return }
        let now = ContinuousClock.now
        for frame in kept {
            frame.payload.withUnsafeBytes { payload in
                deliver(RemoteMediaFrame(
                    connection: record.connection, uid: frame.uid, sequence: frame.sequence,
                    captureTimeMicroseconds: frame.captureTimeMicroseconds, sendTimeMicroseconds: frame.sendTimeMicroseconds,
                    receiveTimeMicroseconds: frame.receiveTimeMicroseconds, isKeyframe: frame.isKeyframe,
                    width: frame.width, height: frame.height, audioLevel: 0, payload: payload),
                    to: sink, record: record, since: record.joinStarted, now: now)
            }
        }
    }

    func setAudioSink(_ sink: (any RemoteAudioSink)?, uid: UInt32, _ connection: ChannelConnection?) throws(ShowroomError) {
        audioSinks[try sinkChannel(connection), default: [:]][uid] = sink
    }

    /// Leaves everything and closes every session; `done` runs once the edges answered (or the
    /// close timed out).
    func shutdown(_ done: @escaping () -> Void) {
        guard !isShutDown else { return done() }
        isShutDown = true
        for record in connections.values.sorted(by: { $0.connection.channel < $1.connection.channel }) where record.isJoined {
            setState(.disconnected, .left, of: record)
        }
        connections = [:]
        primaryChannel = nil
        videoSinks = [:]
        audioSinks = [:]
        refreshPublishing()
        let open = Array(sessions.values)
        var remaining = open.count
        guard remaining > 0 else { return done() }
        for session in open {
            session.channels = []
            if session.phase == .open {
                // CLOSE_SESSION makes the others see the users quit at once, not after the
                // edge's heartbeat timeout.
                releaseIfUnused(session) {
                    remaining -= 1
                    if remaining == 0 { done() }
                }
            } else {
                teardown(session, error: .unavailable("the engine has shut down"))
                remaining -= 1
                if remaining == 0 { done() }
            }
        }
    }
}
