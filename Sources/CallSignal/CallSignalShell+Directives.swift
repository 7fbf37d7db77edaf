import Calls
import Metrics
import NodeRuntime
import ReplicatedOwnership
import ShowroomAuth
import ShowroomWire

extension CallSignalShell {
    /// Carries out what the machine decided.
    func perform(_ directives: [Machine.Directive]) {
        var remote: [SignalNotice] = []
        var events: [SignalCallNotification] = []
        for directive in directives {
            switch directive {
            case .answerPoll(let poll, let notices, let tokenWillExpire):
                polls.removeValue(forKey: poll)?(.success(SignalPollResponse.with {
                    $0.nodeID = selfID
                    $0.notices = notices
                    $0.tokenWillExpire = tokenWillExpire
                }))
            case .refusePoll(let poll, let why):
                polls.removeValue(forKey: poll)?(.failure(ShowroomError(.notLoggedIn, "the session ended (\(why.rawValue)); log in again")))
            case .sessionEnded(let session, let why):
                logger.info("session ended", metadata: ["uid": "\(session.uid)", "why": "\(why.rawValue)"])
            case .call(.notify(let notice)):
                let message = SignalNotice(notice, call: info(notice.call, for: notice.to))
                if machine.owner(of: notice.to) == selfID { deliver(message) } else { remote.append(message) }
            case .call(.seal(let channel, let parties)):
                seal(channel, parties: parties)
            case .call(.started(let call)):
                events.append(SignalCallNotification(201, call, nodeID: selfID, nowMs: nowMs))
            case .call(.interaction(let roomID, let owner, let callID, let inCall)):
                showInRoom(roomID, owner: owner, callID: callID, inCall: inCall)
            case .call(.connected(let call)):
                events.append(SignalCallNotification(202, call, nodeID: selfID, nowMs: nowMs))
                CallMetrics.connected.increment()
                CallMetrics.setup.recordMilliseconds((call.connectedAtMs ?? call.startedAtMs) - call.startedAtMs)
                logger.info("call connected", metadata: [
                    "call": "\(call.id)", "setup_ms": "\((call.connectedAtMs ?? call.startedAtMs) - call.startedAtMs)",
                ])
            case .call(.ended(let call)):
                events.append(SignalCallNotification(203, call, nodeID: selfID, nowMs: nowMs))
                Counter(label: "callsignal.calls_ended", dimensions: [("reason", call.end?.reason.rawValue ?? "")]).increment()
                logger.info("call ended", metadata: [
                    "call": "\(call.id)", "reason": "\(call.end?.reason.rawValue ?? "")", "duration_ms": "\(call.connectedDurationMs)",
                ])
            case .signal(let signaling, let uid, let callID, let owner):
                let action = SignalPartyAction(signaling == .returned ? .callLogin : .callLogout, uid: uid, callID: callID)
                askCallOwner(owner, action) { [logger] result in
                    if case .failure(let error) = result {
                        logger.warning("a party's signaling change did not reach its call", metadata: ["call": "\(callID)", "error": "\(error)"])
                    }
                }
            case .checkCall(let uid, let entry, let owner):
                var ask = SignalPartyAction(.callToken, uid: uid, callID: entry.callID)
                ask.checkOnly = true
                atCallOwner(owner, .callPartyAction, ask,
                            local: { () throws(ShowroomError) -> SignalCallActionResponse in SignalCallActionResponse() }) { [self] result in
                    let check: Machine.CallCheck = switch result {
                    case .success: .holds
                    case .failure(let error) where [.unknownCall, .callEnded, .notYourCall].contains(error.code): .lost
                    case .failure: .noAnswer
                    }
                    perform(machine.callChecked(uid: uid, callID: entry.callID, owner: owner, check))
                }
            case .checkParty(let uid, let callID, let owner):
                let ask = SignalPartyCheck.with {
                    $0.uid = uid
                    $0.callID = callID
                }
                atCallOwner(owner, .callPartyCheck, ask, local: { [self] () throws(ShowroomError) in try partyCheck(ask) }) { [self] result in
                    let note = (try? result.get())?.partyNote ?? .unsure
                    perform(machine.partyChecked(uid: uid, callID: callID, note, nowMs: nowMs))
                }
            case .callLost(let uid, let entry):
                logger.warning("a call's node is gone with it: its party here is freed", metadata: ["call": "\(entry.callID)", "uid": "\(uid)"])
                deliver(SignalNotice(lostCallOf: uid, entry))
            case .replicate(let batch):
                replicate(batch)
            case .catchUp(let member, let after):
                catchUp(from: member, after: after)
            case .handOver(_, let notices):
                remote += notices
            case .adopted(let call):
                logger.info("took over a call from its former owner", metadata: ["call": "\(call.id)", "phase": "\(call.phase.rawValue)"])
            }
        }
        report(events)
        // Until the party's owner of the moment takes it: a lost notice would leave the party in a
        // call that is over (its owner noting it busy, its app never told).
        for notice in remote {
            noticeDeliveries.deliver(.callDeliver, key: UserRecord.key(of: notice.to),
                                     what: "notice \(notice.sequence) of call \(notice.callID) for uid \(notice.to)") {
                SignalDeliverRequest.with { $0.notices = [notice] }
            }
        }
    }

