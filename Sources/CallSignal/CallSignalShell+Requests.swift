import Calls
import NodeRuntime
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

extension CallSignalShell {
    // MARK: - Sessions, at the user's owner

    func login(_ body: SignalLoginRequest, _ respond: Node.Responder) {
        do throws(ShowroomError) {
            guard body.uid != 0 else { throw ShowroomError.invalidArgument("uid 0 cannot log in") }
            let expiresAt = try verifyLogin(body.token, uid: body.uid)
            let (sessionID, directives) = try decide { try $0.login(uid: body.uid, tokenExpiresAtMs: expiresAt, nowMs: nowMs) }
            perform(directives)
            logger.info("logged in", metadata: ["uid": "\(body.uid)"])
            respond(.success(SignalLoginResponse.with {
                $0.sessionID = sessionID
                $0.heartbeatTimeoutMs = UInt32(clamping: presence.heartbeatTimeoutMs)
                $0.tokenExpiresAtMs = expiresAt
                $0.nodeID = selfID
            }))
        } catch {
            respond(.failure(error))
        }
    }

    /// The login token's expiry (ms), or the refusal.
    func verifyLogin(_ token: String, uid: UInt32) throws(ShowroomError) -> Int64 {
        guard let appID = configuration.appID, let certificate = configuration.appCertificate else {
            throw .unavailable("call-signal node \(selfID) has no app id and certificate configured, so it cannot check login tokens; set appID and appCertificate")
        }
        do {
            let expires = try TokenVerifier(appID: appID, appCertificate: certificate)
                .verifyLogin(token, userID: String(uid), now: UInt32(clamping: nowMs / 1000))
            return Int64(expires) * 1000
        } catch {
            throw error.showroomError
        }
    }

    /// Serves a request of a session at its user's owner.
    func serveSession(_ request: WireEnvelope, _ respond: Node.Responder) {
        do throws(ShowroomError) {
            let now = nowMs
            switch request.kind {
            case .callLogout:
                let body = try request.decodeBody(SignalLogoutRequest.self)
                perform(try decide { try $0.logout(body.sessionID, nowMs: now) })
                respond(.success(SignalLogoutResponse()))
            case .callRenewToken:
                let body = try request.decodeBody(SignalRenewTokenRequest.self)
                let session = try decide { try $0.session(body.sessionID, nowMs: now) }
                let expiresAt = try verifyLogin(body.token, uid: session.uid)
                try decide { try $0.renew(session.id, tokenExpiresAtMs: expiresAt, nowMs: now) }
                respond(.success(SignalRenewTokenResponse.with { $0.tokenExpiresAtMs = expiresAt }))
            case .callPoll:
                let body = try request.decodeBody(SignalPollRequest.self)
                let poll = nextPoll
                nextPoll += 1
                let directives = try decide {
                    try $0.poll(body.sessionID, poll: poll, waitMs: Int64(min(body.maxWaitMs, Self.maxPollMs)), nowMs: now)
                }
                polls[poll] = respond
                perform(directives)
            case .callDial:
                let body = try request.decodeBody(SignalDialRequest.self)
                let session = try decide { try $0.session(body.sessionID, nowMs: now) }
                try dial(body, caller: session.uid, respond)
            default:
                let body = try request.decodeBody(SignalCallActionRequest.self)
                let session = try decide { try $0.session(body.sessionID, nowMs: now) }
                try act(request.kind, body, uid: session.uid, respond)
            }
        } catch {
            respond(.failure(error))
        }
    }

