internal import EdgeProtocol

// Edge sessions: opened on demand, kept alive by heartbeats and judged by the edge's silence,
// kept warm for a while after their last channel leaves, closed politely, and failed over when
// the link breaks.

extension EngineState {
    /// Runs `waiter` on the session with `edge` (opening one if there is none) once it is open.
    mutating func withSession(to edge: EdgeAddress, _ waiter: Session.Waiter, now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        if let serial = active[edge.endpoint], let session = sessions[serial] {
            if session.isDraining {
                return fail(waiter, on: session.edge, .unavailable("edge \(edge) is shutting down; join the channel again through the cluster"),
                            now: now, &out)
            }
            if session.phase == .open { return run(waiter, on: serial, now: now, &out) }
            sessions[serial]?.waiting.append(waiter)
            return
        }
        let serial = SessionSerial(value: nextNumber())
        sessions[serial] = Session(
            serial: serial, edge: edge, heartbeatInterval: settings.heartbeatInterval, heartbeatTimeout: settings.heartbeatTimeout,
            lastHeard: now, waiting: [waiter])
        active[edge.endpoint] = serial
        sessionsOpened += 1
        out.append(.openSession(serial, edge))
        out.append(.request(.openSession(clientID: settings.clientID, sdkVersion: settings.sdkVersion), on: serial, for: .openSession))
    }

    /// The shell could not open the session's socket.
    mutating func sessionFailed(_ serial: SessionSerial, _ error: ShowroomError, now: ContinuousClock.Instant) -> [EngineDirective] {
        var out: [EngineDirective] = []
        teardown(serial, error, now: now, &out)
        return out
    }

