internal import EdgeProtocol

// Moving off a draining edge, make before break: each connection is placed again (avoiding the
// draining edge) and joined there while the old edge still serves it; the switch comes with the
// first keyframe from the new edge (a viewer), or at once (a broadcaster, who then stays joined on
// the old edge until it closes, publishing to both). The app sees no state change and no gap.

extension EngineState {
    /// `EDGE_DRAINING`: the session's edge shuts down soon; its connections move.
    mutating func edgeDraining(_ serial: SessionSerial, now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], session.phase == .open, !session.isDraining else { return }
        sessions[serial]?.isDraining = true
        remember(failed: session.edge, now: now)
        let channels = session.channels.sorted().filter { channel in
            guard let record = connections[channel] else { return false }
            return record.isJoined && record.rejoin == nil && record.move == nil && record.edgeEndpoint == session.edge.endpoint
        }
        releaseIfUnused(serial, &out)
        for channel in channels {
            guard let record = connections[channel] else { continue }
            let attempt = nextNumber()
            connections[channel]?.move = ConnectionRecord.Move(from: session.edge, attempt: attempt)
            out.append(.place(channel: channel, credentials(of: record), avoiding: session.edge, for: .move(attempt: attempt)))
        }
    }

    /// Whether move `attempt` is the one under way for the channel.
    func moving(_ channel: String, attempt: UInt64) -> Bool {
        !isShutDown && connections[channel]?.move?.attempt == attempt
    }

    /// A move that cannot happen (nowhere to go, refused): the connection stays on the draining
    /// edge, served until it closes (then it rejoins as on a failure), and the edge need not wait
    /// for it (a whole cluster going down closes at once).
    mutating func moveFailed(_ channel: String, _ out: inout [EngineDirective]) {
        guard let move = connections[channel]?.move else { return }
        connections[channel]?.move = nil
        connections[channel]?.staysUntilClose = true
        if let old = active[move.from.endpoint] { reportMovedOut(old, &out) }
    }

    /// The new edge accepted the move's join.
    mutating func moveJoined(_ channel: String, on serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], var move = connections[channel]?.move, let record = connections[channel] else { return }
        move.to = session.edge
        connections[channel]?.move = move
        restoreSubscriptions(of: channel, on: serial, &out)
        guard record.role == .audience, !record.publishesAsAudience, watchesVideo(channel) else {
            return switchOver(channel, to: serial, &out)
        }
        // A viewer switches with the new edge's first keyframe (the GOP cache sends one at once
        // when the channel's publishers are there), or after a bounded wait.
        out.append(.schedule(.moveSwitch(channel: channel, attempt: move.attempt), after: settings.moveSwitchTimeout))
    }

    /// Whether a media frame from the session for `channel` is to be used: frames come from the
    /// connection's edge; during a move, a keyframe from the new edge switches over to it. Runs
    /// for every frame received: it reads the records in place rather than copying them.
    mutating func mediaArrived(channel: String, from serial: SessionSerial, isKeyframe: Bool) -> MediaVerdict {
        guard let index = connections.index(forKey: channel), let session = sessions.index(forKey: serial),
              connections.values[index].isJoined
        else { return .drop }
        let endpoint = sessions.values[session].edge.endpoint
        if connections.values[index].edgeEndpoint == endpoint {
            return .accept(connections.values[index].connection, joinStarted: connections.values[index].joinStarted)
        }
        guard isKeyframe, connections.values[index].move?.to?.endpoint == endpoint else { return .drop }
        var out: [EngineDirective] = []
        switchOver(channel, to: serial, &out)
        guard let record = connections[channel] else { return .drop }
        return .acceptAfterSwitch(out, record.connection, joinStarted: record.joinStarted)
    }

    /// The connection is served by the session's edge from now on; the old edge is left (a
    /// viewer) or kept until it closes (a broadcaster).
    mutating func switchOver(_ channel: String, to serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], let record = connections[channel], let move = record.move else { return }
        connections[channel]?.move = nil
        connections[channel]?.edge = session.edge
        moves += 1
        guard let old = openSession(to: move.from.endpoint) else { return }
        if record.role == .broadcaster || record.publishesAsAudience {
            connections[channel]?.lingeringOn = move.from
            // The new edge has no GOP cache of this publisher: its first frame there must decode.
            out.append(.wantKeyframe)
            out.append(.refreshPublishing)
            reportMovedOut(old, &out)
        } else {
            leaveQuietly(channel, on: old, &out)
        }
    }

    /// Tells a draining edge, once every connection in the session has moved (the broadcasters
    /// lingering there included) or cannot, that it need not wait for this session before it closes.
    mutating func reportMovedOut(_ serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], session.isDraining, !session.movedOut, session.phase == .open,
              session.channels.allSatisfy({ connections[$0].map { $0.edgeEndpoint != session.edge.endpoint || $0.staysUntilClose } ?? true })
        else { return }
        sessions[serial]?.movedOut = true
        out.append(.movedOut(serial))
    }

    /// The old edge closed a session some connections moved away from: those that switched are
    /// done; those whose move joined the new edge switch now; the rest rejoin as on a failure.
    mutating func settleMoves(leaving serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial] else { return }
        for channel in session.channels.sorted() {
            guard let record = connections[channel] else { continue }
            if record.lingeringOn?.endpoint == session.edge.endpoint { connections[channel]?.lingeringOn = nil }
            guard let move = record.move, move.from.endpoint == session.edge.endpoint else { continue }
            if let to = move.to, let target = openSession(to: to.endpoint) {
                switchOver(channel, to: target, &out)
            } else {
                connections[channel]?.move = nil
            }
        }
    }
}
