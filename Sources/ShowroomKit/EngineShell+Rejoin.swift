internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

// Automatic rejoin: when an edge dies, goes silent or drains, every connection it held is placed
// again (avoiding that edge), joined there with the same token, uid, role and options, and
// restored (subscriptions, remote mutes, sinks, local publishing); the app does nothing.

extension EngineShell {
    /// The edge of `session` failed this client: its connection broke, it went silent past its
    /// heartbeat timeout, or it closed the session to go away. Every joined connection in it
    /// rejoins through the placement (or, with rejoin disabled, fails).
    func edgeFailed(_ session: EdgeSession, error: ShowroomError) {
        guard session.phase == .open || session.phase == .opening else { return }
        settleMoves(leaving: session)
        guard configuration.rejoinWindow > .zero else {
            closeConnections(of: session, state: .failed, reason: .edgeLost, error: error)
            teardown(session, error: error)
            return
        }
        let records = session.channels.sorted().compactMap { channel -> ConnectionRecord? in
            guard let record = connections[channel], record.isJoined, record.edgeEndpoint == session.edge.endpoint else { return nil }
            return record
        }
        // Detach them first: teardown forgets the connections a session still holds, and fails
        // the joins still in flight (those report their failure to the app as usual).
        session.channels.subtract(records.map(\.connection.channel))
        teardown(session, error: error)
        let now = ContinuousClock.now
        for record in records {
            record.rejoin = ConnectionRecord.Rejoin(started: now, failedEdge: session.edge)
            record.staysUntilClose = false
            record.joinStarted = now
            record.firstFrameReported = []
            setState(.reconnecting, .edgeLost, of: record)
        }
        refreshPublishing()
        for record in records { placeAgain(record) }
    }

    /// Asks the placement for the connection's edge, avoiding the failed one, off the loop.
    private func placeAgain(_ record: ConnectionRecord) {
        guard !isShutDown, var rejoin = record.rejoin else { return }
        rejoin.attempt = nextRejoinAttempt
        nextRejoinAttempt += 1
        record.rejoin = rejoin
        let attempt = rejoin.attempt
        let channel = record.connection.channel
        place(record, avoiding: rejoin.failedEdge) { core, placed in core.placed(channel: channel, attempt: attempt, placed) }
    }

    /// Asks the placement (off the loop) for an edge for `record`'s channel other than
    /// `avoiding`; `done` runs on the loop.
    func place(_ record: ConnectionRecord, avoiding: EdgeAddress, _ done: @escaping (EngineShell, Result<EdgeAddress, ShowroomError>) -> Void) {
        let channel = record.connection.channel
        let credentials = PlacementCredentials(uid: record.connection.uid, token: record.token, audience: record.role == .audience)
        let placement = self.placement
        let core = WeakLoopReference(self)
        let loop = self.loop
        let done = UncheckedLoopWork(done)
        Task {
            let placed: Result<EdgeAddress, ShowroomError>
            do throws(ShowroomError) {
                placed = .success(try await placement.edge(for: channel, avoiding: avoiding, joiningAs: credentials))
            } catch {
                placed = .failure(error)
            }
            loop.execute { if let core = core.object { done.work(core, placed) } }
        }
    }

    /// The attempt's record, if it is still the one under way.
    private func rejoining(_ channel: String, attempt: UInt64) -> ConnectionRecord? {
        guard !isShutDown, let record = connections[channel], record.rejoin?.attempt == attempt else { return nil }
        return record
    }

    private func placed(channel: String, attempt: UInt64, _ placed: Result<EdgeAddress, ShowroomError>) {
        guard let record = rejoining(channel, attempt: attempt) else { return }
        let edge: EdgeAddress
        switch placed {
        case .success(let found): edge = found
        case .failure(let error): return rejoinFailed(record, error, on: nil)
        }
        rejoin(channel, attempt: attempt, on: edge, redirected: false)
    }

    /// Joins the attempt's connection on `edge`; a `CHANNEL_ELSEWHERE` refusal is followed once.
    private func rejoin(_ channel: String, attempt: UInt64, on edge: EdgeAddress, redirected: Bool) {
        joinElsewhere(channel, on: edge, while: { [weak self] in self?.rejoining(channel, attempt: attempt) }) { core, record, result in
            switch result {
            case .success(let (session, role)):
                core.rejoined(record, on: session, role: role)
            case .failure(let error):
                if !redirected, let target = Self.redirectTarget(of: error) {
                    return core.rejoin(channel, attempt: attempt, on: target, redirected: true)
                }
                core.rejoinFailed(record, error, on: edge)
            }
        }
    }