    /// Hands a notice for a user owned here to the machine.
    func deliver(_ notice: SignalNotice) {
        perform(machine.deliver(notice, to: notice.to, callID: notice.callID, state: CallState(rawValue: Int(notice.state)),
                                owner: notice.call.nodeID, sequence: notice.sequence, lost: notice.tellsLostCall))
    }

    /// Sends a batch of user records in slices; the machine learns whether the member holds them all,
    /// and what it holds newer.
    func replicate(_ batch: VersionedStore<UserRecord>.Batch) {
        guard !batch.records.isEmpty else { return perform(machine.replicaBatchAnswered(batch, held: true)) }
        guard let endpoint = node.clusterEndpoint(of: batch.member) else {
            return perform(machine.replicaBatchAnswered(batch, held: false))
        }
        var remaining = (batch.records.count + maxRecordsPerBatch - 1) / maxRecordsPerBatch
        var held = true
        var newer: [ReplicatedEntry<UserRecord>] = []
        for start in stride(from: 0, to: batch.records.count, by: maxRecordsPerBatch) {
            var slice = SignalReplicaBatch()
            slice.records = batch.records[start..<min(start + maxRecordsPerBatch, batch.records.count)].map(SignalUserRecord.init)
            node.send(.callReplica, body: slice, to: endpoint, timeout: Self.peerTimeout) { [self] result in
                switch Self.replicaAnswer(result) {
                case .success(let answer): newer += Self.entries(answer.newer)
                case .failure(let failure):
                    held = false
                    logger.warning("users' records not replicated", metadata: ["node": "\(batch.member)", "error": "\(failure)"])
                }
                remaining -= 1
                if remaining == 0 { perform(machine.replicaBatchAnswered(batch, held: held, newer: newer, nowMs: nowMs)) }
            }
        }
    }

    /// Asks `member` for the page after `after` of the records it holds of this node's keys.
    func catchUp(from member: String, after: String) {
        guard let endpoint = node.clusterEndpoint(of: member) else {
            return perform(machine.caughtUp(from: member, after: after, nil, more: false, nowMs: nowMs))
        }
        let ask = SignalReplicaBatch.with {
            $0.catchUp = true
            $0.catchUpAfter = after
        }
        node.send(.callReplica, body: ask, to: endpoint, timeout: Self.peerTimeout) { [self] result in
            switch Self.replicaAnswer(result) {
            case .success(let answer):
                perform(machine.caughtUp(from: member, after: after, Self.entries(answer.newer), more: answer.more, nowMs: nowMs))
            case .failure(let failure):
                logger.warning("no catch-up from a call-signal node", metadata: ["node": "\(member)", "error": "\(failure)"])
                perform(machine.caughtUp(from: member, after: after, nil, more: false, nowMs: nowMs))
            }
        }
    }

    /// A replica batch's answer, decoded.
    static func replicaAnswer(_ result: Result<WireEnvelope, ShowroomError>) -> Result<SignalReplicaBatchResponse, ShowroomError> {
        Result { () throws(ShowroomError) -> SignalReplicaBatchResponse in
            let answer = try result.get()
            if let failure = answer.failure { throw failure }
            return try answer.decodeBody(SignalReplicaBatchResponse.self)
        }
    }

    /// The records a peer answered with, those that fail their checks left out.
    static func entries(_ records: [SignalUserRecord]) -> [ReplicatedEntry<UserRecord>] {
        records.compactMap { try? $0.entry() }
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

    /// The call as party `uid` sees it: its channel and token while the call is on.
    func info(_ call: Call, for uid: UInt32) -> SignalCallInfo {
        SignalCallInfo(call, nodeID: selfID, token: call.isActive && call.isParty(uid) ? callToken(call, uid: uid) : nil)
    }

    /// A token for `uid` in the call's channel only, for ``callTokenSeconds``: the one minted for
    /// it earlier while that is under a quarter of its life old.
    func callToken(_ call: Call, uid: UInt32) -> String {
        let now = nowMs
        if let token = machine.cachedToken(callID: call.id, uid: uid, nowMs: now) { return token }
        guard let appID = configuration.appID, let certificate = configuration.appCertificate,
              let token = try? RTCTokenBuilder.buildToken(appID: appID, appCertificate: certificate, channelName: call.channel,
                                                         uid: uid, role: .publisher, tokenExpire: callTokenSeconds,
                                                         issueTs: UInt32(clamping: now / 1000), salt: machine.tokenSalt())
        else { return "" }
        machine.tokenMinted(token, callID: call.id, uid: uid, nowMs: now)
        return token
    }
}

