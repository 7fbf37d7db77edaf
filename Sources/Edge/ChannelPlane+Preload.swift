import ShowroomWire

// PRELOAD_CHANNEL: a token checked ahead of the join it is for (VideoLoaderAPI's preloadChannel),
// so opening a preloaded room costs no token check at the edge.

extension ChannelPlane {
    /// How long a preloaded grant is kept.
    public static var preloadKept: Duration { .seconds(30) }
    /// The most grants a session keeps preloaded (the oldest goes first).
    public static var maxPreloadsPerSession: Int { 20 }

    /// Keeps a grant checked ahead for `session`'s join of `channel` as `uid` with `token`.
    ///
    /// - Parameters:
    ///   - grant: The token's check (the shell's verifier): a refusal is the failed reply.
    /// - Returns: The reply: the grant's lifetime, or the token's refusal (`NO_SESSION` without a
    ///   session).
    public mutating func preload(
        _ session: SessionID, requestID: UInt64, channel: String, uid: UInt32, token: String,
        grant: Result<ChannelGrant, ShowroomError>, now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard sessions[session] != nil else {
            fail(.noSession("no session is open on this connection; open one before preloading"), .preload, requestID: requestID,
                 to: session, channel: channel, now: now, &out)
            return out
        }
        touch(session, now: now)
        switch grant {
        case .failure(let error):
            fail(error, .preload, requestID: requestID, to: session, channel: channel, now: now, &out)
        case .success(let grant):
            var preloads = sessions[session]!.preloads.filter { $0.until > now && !($0.channel == channel && $0.uid == uid) }
            preloads.append(ClientSession.Preload(channel: channel, uid: uid, token: token, grant: grant, until: now + Self.preloadKept))
            if preloads.count > Self.maxPreloadsPerSession { preloads.removeFirst(preloads.count - Self.maxPreloadsPerSession) }
            sessions[session]!.preloads = preloads
            reply(.preloaded(channel: channel, kept: Self.preloadKept), .preload, requestID: requestID, to: session, &out)
        }
        return out
    }

    /// The grant preloaded for this join (the same channel, uid and token, not expired), taken
    /// out of the session's preloads.
    mutating func takePreloadedGrant(_ session: SessionID, channel: String, uid: UInt32, token: String, now: Duration) -> ChannelGrant? {
        guard let index = sessions[session]?.preloads.firstIndex(where: {
            $0.channel == channel && $0.uid == uid && $0.token == token && $0.until > now
        }) else { return nil }
        statistics.preloadedJoins += 1
        return sessions[session]!.preloads.remove(at: index).grant
    }
}