    /// Online, in a call or offline, for each uid asked (each answered by its owner).
    func presenceQuery(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ () throws(ShowroomError) -> SignalPresenceRequest in
            let body = try request.decodeBody(SignalPresenceRequest.self)
            guard body.uids.count <= Self.maxPresenceUIDs else {
                throw .invalidArgument("ask for at most \(Self.maxPresenceUIDs) uids at once, not \(body.uids.count)")
            }
            return body
        }) else { return }
        var byOwner: [String: [UInt32]] = [:]
        for uid in body.uids { byOwner[request.forwarded ? selfID : machine.owner(of: uid), default: []].append(uid) }
        var entries: [UInt32: SignalPresenceState] = [:]
        for uid in byOwner.removeValue(forKey: selfID) ?? [] {
            let state = machine.presenceState(of: uid)
            entries[uid] = state.inCall ? .inCall : state.online ? .online : .offline
        }
        let asks = byOwner.sorted { $0.key < $1.key }.map { owner, uids -> (member: String, request: WireEnvelope) in
            var ask = request
            ask.body = (try? SignalPresenceRequest.with { $0.uids = uids }.serializedBytes()) ?? request.body
            return (owner, ask)
        }
        node.forwardAll(asks, timeout: Self.peerTimeout) { result in
            do throws(ShowroomError) {
                for answer in try result.get() {
                    for entry in try answer.decodeBody(SignalPresenceResponse.self).entries { entries[entry.uid] = entry.state }
                }
                var answer = SignalPresenceResponse()
                answer.entries = body.uids.map { uid in SignalPresenceEntry.with { $0.uid = uid; $0.state = entries[uid] ?? .offline } }
                respond(.success(answer))
            } catch {
                respond(.failure(.unavailable("presence needs every call-signal node: \(error.message); retry in a moment")))
            }
        }
    }

    // MARK: - Calls

    /// Reserves the caller, asks the callee's owner to ring, answers with the call.
    func dial(_ body: SignalDialRequest, caller: UInt32, _ respond: Node.Responder) throws(ShowroomError) {
        if !body.liveRoomID.isEmpty { try Names.validateRoomID(body.liveRoomID, field: "live_room_id") }
        let plan = try decide { try $0.dial(body.callee, caller: caller, nowMs: nowMs) }
        let ring = SignalRingRequest(body, caller: caller, callID: plan.callID,
                                     channel: Names.callChannel(callee: body.callee, random: plan.channelSecret))
        atCallOwner(plan.owner, .callRing, ring, local: { [self] () throws(ShowroomError) in try self.ring(ring) }) { [self] result in
            switch result {
            case .success(let answer):
                let busy = answer.call.endReason == Call.End.Reason.busy.rawValue
                machine.ringAnswered(caller: caller, callID: plan.callID, busy ? .busy : .rung)
                respond(.success(SignalDialResponse.with { $0.call = answer.call }))
            case .failure(let error):
                // A refusal means nothing rings; anything else (a lost answer, a timeout) may hide a
                // call that rings.
                let refused = Self.ringRefusals.contains(error.code)
                perform(machine.ringAnswered(caller: caller, callID: plan.callID, refused ? .failed : .noAnswer))
                respond(.failure(error))
            }
        }
    }

    /// The codes a callee's owner refuses a ring with, having rung nothing.
    static let ringRefusals: Set<ShowroomError.Code> = [
        .invalidArgument, .notLoggedIn, .callRateLimited, .callerInCall, .calleeOffline, .unknownCall, .notYourCall,
        .callStateMismatch, .callEnded,
    ]

    /// `CALL_RING`: rings the callee (owned here), or ends the call busy.
    func ring(_ body: SignalRingRequest) throws(ShowroomError) -> SignalRingResponse {
        let ring = try Machine.Ring(body)
        let made = try decide { try $0.ring(ring, nowMs: nowMs) }
        CallMetrics.rung.increment()
        perform(made.directives)
        return SignalRingResponse.with { $0.call = info(made.call, for: body.caller) }
    }

    /// A party's request at its owner: checked there, decided by the call's owner.
    func act(_ kind: WireMessageKind, _ body: SignalCallActionRequest, uid: UInt32, _ respond: Node.Responder) throws(ShowroomError) {
        guard let callee = Machine.callee(ofCallID: body.callID) else {
            throw ShowroomError(.unknownCall, "'\(body.callID.prefix(64))' is not a call id")
        }
        if !body.liveRoomID.isEmpty { try Names.validateRoomID(body.liveRoomID, field: "live_room_id") }
        let action = SignalPartyAction(kind, uid: uid, callID: body.callID, reason: body.reason, liveRoomID: body.liveRoomID)
        askCallOwner(machine.owner(of: callee), action) { result in
            switch result {
            case .success(let answer): respond(.success(answer))
            case .failure(let error): respond(.failure(error))
            }
        }
    }

    /// `CALL_PARTY_ACTION`: a party's request (or its signaling coming and going) for a call held here.
    func partyAction(_ action: SignalPartyAction) throws(ShowroomError) -> SignalCallActionResponse {
        let request = try Machine.PartyRequest(action)
        let acted = try decide { try $0.act(request, by: action.uid, callID: action.callID, nowMs: nowMs) }
        perform(acted.directives)
        var answer = SignalCallActionResponse()
        if let call = acted.call, !action.checkOnly { answer.call = info(call, for: action.uid) }
        return answer
    }

    /// `CALL_PARTY_CHECK`: how this node notes a party of a call another node owns.
    func partyCheck(_ body: SignalPartyCheck) throws(ShowroomError) -> SignalPartyCheckResponse {
        SignalPartyCheckResponse(try decide { try $0.partyNote(uid: body.uid, callID: body.callID) })
    }

    /// Runs `action` here when this node owns its call, else sends it to `owner`; `done` gets the answer.
    func askCallOwner(_ owner: String, _ action: SignalPartyAction,
                      done: @escaping (Result<SignalCallActionResponse, ShowroomError>) -> Void) {
        atCallOwner(owner, .callPartyAction, action, local: { [self] () throws(ShowroomError) in try partyAction(action) }, done: done)
    }

    /// Runs `local` when this node owns the call, else sends `body` as `kind` to `owner`;
    /// `done` gets the answer.
    func atCallOwner<Answer: SwiftProtobuf.Message>(
        _ owner: String, _ kind: WireMessageKind, _ body: some SwiftProtobuf.Message,
        local: () throws(ShowroomError) -> Answer, done: @escaping (Result<Answer, ShowroomError>) -> Void
    ) {
        guard owner != selfID else { return done(Result(local)) }
        guard let endpoint = node.clusterEndpoint(of: owner) else {
            return done(.failure(.unavailable("call-signal node \(owner) is not reachable; retry in a moment")))
        }
        node.send(kind, body: body, to: endpoint, timeout: Self.peerTimeout) { result in
            done(Result { () throws(ShowroomError) -> Answer in
                let answer = try result.get()
                if let failure = answer.failure { throw failure }
                return try answer.decodeBody(Answer.self)
            })
        }
    }
}
