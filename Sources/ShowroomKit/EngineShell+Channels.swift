internal import EdgeProtocol
internal import ShowroomWire

// The app's calls on channel connections: the state decides, the shell sends and completes.

extension EngineShell {
    func join(
        token: String, connection: ChannelConnection, options: ChannelMediaOptions, edge: EdgeAddress, preloaded: Bool = false,
        primary: Bool, started: ContinuousClock.Instant, _ complete: @escaping Completion<ChannelConnection>
    ) {
        let ticket = ticket { result in complete(result.map { $0 ?? connection }) }
        perform(state.join(token: token, connection: connection, options: options, edge: edge, preloaded: preloaded, primary: primary,
                           ticket: ticket, now: started))
    }

    /// Joins where the cluster places the channel, as a first join does (no preloaded edge): a
    /// channel not placed yet goes, with `preferringWarmEdges`, to an edge this engine has a
    /// session with (a call's private channel, where its parties are).
    package func join(
        token: String, connection: ChannelConnection, options: ChannelMediaOptions, primary: Bool, preferringWarmEdges: Bool,
        started: ContinuousClock.Instant, _ complete: @escaping Completion<ChannelConnection>
    ) {
        let credentials = PlacementCredentials(uid: connection.uid, token: token, audience: options.joinRole == .audience,
                                               preferredEdges: preferringWarmEdges ? state.warmEdges : [])
        host.place(connection.channel, credentials: credentials, avoiding: nil) { [weak self] placed in
            guard let self else { return complete(.failure(.unavailable("the engine has shut down"))) }
            switch placed {
            case .failure(let error): complete(.failure(error))
            case .success(let edge):
                join(token: token, connection: connection, options: options, edge: edge, primary: primary, started: started, complete)
            }
        }
    }

    package func leave(_ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        perform(state.leave(connection, ticket: ticket { complete($0.map { _ in () }) }))
    }

    /// Opens (or keeps) a session to `edge` ahead of a join (a preloaded channel's edge), warm
    /// until a join uses it, and has the edge check the join's token ahead (`PRELOAD_CHANNEL`).
    func warmSession(to edge: EdgeAddress, preloading channel: String, uid: UInt32, token: String, _ complete: @escaping Completion<Void>) {
        let ticket = ticket { complete($0.map { _ in () }) }
        perform(state.preload(channel: channel, uid: uid, token: token, on: edge, ticket: ticket, now: host.now))
    }

    func update(_ options: ChannelMediaOptions, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let record: ConnectionRecord
        do throws(ShowroomError) { record = try state.record(for: connection) } catch { return complete(.failure(error)) }
        var update = options
        // A locally muted track stays unpublished whatever the option says.
        if let value = update.publishAudio { update.publishAudio = value && !record.audioMuted }
        if let value = update.publishVideo { update.publishVideo = value && !record.videoMuted }
        let channel = record.connection.channel
        guard options.role == nil else {
            return request(.updateOptions(channel: channel, update: update.edgeUpdate), for: connection,
                           accepted: .options(options), complete) { _ in }
        }
        // Without a role change, publishing starts (or stops) at once, not an answer later (a
        // call's first frame waits on it): the update goes out on the session before the first
        // frame, so the edge takes it first. A refusal puts the options back.
        let before = (options: record.options, publishesAsAudience: record.publishesAsAudience)
        perform(state.accepted(.options(options), channel: channel))
        request(.updateOptions(channel: channel, update: update.edgeUpdate), for: connection, { [weak self] (result: Result<Void, ShowroomError>) in
            if case .failure = result, let self {
                self.perform(self.state.restore(before.options, publishesAsAudience: before.publishesAsAudience, channel: channel))
            }
            complete(result)
        }) { _ in }
    }

    func setRole(_ role: ClientRole, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let channel: String
        do throws(ShowroomError) { channel = try state.record(for: connection).connection.channel } catch { return complete(.failure(error)) }
        request(.setRole(channel: channel, role: role.edgeRole), for: connection, accepted: .role(role), complete) { _ in }
    }

