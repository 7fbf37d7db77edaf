import ShowroomWire

// Sessions: open, close, heartbeat, and the end of a session however it comes.

extension ChannelPlane {
    /// Opens a session: the first request of a client connection.
    ///
    /// Opening again on an open session starts it afresh (its users quit their channels). Opening
    /// with a client id that another session holds replaces that session — a client reconnecting
    /// from a new socket before the old one timed out: the old session's users go offline
    /// (dropped) and it is told ``ShowroomError/sessionReplaced(_:)``.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - clientID: Stable id of the client installation or process ("" if none).
    ///   - sdkVersion: For logs.
    ///   - now: The current clock value.
    /// - Returns: The reply (heartbeat timing and limits) and the effects of a replacement.
    public mutating func openSession(
        _ session: SessionID, requestID: UInt64 = 0, clientID: String, sdkVersion: String, now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        if sessions[session] != nil {
            endSession(session, leave: .quit, notify: nil, close: false, now: now, &out)
        }
        if !clientID.isEmpty, let old = sessionsByClient[clientID], old != session {
            out.append(.log(EdgeLogEntry(.info, "session \(old) of client \(clientID) replaced by \(session)")))
            endSession(
                old, leave: .replaced,
                notify: .sessionReplaced("client \(clientID) opened a new session; this one is closed"),
                close: true, now: now, &out)
        }
        sessions[session] = ClientSession(id: session, clientID: clientID, sdkVersion: sdkVersion, openedAt: now, lastHeard: now)
        if !clientID.isEmpty { sessionsByClient[clientID] = session }
        statistics.sessionsOpened += 1
        reply(
            .sessionOpened(
                session: session, heartbeatInterval: settings.heartbeatInterval,
                heartbeatTimeout: settings.heartbeatTimeout, limits: settings.limits),
            .openSession, requestID: requestID, to: session, &out)
        return out
    }

    /// Records the IP address a session's client connects from (the transport's word, given once
    /// the session is open): address bans match it from then on. Ignored for an edge's link and
    /// for anything not an IP address.
    ///
    /// - Parameters:
    ///   - address: The peer's address, as the transport gives it.
    ///   - session: The client connection.
    public mutating func setAddress(_ address: String, of session: SessionID) {
        guard let client = sessions[session], !client.isForwardLink, !client.isRelayLink, !client.isStandIn else { return }
        sessions[session]?.address = IPAddress.canonical(address)
    }

    /// Closes a session at the client's request: it leaves every channel (its users quit).
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - now: The current clock value.
    /// - Returns: The users' offline events, the reply, then ``EdgeDirective/closeSession(_:)``.
    public mutating func closeSession(_ session: SessionID, requestID: UInt64 = 0, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard sessions[session] != nil else {
            fail(.noSession("no session is open on this connection"), .closeSession, requestID: requestID, to: session, now: now, &out)
            return out
        }
        endSession(session, leave: .quit, notify: nil, close: false, now: now, &out)
        reply(.sessionClosed, .closeSession, requestID: requestID, to: session, &out)
        out.append(.closeSession(session))
        return out
    }

    /// A heartbeat (any other message counts as one too).
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - clientTime: The client's clock, echoed for round-trip measurement.
    ///   - now: The current clock value.
    /// - Returns: The reply; `ERROR_CODE_NO_SESSION` if the session is not open (the edge
    ///   restarted or dropped it: the client must open a new one and rejoin).
    public mutating func heartbeat(_ session: SessionID, requestID: UInt64 = 0, clientTime: UInt64 = 0, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard sessions[session] != nil else {
            fail(
                .noSession("no session is open on this connection (timed out or edge restarted); open a session and rejoin"),
                .heartbeat, requestID: requestID, to: session, now: now, &out)
            return out
        }
        touch(session, now: now)
        reply(.heartbeat(clientTime: clientTime), .heartbeat, requestID: requestID, to: session, &out)
        return out
    }

    /// The shell found the session unreachable (a send returned "no such peer"): it is dropped
    /// like a silent one, without waiting for the heartbeat timeout.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - now: The current clock value.
    /// - Returns: The users' offline events and ``EdgeDirective/closeSession(_:)``.
    public mutating func sessionUnreachable(_ session: SessionID, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard sessions[session] != nil else { return out }
        statistics.sessionsDropped += 1
        out.append(.log(EdgeLogEntry(.notice, "session \(session) unreachable; dropped")))
        endSession(session, leave: .dropped, notify: nil, close: true, now: now, &out)
        return out
    }

    /// The edge is going away (drain, shutdown): every session is told `reason` and closed; the
    /// visible users go offline (dropped) for the others first. Sessions without a broadcaster
    /// close first, so that a relay's link (whose far end keeps its viewers' publishers while it
    /// pulls again elsewhere) never hears a publisher go offline.
    ///
    /// - Parameters:
    ///   - reason: What the clients are told (``EdgeEvent/sessionClosed(reason:)``).
    ///   - now: The current clock value.
    /// - Returns: The events and closes.
    public mutating func closeAllSessions(reason: ShowroomError, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        let broadcasting = Set(channels.values.flatMap { channel in channel.broadcasterSessions })
        for id in sessions.keys.sorted(by: { (broadcasting.contains($0) ? 1 : 0, $0) < (broadcasting.contains($1) ? 1 : 0, $1) }) {
            endSession(id, leave: .server, notify: reason, close: true, now: now, &out)
        }
        return out
    }

    /// Ends a session: every connection is removed (its visible users go offline, its leaves are
    /// reported with `leave`), then the session is told `notify` (if any) and closed (if `close`).
    mutating func endSession(
        _ id: SessionID, leave: ChannelActivity.LeaveReason, notify: ShowroomError?, close: Bool, now: Duration,
        _ out: inout [EdgeDirective]
    ) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        if sessionsByClient[session.clientID] == id { sessionsByClient[session.clientID] = nil }
        if !session.channels.isEmpty {
            out.append(.log(EdgeLogEntry(.info, "session \(id) ends (\(leave)) holding \(session.channels.count) channel connection(s)")))
        }
        for name in session.channels {
            guard var channel = take(name) else { continue }
            removeConnection(id, from: &channel, reason: leave, now: now, &out)
            store(channel, now: now, &out)
        }
        if let notify { out.append(.send(.sessionClosed(reason: notify), to: id)) }
        if close { out.append(.closeSession(id)) }
    }
}
