import ShowroomWire

// The passing of time: heartbeat timeouts, token warnings and expiries, keyframe request retries,
// volume reports.

extension ChannelPlane {
    /// Lets time pass; call it every 20–50 ms (volume reports are due at their interval, keyframe
    /// requests are retried every ``EdgeSettings/keyframeRequestInterval``).
    ///
    /// - Sessions not heard from for ``EdgeSettings/heartbeatTimeout`` are dropped: their visible
    ///   users go offline (dropped) in every channel they held, and they are told
    ///   ``ShowroomError/sessionTimedOut(_:)`` in case they are merely slow.
    /// - ``EdgeSettings/tokenWarningLead`` before the first privilege in use expires, the connection
    ///   gets ``EdgeEvent/tokenWillExpire(channel:expiresIn:)`` (once per deadline).
    /// - When a privilege expires: publish privileges stop their track (the user stays, and is told
    ///   ``EdgeEvent/privilegeExpired(channel:privilege:)``); the join privilege ends the connection
    ///   (``EdgeEvent/connectionClosed(channel:reason:)``, offline-dropped for the others).
    /// - Keyframes still wanted by waiting subscribers are asked for again.
    /// - Bans that ended are forgotten; tracks a publish ban stopped start again.
    /// - Sessions with volume indication get their reports.
    ///
    /// - Parameter now: The current clock value.
    /// - Returns: The directives.
    public mutating func tick(now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []

        var silent: [SessionID] = []
        for session in sessions.values where !session.isStandIn && now - session.lastHeard >= settings.heartbeatTimeout {
            silent.append(session.id)
        }
        for id in silent.sorted() {
            statistics.sessionsDropped += 1
            out.append(.log(EdgeLogEntry(.notice, "session \(id) silent for \(now - sessions[id]!.lastHeard); dropped")))
            endSession(
                id, leave: .dropped,
                notify: .sessionTimedOut("nothing heard from this session for \(settings.heartbeatTimeout); open a new session and rejoin"),
                close: true, now: now, &out)
        }

        expireBans(now: now, &out)

        // Read-only scan first, so idle channels are not taken out and put back every tick.
        var due: [String] = []
        for channel in channels.values where needsTick(channel, now: now) {
            due.append(channel.name)
        }
        for name in due.sorted() {
            guard var channel = take(name) else { continue }
            for session in channel.order {
                checkGrant(of: session, in: &channel, now: now, &out)
            }
            for key in channel.trackKeys where channel.tracks[key]?.keyframeWanted == true {
                requestKeyframeIfDue(key, in: &channel, now: now, &out)
            }
            store(channel, now: now, &out)
        }

        var reporting: [SessionID] = []
        for session in sessions.values where session.volume != nil && session.nextVolumeReport <= now {
            reporting.append(session.id)
        }
        for id in reporting.sorted() {
            reportVolumes(to: id, now: now, &out)
        }
        return out
    }

    func needsTick(_ channel: Channel<Frame>, now: Duration) -> Bool {
        for forwarder in channel.tracks.values where forwarder.keyframeWanted { return true }
        for connection in channel.connections.values where connection.hasGrantWork(at: now, warningLead: settings.tokenWarningLead) {
            return true
        }
        return false
    }

    /// Handles the expiries of a connection's privileges and its expiry warning.
    mutating func checkGrant(of session: SessionID, in channel: inout Channel<Frame>, now: Duration, _ out: inout [EdgeDirective]) {
        guard let connection = channel.connections[session] else { return }
        let name = channel.name
        // Join first: it ends the connection, which says all about the publish privileges that
        // usually expire with it.
        if connection.grant.privileges[.join]?.hasPassed(at: now) == true {
            out.append(.log(EdgeLogEntry(.notice, "the join privilege of uid \(connection.uid) in channel \(name) expired")))
            out.append(.send(.privilegeExpired(channel: name, privilege: .join), to: session))
            removeConnection(session, from: &channel, reason: .privilegeExpired, now: now, &out)
            out.append(.send(
                .connectionClosed(channel: name, reason: .privilegeExpired("the token's join privilege for channel \(name) expired; renew tokens when told they will expire")),
                to: session))
            return
        }
        for privilege in [Privilege.publishAudio, .publishVideo, .publishData] {
            guard let deadline = connection.grant.privileges[privilege]?.deadline, deadline <= now,
                !connection.expiredPrivileges.contains(privilege)
            else { continue }
            channel.connections[session]!.expiredPrivileges.insert(privilege)
            out.append(.log(EdgeLogEntry(.notice, "the \(privilege) privilege of uid \(connection.uid) in channel \(name) expired")))
            if connection.uses(privilege) {
                out.append(.send(.privilegeExpired(channel: name, privilege: privilege), to: session))
            }
            reconcilePublishing(of: session, in: &channel, now: now, &out)
        }
        let current = channel.connections[session]!
        if let deadline = current.nextExpiry(after: now), deadline - settings.tokenWarningLead <= now,
            current.warnedDeadline != deadline
        {
            channel.connections[session]!.warnedDeadline = deadline
            out.append(.send(.tokenWillExpire(channel: name, expiresIn: deadline - now), to: session))
        }
    }

    /// One volume report per channel of the session.
    mutating func reportVolumes(to id: SessionID, now: Duration, _ out: inout [EdgeDirective]) {
        guard let session = sessions[id], let config = session.volume else { return }
        for name in session.channels {
            guard let c = channels.index(forKey: name), channels.values[c].connections[id] != nil else { continue }
            let meter = channels.values[c].volume
            let speakers = meter.report(
                now: now, config: config, limit: settings.volumeSpeakers, speechLevel: settings.speechLevel,
                memory: &channels.values[c].connections[id]!.reportedVolumes)
            out.append(.send(.volumeIndication(channel: name, speakers: speakers), to: id))
        }
        var next = session.nextVolumeReport + config.interval
        if next <= now { next = now + config.interval }
        sessions[id]!.nextVolumeReport = next
    }
}