    func muteLocal(_ kind: TrackKind, muted: Bool, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        // Stop (or start) sending at once; then tell the edge, so the others see the track
        // unpublished rather than frozen.
        let (channel, update): (String, MediaOptionsUpdate)
        do throws(ShowroomError) { (channel, update) = try state.muteLocal(kind, muted: muted, connection) } catch {
            return complete(.failure(error))
        }
        refreshPublishing()
        request(.updateOptions(channel: channel, update: update), for: connection, complete) { _ in }
    }

    /// A request about one remote track (subscribe, unsubscribe, mute); what the edge accepted
    /// is remembered, so a rejoin restores it.
    func trackRequest(_ connection: ChannelConnection?, _ make: (String) -> EdgeRequest, _ complete: @escaping Completion<Void>) {
        let channel = (try? state.record(for: connection).connection.channel) ?? ""
        let edgeRequest = make(channel)
        let accepted: EngineState.AcceptedChange?
        switch edgeRequest {
        case .subscribe(let track): accepted = .subscription(track, subscribed: true)
        case .unsubscribe(let track): accepted = .subscription(track, subscribed: false)
        case .muteRemote(let track, let muted): accepted = .remoteMute(track, muted: muted)
        default: accepted = nil
        }
        request(edgeRequest, for: connection, accepted: accepted, complete) { _ in }
    }

    /// Replaces a connection's token; a later rejoin presents the new one.
    func renewToken(_ token: String, _ connection: ChannelConnection?, _ complete: @escaping Completion<Void>) {
        let channel = (try? state.record(for: connection).connection.channel) ?? ""
        request(.renewToken(channel: channel, token: token), for: connection, accepted: .token(token), complete) { _ in }
    }

    func enableVolumeIndication(_ config: VolumeIndicationConfig?, _ complete: @escaping Completion<Void>) {
        state.volumeIndication = config
        let open = state.openSessions.compactMap { links[$0] }
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
        if let channel = connection?.channel ?? state.primaryChannel { return channel }
        throw .notJoined("no channel joined: name the connection the sink is for")
    }

    package func setVideoSink(_ sink: (any RemoteVideoSink)?, uid: UInt32, _ connection: ChannelConnection?) throws(ShowroomError) {
        let channel = try sinkChannel(connection)
        videoSinks[channel, default: [:]][uid] = sink.map { ($0, host.now) }
        state.setVideoSink(channel: channel, uid: uid, present: sink != nil)
        // A sink set after the track's frames began gets them from its last keyframe at once: the
        // first decoded frame is timed from the join, when they arrived, not from the sink's set-up.
        let kept = pendingVideo[channel]?.take(uid) ?? []
        guard let sink, let record = state.connections[channel], !kept.isEmpty else { return }
        let now = host.now
        for frame in kept {
            frame.payload.withUnsafeBytes { payload in
                deliver(RemoteMediaFrame(
                    connection: record.connection, uid: frame.uid, sequence: frame.sequence,
                    captureTimeMicroseconds: frame.captureTimeMicroseconds, sendTimeMicroseconds: frame.sendTimeMicroseconds,
                    receiveTimeMicroseconds: frame.receiveTimeMicroseconds, isKeyframe: frame.isKeyframe,
                    width: frame.width, height: frame.height, audioLevel: 0, payload: payload),
                    to: sink, channel: channel, since: record.joinStarted, now: now)
            }
        }
    }

    func setAudioSink(_ sink: (any RemoteAudioSink)?, uid: UInt32, _ connection: ChannelConnection?) throws(ShowroomError) {
        audioSinks[try sinkChannel(connection), default: [:]][uid] = sink
    }

    /// Leaves everything and closes every session; `done` runs once the edges answered (or the
    /// close timed out).
    func shutdown(_ done: @escaping () -> Void) {
        videoSinks = [:]
        audioSinks = [:]
        perform(state.shutdown(ticket: ticket { _ in done() }, now: host.now))
    }
}
