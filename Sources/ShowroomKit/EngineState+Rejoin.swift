internal import EdgeProtocol

// Automatic rejoin: when an edge dies, goes silent or drains, every connection it held is placed
// again (avoiding that edge), joined there with the same token, uid, role and options, and
// restored (subscriptions, remote mutes, local publishing); the app does nothing.

extension EngineState {
    /// The edge of the session failed this client: its connection broke, it went silent past its
    /// heartbeat timeout, or it closed the session to go away. Every joined connection in it
    /// rejoins through the placement (or, with rejoin disabled, fails).
    mutating func edgeFailed(_ serial: SessionSerial, _ error: ShowroomError, now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], session.phase == .open || session.phase == .opening else { return }
        remember(failed: session.edge, now: now)
        settleMoves(leaving: serial, &out)
        guard settings.rejoinWindow > .zero else {
            closeConnections(of: serial, state: .failed, reason: .edgeLost, error: error, &out)
            return teardown(serial, error, now: now, &out)
        }
        let channels = session.channels.sorted().filter { channel in
            guard let record = connections[channel] else { return false }
            return record.isJoined && record.edgeEndpoint == session.edge.endpoint
        }
        // Detach them first: teardown forgets the connections a session still holds, and fails
        // the joins still in flight (those report their failure to the app as usual).
        sessions[serial]?.channels.subtract(channels)
        teardown(serial, error, now: now, &out)
        for channel in channels {
            startRejoin(channel, avoiding: session.edge, .edgeLost, now: now, &out)
        }
        out.append(.refreshPublishing)
        for channel in channels { placeAgain(channel, &out) }
    }

    /// The edge answered a request or a frame of a connection it serves with "not joined": it has
    /// forgotten the connection (whatever the reason, the edge lives). Rather than stay silently
    /// broken, the connection rejoins at once with the same token, uid, role, options and
    /// subscriptions, wherever the placement says (usually that same edge): the app sees
    /// reconnecting (closed by the edge), then connected (rejoin succeeded), or failed with the
    /// refusal that ended the rejoin.
    mutating func forgottenByEdge(_ channel: String, on serial: SessionSerial, _ error: ShowroomError,
                                  now: ContinuousClock.Instant) -> [EngineDirective] {
        var out: [EngineDirective] = []
        guard !isShutDown, sessions[serial]?.phase == .open, let record = current(channel, on: serial),
              record.isJoined, record.rejoin == nil, record.move == nil
        else { return out }
        sessions[serial]?.channels.remove(channel)
        if settings.rejoinWindow > .zero {
            startRejoin(channel, avoiding: nil, .closedByEdge(error), now: now, &out)
            placeAgain(channel, &out)
        } else {
            connections[channel] = nil
            forget(channel, &out)
            out.append(.emit(.connectionClosed(record.connection, error: error)))
            report(.failed, .closedByEdge(error), of: record, &out)
        }
        out.append(.refreshPublishing)
        keepWarm(serial, &out)
        return out
    }

    /// The edge closed a connection because its channel is placed on `target`: the connection
    /// rejoins there at once with the same token, uid, role, options and subscriptions (the app
    /// sees reconnecting, closed by the edge, then connected), falling back to the placement if
    /// that join fails. False (nothing done) when the connection is not joined on this session or
    /// is already rejoining or moving, or rejoins are off.
    mutating func movedElsewhere(_ channel: String, from serial: SessionSerial, to target: EdgeAddress, _ error: ShowroomError,
                                 now: ContinuousClock.Instant, _ out: inout [EngineDirective]) -> Bool {
        guard !isShutDown, settings.rejoinWindow > .zero, sessions[serial]?.phase == .open,
              let record = current(channel, on: serial), record.isJoined, record.rejoin == nil, record.move == nil,
              target.endpoint != record.edgeEndpoint
        else { return false }
        sessions[serial]?.channels.remove(channel)
        startRejoin(channel, avoiding: nil, .closedByEdge(error), now: now, &out)
        let attempt = nextNumber()
        connections[channel]?.rejoin?.attempt = attempt
        withSession(to: target, .join(channel: channel, .rejoin(attempt: attempt, redirected: true)), now: now, &out)
        out.append(.refreshPublishing)
        releaseIfUnused(serial, &out)
        return true
    }

    /// Notes that `edge` failed (or is draining away): a channel preloaded there is placed again.
    mutating func remember(failed edge: EdgeAddress, now: ContinuousClock.Instant) {
        failedEdges = failedEdges.filter { now - $0.value < Self.failedEdgeMemory }
        failedEdges[edge.endpoint] = now
    }

    /// Marks a connection as rejoining (reconnecting, with `reason`), its first frames to be
    /// reported again; the caller asks the placement.
    private mutating func startRejoin(_ channel: String, avoiding edge: EdgeAddress?, _ reason: ConnectionStateReason,
                                      now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        connections[channel]?.rejoin = ConnectionRecord.Rejoin(started: now, failedEdge: edge)
        connections[channel]?.staysUntilClose = false
        connections[channel]?.joinStarted = now
        connections[channel]?.firstFrameReported = []
        setState(.reconnecting, reason, of: channel, &out)
    }

    /// The credentials a placement of the connection presents.
    func credentials(of record: ConnectionRecord) -> PlacementCredentials {
        PlacementCredentials(uid: record.connection.uid, token: record.token, audience: record.role == .audience)
    }

    /// Asks the placement for the connection's edge, avoiding the failed one.
    mutating func placeAgain(_ channel: String, _ out: inout [EngineDirective]) {
        guard !isShutDown, let record = connections[channel], var rejoin = record.rejoin else { return }
        rejoin.attempt = nextNumber()
        connections[channel]?.rejoin = rejoin
        out.append(.place(channel: channel, credentials(of: record), avoiding: rejoin.failedEdge, for: .rejoin(attempt: rejoin.attempt)))
    }

    /// Whether rejoin `attempt` is the one under way for the channel.
    func rejoining(_ channel: String, attempt: UInt64) -> Bool {
        !isShutDown && connections[channel]?.rejoin?.attempt == attempt
    }

    /// The placement answered.
    mutating func placed(channel: String, _ purpose: PlacementPurpose, _ placed: Result<EdgeAddress, ShowroomError>,
                         now: ContinuousClock.Instant) -> [EngineDirective] {
        var out: [EngineDirective] = []
        switch (purpose, placed) {
        case (.rejoin(let attempt), .success(let edge)):
            guard rejoining(channel, attempt: attempt) else { break }
            withSession(to: edge, .join(channel: channel, .rejoin(attempt: attempt, redirected: false)), now: now, &out)
        case (.rejoin(let attempt), .failure(let error)):
            guard rejoining(channel, attempt: attempt) else { break }
            rejoinFailed(channel, error, on: nil, now: now, &out)
        case (.move(let attempt), .success(let edge)):
            guard moving(channel, attempt: attempt) else { break }
            withSession(to: edge, .join(channel: channel, .move(attempt: attempt)), now: now, &out)
        case (.move(let attempt), .failure):
            guard moving(channel, attempt: attempt) else { break }
            moveFailed(channel, &out)
        }
        return out
    }

    /// The new edge accepted the rejoin: restore what the app had set and resume.
    mutating func rejoined(_ channel: String, on serial: SessionSerial, role: ClientRole, now: ContinuousClock.Instant,
                           _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], let rejoin = connections[channel]?.rejoin else { return }
        connections[channel]?.edge = session.edge
        connections[channel]?.role = role
        connections[channel]?.rejoin = nil
        rejoins += 1
        restoreSubscriptions(of: channel, on: serial, &out)
        // The new edge has no GOP cache of this publisher: its first frame there must decode.
        out.append(.wantKeyframe)
        setState(.connected, .rejoinSucceeded, of: channel, &out)
        if let connection = connections[channel]?.connection {
            out.append(.emit(.rejoinedChannel(connection, elapsed: rejoin.started.duration(to: now))))
        }
        out.append(.refreshPublishing)
    }

    /// Sets on a connection's new edge the subscriptions and remote mutes the app had set.
    mutating func restoreSubscriptions(of channel: String, on serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let record = connections[channel] else { return }
        let restore = record.subscriptions.sorted { $0.key < $1.key }
            .map { $0.value ? EdgeRequest.subscribe($0.key) : .unsubscribe($0.key) }
            + record.remoteMutes.sorted().map { EdgeRequest.muteRemote($0, muted: true) }
        for request in restore { out.append(.request(request, on: serial, for: .restore(record.connection))) }
    }

    /// An attempt failed: try again after the backoff, or give up (a refusal no other edge would
    /// lift, or the rejoin window has passed).
    mutating func rejoinFailed(_ channel: String, _ error: ShowroomError, on edge: EdgeAddress?, now: ContinuousClock.Instant,
                               _ out: inout [EngineDirective]) {
        guard var rejoin = connections[channel]?.rejoin else { return }
        if let edge, error.code == .unavailable || error.code == .deadlineExceeded {
            rejoin.failedEdge = edge  // that edge is no better: avoid it next
        }
        guard !Self.refusalIsFinal(error),
              let delay = rejoin.backoff.next(elapsed: rejoin.started.duration(to: now), window: settings.rejoinWindow)
        else {
            return giveUp(channel, error, &out)
        }
        connections[channel]?.rejoin = rejoin
        // The app hears why the attempt failed; the state stays reconnecting.
        if let connection = connections[channel]?.connection { out.append(.emit(.error(connection, error))) }
        out.append(.schedule(.rejoinRetry(channel: channel, attempt: rejoin.attempt), after: delay))
    }

    private mutating func giveUp(_ channel: String, _ error: ShowroomError, _ out: inout [EngineDirective]) {
        guard let record = connections.removeValue(forKey: channel) else { return }
        forget(channel, &out)
        out.append(.emit(.connectionClosed(record.connection, error: error)))
        report(.failed, Self.refusalIsFinal(error) ? .joinFailed(error) : .edgeLost, of: record, &out)
        out.append(.refreshPublishing)
    }

    /// Refusals that another attempt or another edge would not lift: the token, a ban, a bad
    /// argument.
    static func refusalIsFinal(_ error: ShowroomError) -> Bool {
        (2000..<3000).contains(error.code.rawValue) || error.code == .banned || error.code == .invalidArgument
    }
}