    mutating func sessionOpened(_ serial: SessionSerial, _ result: Result<EdgeReplyBody, ShowroomError>, now: ContinuousClock.Instant,
                                _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], session.phase == .opening else { return }
        switch result {
        case .success(.sessionOpened(_, let interval, let timeout, let limits)):
            sessions[serial]?.phase = .open
            if interval > .zero { sessions[serial]?.heartbeatInterval = interval }
            if timeout > .zero { sessions[serial]?.heartbeatTimeout = timeout }
            sessions[serial]?.limits = limits
            sessions[serial]?.lastHeard = now
            out.append(.schedule(.heartbeat(serial), after: sessions[serial]!.heartbeatInterval))
            if let volumeIndication {
                out.append(.request(.enableVolumeIndication(volumeIndication), on: serial, for: .none))
            }
            let waiting = session.waiting
            sessions[serial]?.waiting = []
            for waiter in waiting { run(waiter, on: serial, now: now, &out) }
        case .success(let body):
            teardown(serial, .malformed("edge \(session.edge) answered the session request with \(body)"), now: now, &out)
        case .failure(let error):
            teardown(serial, error, now: now, &out)
        }
    }

    private mutating func run(_ waiter: Session.Waiter, on serial: SessionSerial, now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        switch waiter {
        case .join(let channel, let attempt):
            sendJoin(channel, attempt, on: serial, now: now, &out)
        case .preload(let ticket, let channel, let uid, let token):
            keepWarm(serial, &out)
            out.append(.request(.preload(channel: channel, uid: uid, token: token), on: serial, for: .preload(ticket: ticket)))
        }
    }

    private mutating func fail(_ waiter: Session.Waiter, on edge: EdgeAddress, _ error: ShowroomError, now: ContinuousClock.Instant,
                               _ out: inout [EngineDirective]) {
        switch waiter {
        case .join(let channel, let attempt):
            joinFailed(channel, attempt, error, on: edge, now: now, &out)
        case .preload(let ticket, _, _, _):
            out.append(.complete(ticket, .failure(error)))
        }
    }

    /// Anything from the edge was heard: it is alive, and an interrupted session recovers.
    mutating func heard(_ serial: SessionSerial, now: ContinuousClock.Instant) -> [EngineDirective] {
        // Runs for every batch received: the session is changed in place, not copied.
        guard let index = sessions.index(forKey: serial) else { return [] }
        sessions.values[index].lastHeard = now
        guard sessions.values[index].isInterrupted else { return [] }
        sessions.values[index].isInterrupted = false
        var out: [EngineDirective] = []
        setState(.connected, .recovered, channelsOf: serial, &out)
        return out
    }

    /// One heartbeat tick: judge the edge by how long it has been silent, and send a heartbeat (as
    /// a request, so the edge answers and its silence shows).
    mutating func heartbeat(_ serial: SessionSerial, now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], session.phase == .open else { return }
        let silence = session.lastHeard.duration(to: now)
        if silence >= session.heartbeatTimeout {
            return edgeFailed(serial, .unavailable("edge \(session.edge) silent for \(session.heartbeatTimeout); its session is gone"),
                              now: now, &out)
        }
        if !session.isInterrupted, silence >= session.heartbeatInterval * settings.interruptedAfterIntervals {
            sessions[serial]?.isInterrupted = true
            setState(.reconnecting, .interrupted, channelsOf: serial, &out)
        }
        out.append(.heartbeat(serial))
        out.append(.schedule(.heartbeat(serial), after: session.heartbeatInterval))
    }

    /// A session whose last channel was left stays open (warm) for the session idle time, so the
    /// next room on its edge costs no handshake, then closes if no channel came meanwhile.
    mutating func keepWarm(_ serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial] else { return }
        guard settings.sessionIdleTime > .zero, !isShutDown, !session.isDraining else { return releaseIfUnused(serial, &out) }
        guard session.channels.isEmpty, session.phase == .open else { return }
        let generation = session.idleGeneration &+ 1
        sessions[serial]?.idleGeneration = generation
        out.append(.schedule(.idle(serial, generation: generation), after: settings.sessionIdleTime))
    }

    /// Closes a session that holds no connection any more: `EDGE_CLOSE_SESSION`, then the socket
    /// once the edge answers (closing at once would drop the request, sockets have no linger).
    mutating func releaseIfUnused(_ serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial], session.channels.isEmpty, session.phase == .open else { return }
        sessions[serial]?.phase = .closing
        deactivate(serial)
        out.append(.request(.closeSession, on: serial, for: .closeSession, timeout: min(settings.requestTimeout, .seconds(1))))
    }

    /// The session is no longer the one new joins to its edge use.
    mutating func deactivate(_ serial: SessionSerial) {
        guard let endpoint = sessions[serial]?.edge.endpoint, active[endpoint] == serial else { return }
        active[endpoint] = nil
    }

    /// Closes the session: its socket goes, what waits on it fails, and the joined connections
    /// still in it are forgotten (their owners reported them already).
    mutating func teardown(_ serial: SessionSerial, _ error: ShowroomError, now: ContinuousClock.Instant, _ out: inout [EngineDirective]) {
        guard let session = sessions[serial] else { return }
        deactivate(serial)
        sessions[serial] = nil
        out.append(.closeSession(serial, because: error))
        for channel in session.channels {
            if let record = connections[channel], record.isJoined, record.edgeEndpoint == session.edge.endpoint {
                connections[channel] = nil
            }
        }
        for waiter in session.waiting { fail(waiter, on: session.edge, error, now: now, &out) }
        sessionGone(serial, &out)
    }

    /// Removes every connection of a session, reporting each as closed.
    mutating func closeConnections(of serial: SessionSerial, state: ConnectionState, reason: ConnectionStateReason, error: ShowroomError,
                                   _ out: inout [EngineDirective]) {
        guard let session = sessions[serial] else { return }
        for channel in session.channels.sorted() {
            // A connection that moved to another edge is not this session's to close.
            guard connections[channel]?.edgeEndpoint == session.edge.endpoint, let record = connections.removeValue(forKey: channel) else { continue }
            forget(channel, &out)
            if record.isJoined { out.append(.emit(.connectionClosed(record.connection, error: error))) }
            report(state, reason, of: record, &out)
        }
        sessions[serial]?.channels = []
        out.append(.refreshPublishing)
    }

    /// The socket's link to the edge broke (a killed edge's TCP connection closes at once).
    mutating func linkBroke(_ serial: SessionSerial, now: ContinuousClock.Instant) -> [EngineDirective] {
        guard let session = sessions[serial] else { return [] }
        var out: [EngineDirective] = []
        edgeFailed(serial, .unavailable("the connection to edge \(session.edge) broke"), now: now, &out)
        return out
    }

    /// Leaves everything and closes every session; `ticket` ends once the edges answered (or the
    /// close timed out).
    mutating func shutdown(ticket: EngineTicket, now: ContinuousClock.Instant) -> [EngineDirective] {
        var out: [EngineDirective] = []
        guard !isShutDown else { return [.complete(ticket, .success(nil))] }
        isShutDown = true
        for channel in connections.keys.sorted() where connections[channel]?.isJoined == true {
            setState(.disconnected, .left, of: channel, &out)
        }
        for channel in connections.keys.sorted() { out.append(.forgetMedia(channel: channel)) }
        connections = [:]
        primaryChannel = nil
        videoSinks = [:]
        out.append(.refreshPublishing)
        let current = Set(active.values)
        shutdownTicket = ticket
        shutdownWaits = current
        guard !current.isEmpty else {
            shutdownTicket = nil
            out.append(.complete(ticket, .success(nil)))
            return out
        }
        for serial in current.sorted() {
            sessions[serial]?.channels = []
            if sessions[serial]?.phase == .open {
                // CLOSE_SESSION makes the others see the users quit at once, not after the edge's
                // heartbeat timeout.
                releaseIfUnused(serial, &out)
            } else {
                teardown(serial, .unavailable("the engine has shut down"), now: now, &out)
            }
        }
        return out
    }

    /// A session closed: a shutdown ends once every session it waits for has.
    mutating func sessionGone(_ serial: SessionSerial, _ out: inout [EngineDirective]) {
        guard shutdownWaits.remove(serial) != nil, shutdownWaits.isEmpty, let ticket = shutdownTicket else { return }
        shutdownTicket = nil
        out.append(.complete(ticket, .success(nil)))
    }

    // MARK: - Timers and answers

    /// A timer the state asked for fired.
    mutating func fired(_ timer: EngineTimer, now: ContinuousClock.Instant) -> [EngineDirective] {
        var out: [EngineDirective] = []
        switch timer {
        case .heartbeat(let serial):
            heartbeat(serial, now: now, &out)
        case .idle(let serial, let generation):
            if sessions[serial]?.idleGeneration == generation { releaseIfUnused(serial, &out) }
        case .rejoinRetry(let channel, let attempt):
            if rejoining(channel, attempt: attempt) { placeAgain(channel, &out) }
        case .moveSwitch(let channel, let attempt):
            if moving(channel, attempt: attempt), let to = connections[channel]?.move?.to, let serial = openSession(to: to.endpoint) {
                switchOver(channel, to: serial, &out)
            }
        }
        return out
    }

    /// The answer to a request the state sent: the edge's reply, its refusal, the timeout, or why
    /// it could not be sent.
    mutating func answered(_ purpose: EngineRequestPurpose, on serial: SessionSerial, _ result: Result<EdgeReplyBody, ShowroomError>,
                           now: ContinuousClock.Instant) -> [EngineDirective] {
        var out: [EngineDirective] = []
        switch purpose {
        case .openSession:
            sessionOpened(serial, result, now: now, &out)
        case .join(let channel, let attempt):
            joinAnswered(channel, attempt, on: serial, result, now: now, &out)
        case .leave(let channel, let ticket):
            if sessions[serial] != nil {
                sessions[serial]?.channels.remove(channel)
                keepWarm(serial, &out)
            }
            // Not joined any more is what leaving wanted.
            if case .failure(let error) = result, error.code != .notJoined {
                out.append(.complete(ticket, .failure(error)))
            } else {
                out.append(.complete(ticket, .success(nil)))
            }
        case .leaveQuietly(let channel):
            guard let session = sessions[serial] else { break }
            if connections[channel]?.edgeEndpoint != session.edge.endpoint { sessions[serial]?.channels.remove(channel) }
            reportMovedOut(serial, &out)
            keepWarm(serial, &out)
        case .closeSession:
            teardown(serial, .unavailable("the session was closed"), now: now, &out)
        case .preload(let ticket):
            out.append(.complete(ticket, result.map { _ in nil }))
        case .restore(let connection):
            if case .failure(let error) = result { out.append(.emit(.error(connection, error))) }
        case .none:
            break
        }
        return out
    }
}
