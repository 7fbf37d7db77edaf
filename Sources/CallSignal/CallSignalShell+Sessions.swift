import Calls
import NodeRuntime
import ShowroomAuth
import ShowroomWire

extension CallSignalShell {
    // MARK: - Login, logout, renewal

    func login(_ body: SignalLoginRequest, _ respond: Node.Responder) {
        guard let expiresAt = respond.answering({ () throws(ShowroomError) -> Int64 in
            guard body.uid != 0 else { throw ShowroomError.invalidArgument("uid 0 cannot log in") }
            return try verifyLogin(body.token, uid: body.uid)
        }) else { return }
        let sessionID = "\(body.uid)-\(randomHex(16))"
        let now = nowMs
        handle(presence.login(uid: body.uid, session: sessionID, tokenExpiresAtMs: expiresAt, nowMs: now))
        touch(body.uid)
        mailboxes[sessionID] = Mailbox()
        // Back within a call's grace: the call goes on.
        if let current = callOf[body.uid] { sendPartyAction(.callLogin, uid: body.uid, callID: current.callID) }
        var answer = SignalLoginResponse()
        answer.sessionID = sessionID
        answer.heartbeatTimeoutMs = UInt32(clamping: presence.heartbeatTimeoutMs)
        answer.tokenExpiresAtMs = expiresAt
        answer.nodeID = selfID
        logger.info("logged in", metadata: ["uid": "\(body.uid)"])
        respond(.success(answer))
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
            switch request.kind {
            case .callLogout:
                let body = try request.decodeBody(SignalLogoutRequest.self)
                _ = try session(body.sessionID)
                handle(presence.logout(body.sessionID))
                respond(.success(SignalLogoutResponse()))
            case .callRenewToken:
                let body = try request.decodeBody(SignalRenewTokenRequest.self)
                let session = try session(body.sessionID)
                let expiresAt = try verifyLogin(body.token, uid: session.uid)
                presence.renew(session.id, tokenExpiresAtMs: expiresAt, nowMs: nowMs)
                touch(session.uid)
                mailboxes[session.id]?.tokenWillExpire = false
                respond(.success(SignalRenewTokenResponse.with { $0.tokenExpiresAtMs = expiresAt }))
            case .callPoll:
                let body = try request.decodeBody(SignalPollRequest.self)
                let session = try session(body.sessionID)
                poll(session.id, waitMs: min(body.maxWaitMs, Self.maxPollMs), respond)
            case .callDial:
                let body = try request.decodeBody(SignalDialRequest.self)
                let session = try session(body.sessionID)
                dial(body, caller: session.uid, respond)
            default:
                let body = try request.decodeBody(SignalCallActionRequest.self)
                let session = try session(body.sessionID)
                act(request.kind, body, uid: session.uid, respond)
            }
        } catch {
            respond(.failure(error))
        }
    }

    /// The session `id`, heard from now, or the refusal.
    func session(_ id: String) throws(ShowroomError) -> Presence.Session {
        guard let session = presence.session(id, nowMs: nowMs) else {
            throw ShowroomError(.notLoggedIn,
                                "no session \(id.prefix(12))…: never logged in, logged out, timed out or replaced by a newer login; log in again")
        }
        return session
    }

    // MARK: - Notices

    /// Answers at once when notices wait (or the token will expire), else parks the poll until some
    /// arrive or `waitMs` passes. A newer poll answers the parked one, empty.
    func poll(_ sessionID: String, waitMs: UInt32, _ respond: Node.Responder) {
        // The first poll of a session taken over from another node is answered at once: the
        // client learns where its session is now.
        let firstHere = mailboxes[sessionID] == nil
        var mailbox = mailboxes[sessionID] ?? Mailbox()
        if let parked = mailbox.poll { parked.respond(.success(SignalPollResponse.with { $0.nodeID = selfID })) }
        mailbox.poll = nil
        if mailbox.notices.isEmpty, !mailbox.tokenWillExpire, waitMs > 0, !firstHere {
            mailbox.poll = (respond, nowMs + Int64(waitMs))
            mailboxes[sessionID] = mailbox
            return
        }
        mailboxes[sessionID] = mailbox
        respond(.success(takeNotices(of: sessionID)))
    }

    /// Answers the session's parked poll, if any, with what waits.
    func wake(_ sessionID: String) {
        guard let parked = mailboxes[sessionID]?.poll else { return }
        mailboxes[sessionID]?.poll = nil
        parked.respond(.success(takeNotices(of: sessionID)))
    }

    /// What waits for the session, taken out of its mailbox.
    private func takeNotices(of sessionID: String) -> SignalPollResponse {
        var answer = SignalPollResponse()
        answer.nodeID = selfID
        answer.notices = mailboxes[sessionID]?.notices ?? []
        answer.tokenWillExpire = mailboxes[sessionID]?.tokenWillExpire ?? false
        mailboxes[sessionID]?.notices = []
        mailboxes[sessionID]?.tokenWillExpire = false
        return answer
    }

    /// Queues a notice for the session of the user it is for (owned here), keeps what that user is
    /// in up to date, and wakes the session's poll.
    func queue(_ notice: SignalNotice) {
        touch(notice.to)
        switch notice.state {
        case UInt32(CallState.calling.rawValue), UInt32(CallState.connecting.rawValue), UInt32(CallState.connected.rawValue):
            callOf[notice.to] = UserRecord.InCall(callID: notice.callID, owner: notice.call.nodeID)
        default:
            if callOf[notice.to]?.callID == notice.callID { callOf[notice.to] = nil }
        }
        guard let sessionID = presence.sessionOf[notice.to] else { return }
        var mailbox = mailboxes[sessionID] ?? Mailbox()
        mailbox.notices.append(notice)
        if mailbox.notices.count > Self.mailboxLimit { mailbox.notices.removeFirst(mailbox.notices.count - Self.mailboxLimit) }
        mailboxes[sessionID] = mailbox
        wake(sessionID)
    }

    // MARK: - Presence

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
        for uid in body.uids { byOwner[request.forwarded ? selfID : owner(of: uid), default: []].append(uid) }
        var entries: [UInt32: SignalPresenceState] = [:]
        for uid in byOwner.removeValue(forKey: selfID) ?? [] {
            entries[uid] = callOf[uid] != nil ? .inCall : presence.isOnline(uid) ? .online : .offline
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

    // MARK: - The clock

    func tick() {
        let now = nowMs
        // A parked poll keeps its session alive; an expired one is answered empty.
        for (id, mailbox) in mailboxes {
            guard let parked = mailbox.poll else { continue }
            _ = presence.session(id, nowMs: now)
            if now >= parked.untilMs {
                mailboxes[id]?.poll = nil
                parked.respond(.success(SignalPollResponse.with { $0.nodeID = selfID }))
            }
        }
        handle(presence.tick(nowMs: now))
        process(book.tick(nowMs: now))
        dials.purge(nowMs: now)
        deliveries.retryDue()
        if now - lastVerifyMs >= 1_000 {
            lastVerifyMs = now
            verifyCallsOfLostNodes()
            dropOldTombstones()
            dropEndedCallTokens()
            CallMetrics.recordSizes(of: self)
        }
    }

    /// Carries out what the presence table decided.
    func handle(_ directives: [Presence.Directive]) {
        for directive in directives {
            switch directive {
            case .tokenWillExpire(let session):
                mailboxes[session.id]?.tokenWillExpire = true
                wake(session.id)
            case .ended(let session, let why):
                touch(session.uid)
                if let parked = mailboxes.removeValue(forKey: session.id)?.poll {
                    parked.respond(.failure(ShowroomError(.notLoggedIn, "the session ended (\(why.rawValue)); log in again")))
                }
                logger.info("session ended", metadata: ["uid": "\(session.uid)", "why": "\(why.rawValue)"])
                // Signaling lost in a call: the other side is told, and the grace starts.
                if why != .replaced, let current = callOf[session.uid] {
                    sendPartyAction(.callLogout, uid: session.uid, callID: current.callID)
                }
            }
        }
    }

    /// `bytes` random bytes as lowercase hex digits (session secrets, call ids, channel names).
    func randomHex(_ bytes: Int) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes * 2)
        for _ in 0..<bytes {
            let byte = Int(UInt8.random(in: 0...255, using: &random))
            text.append(digits[byte >> 4])
            text.append(digits[byte & 15])
        }
        return text
    }
}
