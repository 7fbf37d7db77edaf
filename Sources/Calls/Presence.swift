/// The signaling sessions of the users one call-signal node owns, as a pure state machine: who is
/// logged in, under which session, until when its token lasts and when it was last heard from.
/// Time comes in as `nowMs`; ``tick(nowMs:)`` says who timed out and whose token will expire.
public struct Presence: Sendable {
    /// One logged-in user.
    public struct Session: Sendable, Equatable {
        /// The session's secret id (every request of the session names it).
        public let id: String
        /// The user.
        public let uid: UInt32
        /// When the user logged in.
        public let loggedInAtMs: Int64
        /// When the login token expires.
        public internal(set) var tokenExpiresAtMs: Int64
        /// When the session was last heard from.
        public internal(set) var lastHeardMs: Int64
        /// Whether it was told its token will expire (once per token).
        public internal(set) var warned: Bool = false
    }

    /// Why a session ended.
    public enum Ended: String, Sendable, Equatable {
        /// The user logged out.
        case loggedOut
        /// Nothing was heard from it within the heartbeat timeout.
        case timedOut
        /// Its token expired unrenewed.
        case tokenExpired
        /// The same user logged in again.
        case replaced
    }

    /// What the shell must do.
    public enum Directive: Sendable, Equatable {
        /// The session ended: the user is offline (unless `replaced`).
        case ended(Session, Ended)
        /// Tell the session its token expires within ``willExpireAheadMs``.
        case tokenWillExpire(Session)
    }

    /// How long a session may stay silent (default 10 s).
    public var heartbeatTimeoutMs: Int64
    /// How long before its token's expiry a session is warned (30 s, as the seeds say).
    public var willExpireAheadMs: Int64 = 30_000
    /// The sessions by id.
    public private(set) var sessions: [String: Session] = [:]
    /// The session of each logged-in user.
    public private(set) var sessionOf: [UInt32: String] = [:]

    /// No one logged in.
    public init(heartbeatTimeoutMs: Int64 = 10_000) {
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
    }

    /// Whether `uid` is logged in.
    public func isOnline(_ uid: UInt32) -> Bool { sessionOf[uid] != nil }

    /// The session `id`, if it is logged in, marked heard from now.
    public mutating func session(_ id: String, nowMs: Int64) -> Session? {
        guard var session = sessions[id] else { return nil }
        session.lastHeardMs = max(session.lastHeardMs, nowMs)
        sessions[id] = session
        return session
    }

    /// `uid` logs in under session `id` (a fresh random id from the shell), with a token valid
    /// until `tokenExpiresAtMs`. An older session of the same user is replaced.
    public mutating func login(uid: UInt32, session id: String, tokenExpiresAtMs: Int64, nowMs: Int64) -> [Directive] {
        var directives: [Directive] = []
        if let old = sessionOf[uid], let session = sessions.removeValue(forKey: old) {
            directives.append(.ended(session, .replaced))
        }
        sessions[id] = Session(id: id, uid: uid, loggedInAtMs: nowMs, tokenExpiresAtMs: tokenExpiresAtMs, lastHeardMs: nowMs)
        sessionOf[uid] = id
        return directives
    }

    /// The session logs out.
    public mutating func logout(_ id: String) -> [Directive] {
        guard let session = remove(id) else { return [] }
        return [.ended(session, .loggedOut)]
    }

    /// The session renewed its token.
    public mutating func renew(_ id: String, tokenExpiresAtMs: Int64, nowMs: Int64) {
        guard var session = sessions[id] else { return }
        session.tokenExpiresAtMs = tokenExpiresAtMs
        session.warned = false
        session.lastHeardMs = max(session.lastHeardMs, nowMs)
        sessions[id] = session
    }

    /// Ends silent sessions and those whose token expired; warns those whose token expires soon.
    public mutating func tick(nowMs: Int64) -> [Directive] {
        var directives: [Directive] = []
        for id in sessions.keys.sorted() {
            guard var session = sessions[id] else { continue }
            if nowMs - session.lastHeardMs >= heartbeatTimeoutMs {
                _ = remove(id)
                directives.append(.ended(session, .timedOut))
            } else if nowMs >= session.tokenExpiresAtMs {
                _ = remove(id)
                directives.append(.ended(session, .tokenExpired))
            } else if !session.warned, session.tokenExpiresAtMs - nowMs <= willExpireAheadMs {
                session.warned = true
                sessions[id] = session
                directives.append(.tokenWillExpire(session))
            }
        }
        return directives
    }

    /// Takes over a session from its user's former owner (a replica): it stays logged in, heard
    /// from now. A newer session of the same user held here wins.
    public mutating func adopt(_ state: UserRecord.SessionState, uid: UInt32, nowMs: Int64) {
        if let current = sessionOf[uid], let held = sessions[current], held.loggedInAtMs >= state.loggedInAtMs { return }
        if let old = sessionOf[uid] { sessions[old] = nil }
        sessions[state.id] = Session(id: state.id, uid: uid, loggedInAtMs: state.loggedInAtMs,
                                     tokenExpiresAtMs: state.tokenExpiresAtMs, lastHeardMs: nowMs)
        sessionOf[uid] = state.id
    }

    /// Forgets the session of `uid`, now owned by another node: no directive (the user is not
    /// offline, only held elsewhere).
    public mutating func release(_ uid: UInt32) {
        guard let id = sessionOf[uid] else { return }
        _ = remove(id)
    }

    /// The session of `uid` as a replica keeps it.
    public func state(of uid: UInt32) -> UserRecord.SessionState? {
        guard let id = sessionOf[uid], let session = sessions[id] else { return nil }
        return UserRecord.SessionState(id: id, loggedInAtMs: session.loggedInAtMs, tokenExpiresAtMs: session.tokenExpiresAtMs)
    }

    private mutating func remove(_ id: String) -> Session? {
        guard let session = sessions.removeValue(forKey: id) else { return nil }
        if sessionOf[session.uid] == id { sessionOf[session.uid] = nil }
        return session
    }
}