    /// Joins a connection's channel on another edge with its token, uid, role and options (a
    /// rejoin, a move), while `current` still names the record the attempt is for; `done` gets the
    /// session and the role granted, or why not. An attempt no longer wanted lets the new edge
    /// go (leaving the channel there if the join went through).
    func joinElsewhere(
        _ channel: String, on edge: EdgeAddress, while current: @escaping () -> ConnectionRecord?,
        _ done: @escaping (EngineShell, ConnectionRecord, Result<(EdgeSession, ClientRole), ShowroomError>) -> Void
    ) {
        withOpenSession(to: edge) { [weak self] result in
            guard let self else { return }
            let session: EdgeSession
            switch result {
            case .success(let open): session = open
            case .failure(let error):
                if let record = current() { done(self, record, .failure(error)) }
                return
            }
            guard let record = current() else { return self.releaseIfUnused(session) }
            session.channels.insert(channel)
            let join = EdgeRequest.join(
                channel: channel, uid: record.connection.uid, token: record.token, role: record.role.edgeRole, options: record.wireOptions)
            self.request(join, on: session) { [weak self, weak session] result in
                guard let self, let session else { return }
                guard let record = current() else { return self.leaveQuietly(channel, on: session) }
                switch result {
                case .success(.joined(_, _, _, let grantedRole)):
                    done(self, record, .success((session, ClientRole(grantedRole))))
                case .success(let body):
                    self.leaveQuietly(channel, on: session)
                    done(self, record, .failure(.malformed("the edge answered a join with \(body)")))
                case .failure(let error):
                    session.channels.remove(channel)
                    self.releaseIfUnused(session)
                    done(self, record, .failure(error))
                }
            }
        }
    }

    /// The new edge accepted the join: restore what the app had set and resume.
    private func rejoined(_ record: ConnectionRecord, on session: EdgeSession, role: ClientRole) {
        guard let rejoin = record.rejoin else { return }
        record.edge = session.edge
        record.role = role
        record.rejoin = nil
        statistics.rejoins += 1
        let connection = record.connection
        restoreSubscriptions(of: record, on: session)
        // The new edge has no GOP cache of this publisher: its first frame there must decode.
        wantKeyframe()
        setState(.connected, .rejoinSucceeded, of: record)
        emit(.rejoinedChannel(connection, elapsed: rejoin.started.duration(to: .now)))
        refreshPublishing()
    }

    /// Sets on a connection's new edge the subscriptions and remote mutes the app had set.
    func restoreSubscriptions(of record: ConnectionRecord, on session: EdgeSession) {
        let connection = record.connection
        let restore = record.subscriptions.sorted { $0.key < $1.key }
            .map { $0.value ? EdgeRequest.subscribe($0.key) : .unsubscribe($0.key) }
            + record.remoteMutes.sorted().map { EdgeRequest.muteRemote($0, muted: true) }
        for request in restore {
            self.request(request, on: session) { [weak self] result in
                if case .failure(let error) = result { self?.emit(.error(connection, error)) }
            }
        }
    }

    /// An attempt failed: try again after the backoff, or give up (a refusal no other edge would
    /// lift, or the rejoin window has passed).
    private func rejoinFailed(_ record: ConnectionRecord, _ error: ShowroomError, on edge: EdgeAddress?) {
        guard var rejoin = record.rejoin else { return }
        if let edge, error.code == .unavailable || error.code == .deadlineExceeded {
            rejoin.failedEdge = edge  // that edge is no better: avoid it next
        }
        guard !Self.refusalIsFinal(error),
              let delay = rejoin.backoff.next(elapsed: rejoin.started.duration(to: .now), window: configuration.rejoinWindow)
        else {
            return giveUp(record, error)
        }
        record.rejoin = rejoin
        let channel = record.connection.channel
        let attempt = rejoin.attempt
        loop.scheduleTimer(after: delay) { [weak self] in
            guard let self, let record = self.rejoining(channel, attempt: attempt) else { return }
            self.placeAgain(record)
        }
    }

    private func giveUp(_ record: ConnectionRecord, _ error: ShowroomError) {
        let channel = record.connection.channel
        if connections[channel] === record { connections[channel] = nil }
        record.rejoin = nil
        forget(channel)
        emit(.connectionClosed(record.connection, error: error))
        setState(.failed, Self.refusalIsFinal(error) ? .joinFailed(error) : .edgeLost, of: record)
        refreshPublishing()
    }

    /// Refusals that another attempt or another edge would not lift: the token, a ban, a bad
    /// argument.
    static func refusalIsFinal(_ error: ShowroomError) -> Bool {
        (2000..<3000).contains(error.code.rawValue) || error.code == .banned || error.code == .invalidArgument
    }
}
