internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

// Moving off a draining edge, make before break: each connection is placed again (avoiding the
// draining edge) and joined there while the old edge still serves it; the switch comes with the
// first keyframe from the new edge (a viewer), or at once (a broadcaster, who then stays joined on
// the old edge until it closes, publishing to both). The app sees no state change and no gap.

extension EngineShell {
    /// The longest a viewer's move waits for the new edge's first keyframe before it switches.
    static var moveSwitchTimeout: Duration { .seconds(2) }

    /// `EDGE_DRAINING`: the session's edge shuts down within `within`; its connections move.
    func edgeDraining(_ session: EdgeSession, within: Duration) {
        guard session.phase == .open, !session.isDraining else { return }
        session.isDraining = true
        let records = session.channels.sorted().compactMap { channel -> ConnectionRecord? in
            guard let record = connections[channel], record.isJoined, record.rejoin == nil, record.move == nil,
                  record.edgeEndpoint == session.edge.endpoint else { return nil }
            return record
        }
        releaseIfUnused(session)
        for record in records {
            let attempt = nextRejoinAttempt
            nextRejoinAttempt += 1
            record.move = ConnectionRecord.Move(from: session.edge, attempt: attempt)
            let channel = record.connection.channel
            place(record, avoiding: session.edge) { core, placed in core.movePlaced(channel: channel, attempt: attempt, placed) }
        }
    }

    /// The record whose move `attempt` is still under way.
    private func moving(_ channel: String, attempt: UInt64) -> ConnectionRecord? {
        guard !isShutDown, let record = connections[channel], record.move?.attempt == attempt else { return nil }
        return record
    }

    private func movePlaced(channel: String, attempt: UInt64, _ placed: Result<EdgeAddress, ShowroomError>) {
        guard let record = moving(channel, attempt: attempt) else { return }
        guard case .success(let edge) = placed else { return moveFailed(record) }
        joinElsewhere(channel, on: edge, while: { [weak self] in self?.moving(channel, attempt: attempt) }) { core, record, result in
            switch result {
            case .success(let (session, _)): core.moveJoined(record, on: session)
            case .failure: core.moveFailed(record)
            }
        }
    }

    /// A move that cannot happen (nowhere to go, refused): the connection stays on the draining
    /// edge, served until it closes (then it rejoins as on a failure), and the edge need not wait
    /// for it (a whole cluster going down closes at once).
    private func moveFailed(_ record: ConnectionRecord) {
        guard let move = record.move else { return }
        record.move = nil
        record.staysUntilClose = true
        if let old = sessions[move.from.endpoint] { reportMovedOut(old) }
    }

    private func moveJoined(_ record: ConnectionRecord, on session: EdgeSession) {
        guard var move = record.move else { return }
        move.to = session.edge
        record.move = move
        restoreSubscriptions(of: record, on: session)
        let channel = record.connection.channel
        let watchesVideo = !(videoSinks[channel]?.isEmpty ?? true)
        guard record.role == .audience, !record.publishesAsAudience, watchesVideo else {
            return switchOver(record, to: session)
        }
        // A viewer switches with the new edge's first keyframe (the GOP cache sends one at once
        // when the channel's publishers are there), or after a bounded wait.
        let attempt = move.attempt
        loop.scheduleTimer(after: Self.moveSwitchTimeout) { [weak self, weak session] in
            guard let self, let session, let record = self.moving(channel, attempt: attempt) else { return }
            self.switchOver(record, to: session)
        }
    }

    /// Whether a media frame from `session` for `record` is to be used: frames come from the
    /// connection's edge; during a move, a keyframe from the new edge switches over to it.
    func acceptsMedia(from session: EdgeSession, for record: ConnectionRecord, isKeyframe: Bool) -> Bool {
        if record.edgeEndpoint == session.edge.endpoint { return true }
        guard isKeyframe, record.move?.to?.endpoint == session.edge.endpoint else { return false }
        switchOver(record, to: session)
        return true
    }

    /// The connection is served by `session`'s edge from now on; the old edge is left (a viewer)
    /// or kept until it closes (a broadcaster).
    private func switchOver(_ record: ConnectionRecord, to session: EdgeSession) {
        guard let move = record.move else { return }
        record.move = nil
        record.edge = session.edge
        statistics.moves += 1
        let channel = record.connection.channel
        guard let old = sessions[move.from.endpoint], old.phase == .open else { return }
        if record.role == .broadcaster || record.publishesAsAudience {
            record.lingeringOn = move.from
            // The new edge has no GOP cache of this publisher: its first frame there must decode.
            wantKeyframe()
            refreshPublishing()
            reportMovedOut(old)
        } else {
            leaveQuietly(channel, on: old)
        }
    }

    /// Tells a draining edge, once every connection in the session has moved (the broadcasters
    /// lingering there included) or cannot, that it need not wait for this session before it closes.
    private func reportMovedOut(_ session: EdgeSession) {
        guard session.isDraining, !session.movedOut, session.phase == .open,
              session.channels.allSatisfy({ connections[$0].map { $0.edgeEndpoint != session.edge.endpoint || $0.staysUntilClose } ?? true }),
              let envelope = try? EdgeCodec.movedOut()
        else { return }
        session.movedOut = true
        _ = try? session.send(envelope)
    }

    /// Leaves `channel` on `session` for a connection that lives elsewhere now (or never came to
    /// be there); the session then goes warm, or closes if it drains.
    func leaveQuietly(_ channel: String, on session: EdgeSession) {
        guard session.phase == .open, session.channels.contains(channel) else { return releaseIfUnused(session) }
        request(.leave(channel: channel), on: session) { [weak self, weak session] _ in
            guard let self, let session else { return }
            if self.connections[channel]?.edgeEndpoint != session.edge.endpoint { session.channels.remove(channel) }
            self.reportMovedOut(session)
            self.keepWarm(session)
        }
    }

    /// The old edge closed a session some connections moved away from: those that switched are
    /// done; those whose move joined the new edge switch now; the rest rejoin as on a failure.
    func settleMoves(leaving session: EdgeSession) {
        for channel in session.channels.sorted() {
            guard let record = connections[channel] else { continue }
            if record.lingeringOn?.endpoint == session.edge.endpoint { record.lingeringOn = nil }
            guard let move = record.move, move.from.endpoint == session.edge.endpoint else { continue }
            if let to = move.to, let target = sessions[to.endpoint], target.phase == .open {
                switchOver(record, to: target)
            } else {
                record.move = nil
            }
        }
    }
}
