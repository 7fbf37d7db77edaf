import Calls
import Membership
import Metrics
import NodeRuntime
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

extension CallSignalShell {
    // MARK: - Dialling (at the caller's owner)

    /// Reserves the caller, asks the callee's owner to ring, answers with the call.
    func dial(_ body: SignalDialRequest, caller: UInt32, _ respond: Node.Responder) {
        if let current = callOf[caller] {
            return respond(.failure(ShowroomError(.callerInCall, "uid \(caller) is in call \(current.callID); hang it up first")))
        }
        guard body.callee != 0, body.callee != caller else {
            return respond(.failure(.invalidArgument("call another user: uid \(body.callee) cannot be called by uid \(caller)")))
        }
        if !body.liveRoomID.isEmpty {
            do { try Names.validateRoomID(body.liveRoomID, field: "live_room_id") } catch { return respond(.failure(error)) }
        }
        guard dials.admit(caller, nowMs: nowMs) else {
            let wait = max(0, (dials.nextAllowedMs(caller, nowMs: nowMs) ?? nowMs) - nowMs)
            return respond(.failure(ShowroomError(.callRateLimited,
                "uid \(caller) started \(dials.limit) calls within \(dials.windowMs / 1000) s; call again in \(wait) ms")))
        }
        let callID = "\(body.callee)-\(randomHex(12))"
        let callOwner = owner(of: body.callee)
        callOf[caller] = UserRecord.InCall(callID: callID, owner: callOwner)
        touch(caller)
        var ring = SignalRingRequest()
        ring.callID = callID
        ring.channel = Names.callChannel(callee: body.callee, random: randomHex(16))
        ring.caller = caller
        ring.callee = body.callee
        ring.type = body.type
        ring.extension = body.extension
        ring.timeoutMs = body.timeoutMs
        ring.firstFrameWaitingDisabled = body.firstFrameWaitingDisabled
        ring.liveRoomID = body.liveRoomID
        atCallOwner(callOwner, .callRing, ring, local: { [self] () throws(ShowroomError) in try self.ring(ring) }) { [self] result in
            switch result {
            case .success(let answer):
                if answer.call.endReason == Call.End.Reason.busy.rawValue, callOf[caller]?.callID == callID {
                    callOf[caller] = nil
                    touch(caller)
                }
                respond(.success(SignalDialResponse.with { $0.call = answer.call }))
            case .failure(let error):
                if callOf[caller]?.callID == callID {
                    callOf[caller] = nil
                    touch(caller)
                }
                respond(.failure(error))
            }
        }
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

    // MARK: - At the call's owner

    /// `CALL_RING`: rings the callee (owned here), or ends the call busy.
    func ring(_ body: SignalRingRequest) throws(ShowroomError) -> SignalRingResponse {
        guard body.caller != 0, body.callee != 0, Names.callee(ofCallChannel: body.channel) == body.callee,
              body.callID.hasPrefix("\(body.callee)-"),
              body.callID.utf8.count <= 64, body.channel.utf8.count <= 64 else {
            throw .invalidArgument("a ring names its caller, callee, call id and channel")
        }
        if !body.liveRoomID.isEmpty { try Names.validateRoomID(body.liveRoomID, field: "live_room_id") }
        let elsewhere = callOf[body.callee].map(\.callID)
        let made: (call: Call, directives: [CallDirective])
        do {
            made = try book.call(
                id: body.callID, channel: body.channel, from: body.caller, to: body.callee,
                type: CallType(body.type), extensionInfo: body.extension,
                timeoutMs: body.timeoutMs == 0 ? nil : Int64(body.timeoutMs), waitsForFirstFrame: !body.firstFrameWaitingDisabled,
                callerLiveRoom: body.liveRoomID, calleeOnline: presence.isOnline(body.callee), calleeInCallElsewhere: elsewhere, nowMs: nowMs)
        } catch {
            throw ShowroomError(error)
        }
        CallMetrics.rung.increment()
        process(made.directives)
        var answer = SignalRingResponse()
        answer.call = info(made.call, for: body.caller)
        return answer
    }

    /// A party's request at its owner: checked there, decided by the call's owner.
    func act(_ kind: WireMessageKind, _ body: SignalCallActionRequest, uid: UInt32, _ respond: Node.Responder) {
        guard let dash = body.callID.firstIndex(of: "-"), let callee = UInt32(body.callID[..<dash]), body.callID.utf8.count <= 64 else {
            return respond(.failure(ShowroomError(.unknownCall, "'\(body.callID.prefix(64))' is not a call id")))
        }
        if !body.liveRoomID.isEmpty {
            do { try Names.validateRoomID(body.liveRoomID, field: "live_room_id") } catch { return respond(.failure(error)) }
        }
        var action = SignalPartyAction()
        action.kind = UInt32(kind.rawValue)
        action.uid = uid
        action.callID = body.callID
        action.reason = body.reason
        action.liveRoomID = body.liveRoomID
        atCallOwner(owner(of: callee), .callPartyAction, action,
                    local: { [self] () throws(ShowroomError) in try partyAction(action) }) { result in
            switch result {
            case .success(let answer): respond(.success(answer))
            case .failure(let error): respond(.failure(error))
            }
        }
    }

    /// `CALL_PARTY_ACTION`: applies a party's request (or its signaling coming and going) to the book.
    func partyAction(_ action: SignalPartyAction) throws(ShowroomError) -> SignalCallActionResponse {
        let now = nowMs
        let id = action.callID
        adoptOnDemand(id)
        touch(callID: id)
        let directives: [CallDirective]
        do {
            switch WireMessageKind(rawValue: Int(action.kind)) {
            case .callAccept:
                if !action.liveRoomID.isEmpty { try Names.validateRoomID(action.liveRoomID, field: "live_room_id") }
                directives = try book.accept(id, by: action.uid, liveRoom: action.liveRoomID, nowMs: now)
            case .callCancel: directives = try book.cancel(id, by: action.uid, nowMs: now)
            case .callReject: directives = try book.reject(id, by: action.uid, reason: action.reason, nowMs: now)
            case .callHangup: directives = try book.hangup(id, by: action.uid, reason: action.reason, nowMs: now)
            case .callFirstFrame: directives = try book.firstFrameDecoded(id, by: action.uid, nowMs: now)
            case .callToken:
                // A fresh token (in the answer's call info) for a party of a call that goes on.
                guard let call = book.calls[id] else { throw CallRefusal(.unknownCall, "no call \(id)") }
                guard call.isParty(action.uid) else { throw CallRefusal(.notYourCall, "uid \(action.uid) is not a party of call \(id)") }
                guard call.isActive else { throw CallRefusal(.callEnded, "call \(id) is over; its channel is sealed") }
                directives = []
            case .callLogin: directives = book.partyJoined(id, uid: action.uid, nowMs: now)
            case .callLogout: directives = book.partyLeft(id, uid: action.uid, nowMs: now)
            default: throw ShowroomError.invalidArgument("party action kind \(action.kind) is not a call request")
            }
        } catch let refusal as CallRefusal {
            throw ShowroomError(refusal)
        } catch let error as ShowroomError {
            throw error
        } catch {
            throw .internal("\(error)")
        }
        process(directives)
        var answer = SignalCallActionResponse()
        if let call = book.calls[id] { answer.call = info(call, for: action.uid) }
        return answer
    }

    /// `CALL_CHANNEL_ACTIVITY`: parties joining and leaving the channels of the calls held here,
    /// as the edges saw them: the other side hears `remoteJoined` / `remoteLeft`, and a leave starts
    /// the grace after which the call ends.
    func channelActivities(_ body: SignalChannelActivities) {
        let now = nowMs
        for activity in body.activities.prefix(1_000) {
            guard let id = book.callOnChannel[activity.channel] else { continue }
            touch(callID: id)
            process(activity.joined ? book.partyJoined(id, uid: activity.uid, nowMs: now)
                                    : book.partyLeft(id, uid: activity.uid, nowMs: now))
        }
    }

    /// A request for a call this node does not hold, whose record it holds as the replica of a
    /// node that is no longer alive: the call is taken over now (this node's view of the members
    /// may not have caught up with the requester's).
    func adoptOnDemand(_ id: String) {
        guard book.calls[id] == nil, let callee = Self.callee(ofCallID: id),
              let entry = records.entries[UserRecord.key(of: callee)], let record = entry.value,
              record.ownedCall?.id == id,
              !node.membersOnLoop.contains(where: { $0.nodeID == entry.writer && $0.state == .alive }) || entry.writer == selfID
        else { return }
        adopt(record)
    }

    /// Sends a party's signaling change to its call's owner (no answer awaited).
    func sendPartyAction(_ kind: WireMessageKind, uid: UInt32, callID: String) {
        guard let dash = callID.firstIndex(of: "-"), let callee = UInt32(callID[..<dash]) else { return }
        var action = SignalPartyAction()
        action.kind = UInt32(kind.rawValue)
        action.uid = uid
        action.callID = callID
        atCallOwner(owner(of: callee), .callPartyAction, action,
                    local: { [self] () throws(ShowroomError) in try partyAction(action) }) { [logger] result in
            if case .failure(let error) = result {
                logger.warning("a party's signaling change did not reach its call", metadata: ["call": "\(callID)", "error": "\(error)"])
            }
        }
    }

    // MARK: - Directives

    /// Carries out what the book decided: notices to each party's owner, kicks, events.
    func process(_ directives: [CallDirective]) {
        var remote: [String: [SignalNotice]] = [:]
        var events: [SignalCallNotification] = []
        for directive in directives {
            switch directive {
            case .notify(let notice):
                touch(notice.call.callee)
                let message = signalNotice(notice)
                let owner = owner(of: notice.to)
                if owner == selfID { queue(message) } else { remote[owner, default: []].append(message) }
            case .seal(let channel, let parties):
                seal(channel, parties: parties)
            case .started(let call):
                events.append(notification(201, call))
            case .interaction(let roomID, let owner, let callID, let inCall):
                showInRoom(roomID, owner: owner, callID: callID, inCall: inCall)
            case .connected(let call):
                events.append(notification(202, call))
                CallMetrics.connected.increment()
                CallMetrics.setup.recordMilliseconds((call.connectedAtMs ?? call.startedAtMs) - call.startedAtMs)
                logger.info("call connected", metadata: [
                    "call": "\(call.id)", "setup_ms": "\((call.connectedAtMs ?? call.startedAtMs) - call.startedAtMs)",
                ])
            case .ended(let call):
                events.append(notification(203, call))
                Counter(label: "callsignal.calls_ended", dimensions: [("reason", call.end?.reason.rawValue ?? "")]).increment()
                logger.info("call ended", metadata: [
                    "call": "\(call.id)", "reason": "\(call.end?.reason.rawValue ?? "")", "duration_ms": "\(call.connectedDurationMs)",
                ])
            }
        }
        report(events)
        for (owner, notices) in remote.sorted(by: { $0.key < $1.key }) {
            guard let endpoint = node.clusterEndpoint(of: owner) else { continue }
            var deliver = SignalDeliverRequest()
            deliver.notices = notices
            node.send(.callDeliver, body: deliver, to: endpoint, timeout: Self.peerTimeout) { [logger] result in
                if case .failure(let error) = result {
                    logger.warning("notices not delivered", metadata: ["node": "\(owner)", "error": "\(error)"])
                }
            }
        }
    }

    /// A call event for business servers: `type` 201 started, 202 connected, 203 ended.
    func notification(_ type: UInt32, _ call: Call) -> SignalCallNotification {
        var event = SignalCallNotification()
        event.noticeID = "\(call.id)-\(type)"
        event.eventType = type
        event.notifyMs = nowMs
        event.callID = call.id
        event.caller = call.caller
        event.callee = call.callee
        event.type = SignalCallType(call.type)
        event.channel = call.channel
        event.startedAtMs = call.startedAtMs
        event.connectedAtMs = call.connectedAtMs ?? 0
        event.endedAtMs = call.endedAtMs ?? 0
        event.durationMs = call.connectedDurationMs
        event.endReason = call.end?.reason.rawValue ?? ""
        event.endedBy = call.end?.by ?? 0
        event.nodeID = selfID
        return event
    }

    /// Sends call events to the coordinator owning each call's channel, which publishes them on its
    /// events endpoint and posts them to the webhooks.
    func report(_ events: [SignalCallNotification]) {
        for (channel, events) in Dictionary(grouping: events, by: \.channel).sorted(by: { $0.key < $1.key }) {
            let report = SignalCallEventReport.with { $0.events = events }
            deliveries.deliver(.callEvent, key: channel, what: "call events of \(channel)") { report }
        }
    }

    /// Tells a live room's owner coordinator that its owner entered (or left) a call, so the room
    /// and its audience show it.
    func showInRoom(_ roomID: String, owner: UInt32, callID: String, inCall: Bool) {
        var request = RoomSetInteractionRequest()
        request.roomID = roomID
        request.ownerUid = owner
        request.kind = inCall ? .call : .idle
        request.id = callID
        deliveries.deliver(.roomInteraction, key: roomID, what: "room \(roomID)'s call status") { request }
    }

    /// Seals an ended call's channel: both parties are banned from it for as long as its tokens
    /// last (nobody else holds a token that opens it), through a coordinator's signed kick, so
    /// every edge closes their connections now and refuses them later, edges that start later
    /// included.
    func seal(_ channel: String, parties: [UInt32]) {
        guard let certificate = configuration.appCertificate else { return }
        // The parties' last tokens may have been minted just before the end.
        let seconds = callTokenSeconds + 60
        for party in parties {
            deliveries.deliver(.kick, key: channel, what: "the seal of \(channel) for uid \(party)") { [self] in
                var kick = RoomKickRequest()
                kick.channel = channel
                kick.uid = party
                kick.banSeconds = seconds
                // Signed when sent: a retry carries a fresh signature.
                kick.admin = AdminSigner.sign(action: "kick", target: channel, uid: party, issuedAtMs: nowMs,
                                              appCertificate: certificate)
                return kick
            }
        }
    }

    // MARK: - Wire forms

    /// A notice as it travels, with the call's token for the party while the call is on.
    func signalNotice(_ notice: CallNotice) -> SignalNotice {
        var message = SignalNotice()
        message.callID = notice.callID
        message.sequence = notice.sequence
        message.to = notice.to
        message.state = UInt32(notice.state.rawValue)
        message.reason = UInt32(notice.reason.rawValue)
        message.event = UInt32(notice.event.rawValue)
        message.call = info(notice.call, for: notice.to)
        return message
    }

    /// The call as party `uid` sees it: its channel and token while the call is on.
    func info(_ call: Call, for uid: UInt32) -> SignalCallInfo {
        var info = SignalCallInfo()
        info.callID = call.id
        info.caller = call.caller
        info.callee = call.callee
        info.type = SignalCallType(call.type)
        info.extension = call.extensionInfo
        info.startedAtMs = call.startedAtMs
        info.acceptedAtMs = call.acceptedAtMs ?? 0
        info.connectedAtMs = call.connectedAtMs ?? 0
        info.endedAtMs = call.endedAtMs ?? 0
        info.nodeID = selfID
        if let end = call.end {
            info.endReason = end.reason.rawValue
            info.endedBy = end.by ?? 0
            info.endMessage = end.message
        }
        if call.isActive, call.isParty(uid) {
            info.channel = call.channel
            info.token = callToken(call, uid: uid)
        }
        return info
    }

    /// A token for `uid` in the call's channel only, for ``callTokenSeconds``: the one minted for
    /// it earlier while that is under a quarter of its life old.
    func callToken(_ call: Call, uid: UInt32) -> String {
        let now = nowMs
        if let minted = mintedTokens[call.id]?[uid], now - minted.issuedMs < Int64(callTokenSeconds) * 250 {
            return minted.token
        }
        guard let appID = configuration.appID, let certificate = configuration.appCertificate,
              let token = try? RTCTokenBuilder.buildToken(appID: appID, appCertificate: certificate, channelName: call.channel,
                                                         uid: uid, role: .publisher, tokenExpire: callTokenSeconds,
                                                         issueTs: UInt32(clamping: now / 1000))
        else { return "" }
        mintedTokens[call.id, default: [:]][uid] = MintedToken(token: token, issuedMs: now)
        return token
    }

    /// Forgets the tokens of calls that are over or gone (a call this node no longer holds).
    func dropEndedCallTokens() {
        mintedTokens = mintedTokens.filter { book.calls[$0.key]?.isActive == true }
    }
}

/// The call-signal node's counters and the set-up time histogram (Prometheus on the admin port).
enum CallMetrics {
    /// Calls rung (busy ones included).
    static let rung = Counter(label: "callsignal.calls_rung")
    /// Calls that connected.
    static let connected = Counter(label: "callsignal.calls_connected")
    /// From the call to connected on both sides.
    static let setup = Metrics.Timer(label: "callsignal.call_setup")

    /// The sizes of what the node keeps, so that a long run shows whether anything grows with
    /// every user or call ever seen.
    static let sessions = Gauge(label: "callsignal.sessions")
    static let calls = Gauge(label: "callsignal.calls")
    static let usersInCalls = Gauge(label: "callsignal.users_in_calls")
    static let userRecords = Gauge(label: "callsignal.user_records")
    static let tombstones = Gauge(label: "callsignal.user_record_tombstones")
    static let mailboxes = Gauge(label: "callsignal.mailboxes")
    static let callsWithTokens = Gauge(label: "callsignal.calls_with_tokens")
    static let dialLimitedUsers = Gauge(label: "callsignal.dial_limited_users")

    /// Refreshes the size gauges.
    static func recordSizes(of shell: CallSignalShell) {
        sessions.record(shell.presence.sessions.count)
        calls.record(shell.book.calls.count)
        usersInCalls.record(shell.callOf.count)
        userRecords.record(shell.records.entries.count)
        tombstones.record(shell.tombstones.count)
        mailboxes.record(shell.mailboxes.count)
        callsWithTokens.record(shell.mintedTokens.count)
        dialLimitedUsers.record(shell.dials.trackedUsers)
    }
}
