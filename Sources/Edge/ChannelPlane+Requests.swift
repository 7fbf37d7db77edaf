import ShowroomWire

// One entry point for every decoded request, so the shell's receive loop stays a few lines.

extension ChannelPlane {
    /// Handles a decoded client request by calling the matching entry point. Join and renew
    /// carry a token: `verifyToken` (the shell's AccessToken2 verifier, with the app certificate
    /// and the wall clock) turns it into a grant or a refusal, which becomes the failed reply.
    ///
    /// - Parameters:
    ///   - request: The request, from ``EdgeCodec/request(from:)``.
    ///   - session: The client connection.
    ///   - requestID: The envelope's request id (0: one-way).
    ///   - now: The current clock value.
    ///   - verifyToken: Verifies `token` for `channel` and `uid` (0: any), returning the grant.
    /// - Returns: The directives.
    public mutating func handle(
        _ request: EdgeRequest, from session: SessionID, requestID: UInt64, now: Duration,
        verifyToken: (_ token: String, _ channel: String, _ uid: UInt32) -> Result<ChannelGrant, ShowroomError>
    ) -> [EdgeDirective] {
        switch request {
        case .openSession(let clientID, let sdkVersion):
            return openSession(session, requestID: requestID, clientID: clientID, sdkVersion: sdkVersion, now: now)
        case .closeSession:
            return closeSession(session, requestID: requestID, now: now)
        case .heartbeat(let clientTime):
            return heartbeat(session, requestID: requestID, clientTime: clientTime, now: now)
        case .join(let channel, let uid, let token, let role, let options):
            guard sessions[session] != nil else {
                return join(session, requestID: requestID, channel: channel, uid: uid, role: role, options: options,
                            grant: ChannelGrant(privileges: [:]), now: now)
            }
            if let grant = takePreloadedGrant(session, channel: channel, uid: uid, token: token, now: now) {
                return join(session, requestID: requestID, channel: channel, uid: uid, role: role, options: options, grant: grant, now: now)
            }
            switch verifyToken(token, channel, uid) {
            case .success(let grant):
                return join(session, requestID: requestID, channel: channel, uid: uid, role: role, options: options, grant: grant, now: now)
            case .failure(let error):
                touch(session, now: now)
                var out: [EdgeDirective] = []
                fail(error, .join, requestID: requestID, to: session, channel: channel, now: now, &out)
                return out
            }
        case .preload(let channel, let uid, let token):
            guard sessions[session] != nil else {
                return preload(session, requestID: requestID, channel: channel, uid: uid, token: token, grant: .failure(.noSession("")), now: now)
            }
            return preload(session, requestID: requestID, channel: channel, uid: uid, token: token,
                           grant: verifyToken(token, channel, uid), now: now)
        case .leave(let channel):
            return leave(session, requestID: requestID, channel: channel, now: now)
        case .updateOptions(let channel, let update):
            return updateOptions(session, requestID: requestID, channel: channel, update: update, now: now)
        case .setRole(let channel, let role):
            return setRole(session, requestID: requestID, channel: channel, role: role, now: now)
        case .renewToken(let channel, let token):
            let uid = channels[channel]?.connections[session]?.uid ?? 0
            guard uid != 0 else {
                // Not joined (or no session): the entry point gives the precise refusal.
                return renewToken(session, requestID: requestID, channel: channel, grant: ChannelGrant(privileges: [:]), now: now)
            }
            switch verifyToken(token, channel, uid) {
            case .success(let grant):
                return renewToken(session, requestID: requestID, channel: channel, grant: grant, now: now)
            case .failure(let error):
                touch(session, now: now)
                var out: [EdgeDirective] = []
                fail(error, .renewToken, requestID: requestID, to: session, channel: channel, now: now, &out)
                return out
            }
        case .subscribe(let track):
            return subscribe(session, requestID: requestID, track: track, now: now)
        case .unsubscribe(let track):
            return unsubscribe(session, requestID: requestID, track: track, now: now)
        case .muteRemote(let track, let muted):
            return muteRemote(session, requestID: requestID, track: track, muted: muted, now: now)
        case .enableVolumeIndication(let config):
            return enableVolumeIndication(session, requestID: requestID, config: config, now: now)
        case .sendStreamMessage(let channel, let streamID, let data):
            return sendStreamMessage(session, requestID: requestID, channel: channel, streamID: streamID, data: data, now: now)
        }
    }
}
