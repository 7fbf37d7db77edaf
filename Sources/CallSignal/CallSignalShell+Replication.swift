import Calls
import Membership
import NodeRuntime
import ReplicatedOwnership
import ShowroomWire

/// Replicated ownership of users (``UserRecord`` under `uid/<uid>`): each change of a user this
/// node owns — its session, the call it is in, the call it owns as callee — is written to
/// ``CallSignalShell/records`` and sent to the user's successor within one flush (every
/// ``CallSignalShell/flushInterval``). When the members change, records go to their new holders, a
/// node gives up the live state of users it owns no more, and the successor of a node that died
/// takes over its users from the replicas: their sessions stay logged in, their calls keep their
/// timers, and the parties' nodes learn where each call is held now.
extension CallSignalShell {
    /// Notes that what this node holds of `uid` may have changed.
    func touch(_ uid: UInt32) { dirty.insert(uid) }

    /// Notes a change of the call `callID` (held under its callee's key).
    func touch(callID: String) {
        if let callee = Self.callee(ofCallID: callID) { dirty.insert(callee) }
    }

    /// The callee a call id names (`<callee>-<hex>`).
    static func callee(ofCallID id: String) -> UInt32? {
        guard id.utf8.count <= 64, let dash = id.firstIndex(of: "-") else { return nil }
        return UInt32(id[..<dash])
    }

    /// What this node holds of `uid` now, nil for nothing.
    func currentRecord(of uid: UInt32) -> UserRecord? {
        var record = UserRecord(uid: uid, session: presence.state(of: uid))
        record.inCall = callOf[uid]
        if let call = book.call(of: uid), call.callee == uid { record.ownedCall = call }
        return record.isEmpty ? nil : record
    }

    /// Writes the changed records of the users owned here and sends them to their other holders.
    func replicateChanges() {
        guard !dirty.isEmpty else { return }
        let uids = dirty.sorted()
        dirty = []
        var batches: [String: (writes: [UInt64], records: [SignalUserRecord])] = [:]
        let now = nowMs
        for uid in uids {
            let key = UserRecord.key(of: uid)
            guard records.replication.owns(key) else { continue }
            let record = currentRecord(of: uid)
            guard record != records[key] else { continue }
            let (write, effects) = records.write(record, for: key)
            if record == nil { tombstones[key] = now }
            for (member, entries) in effects.send {
                batches[member, default: ([], [])].writes.append(write)
                batches[member, default: ([], [])].records.append(contentsOf: entries.map(SignalUserRecord.init))
            }
        }
        for (member, batch) in batches.sorted(by: { $0.key < $1.key }) {
            send(batch.records, to: member) { [self] held in
                for write in batch.writes { _ = records.replicaAnswered(write: write, by: member, held: held) }
            }
        }
    }

    /// Sends `records` to member `member` in slices; `done` learns whether it holds them all.
    func send(_ records: [SignalUserRecord], to member: String, done: @escaping (Bool) -> Void = { _ in }) {
        guard !records.isEmpty else { return done(true) }
        guard let endpoint = node.clusterEndpoint(of: member) else { return done(false) }
        var remaining = (records.count + maxRecordsPerBatch - 1) / maxRecordsPerBatch
        var held = true
        for start in stride(from: 0, to: records.count, by: maxRecordsPerBatch) {
            var batch = SignalReplicaBatch()
            batch.records = Array(records[start..<min(start + maxRecordsPerBatch, records.count)])
            node.send(.callReplica, body: batch, to: endpoint, timeout: Self.peerTimeout) { [logger] result in
                if let failure = result.refusal {
                    held = false
                    logger.warning("users' records not replicated", metadata: ["node": "\(member)", "error": "\(failure)"])
                }
                remaining -= 1
                if remaining == 0 { done(held) }
            }
        }
    }

    /// `CALL_REPLICA`: records from a user's owner (or a hand-over). Those of users this node owns
    /// now are taken over at once.
    func receiveReplicas(_ batch: SignalReplicaBatch) throws(ShowroomError) {
        guard batch.records.count <= maxRecordsPerBatch else {
            throw .invalidArgument("a replica batch carries at most \(maxRecordsPerBatch) records, not \(batch.records.count)")
        }
        var entries: [ReplicatedEntry<UserRecord>] = []
        for record in batch.records { entries.append(try record.entry()) }
        let kept = records.receive(entries).persist
        let now = nowMs
        for entry in kept {
            if entry.value == nil { tombstones[entry.key] = now }
            if let record = entry.value, records.replication.owns(entry.key) { adopt(record) }
        }
    }

    /// The alive call-signal nodes changed: records go to their new holders, users owned
    /// elsewhere now are given up, users owned here now are taken over from their replicas, and
    /// the calls of parties held here whose owner died are looked up at their new owner.
    func membersChanged() {
        let alive = callSignalRing.value(of: node).members
        // Most changes are other members' metadata (an edge's load moves with every join): the
        // call-signal nodes, all that matters here, are the same.
        guard alive != ownersSeen else { return }
        ownersSeen = alive
        replicateChanges()
        let effects = records.membersChanged(to: alive)
        for (member, entries) in effects.send.sorted(by: { $0.key < $1.key }) {
            send(entries.map(SignalUserRecord.init), to: member)
        }
        var live = Set(presence.sessionOf.keys).union(callOf.keys)
        live.formUnion(book.activeCall.compactMap { uid, id in book.calls[id]?.callee == uid ? uid : nil })
        for uid in live.sorted() where !records.replication.owns(UserRecord.key(of: uid)) { release(uid) }
        for (key, entry) in records.entries.sorted(by: { $0.key < $1.key }) where records.replication.owns(key) {
            if let record = entry.value { adopt(record) }
        }
        verifyCallsOfLostNodes()
    }

    /// Gives up what this node held of `uid`, owned by another node now (which has its record):
    /// a parked poll is answered empty, so the client's next one goes to the new owner.
    func release(_ uid: UInt32) {
        if let sessionID = presence.sessionOf[uid], let parked = mailboxes.removeValue(forKey: sessionID)?.poll {
            parked.respond(.success(SignalPollResponse()))
        }
        presence.release(uid)
        callOf[uid] = nil
        if let call = book.call(of: uid), call.callee == uid { book.release(call.id) }
    }

    /// Takes over a user from its record (this node owns it now): what is held here already wins.
    func adopt(_ record: UserRecord) {
        if let session = record.session { presence.adopt(session, uid: record.uid, nowMs: nowMs) }
        if callOf[record.uid] == nil { callOf[record.uid] = record.inCall }
        if let call = record.ownedCall, book.adopt(call) {
            logger.info("took over a call from its former owner", metadata: [
                "call": "\(call.id)", "phase": "\(call.phase.rawValue)",
            ])
            // The parties' nodes learn the call's new owner.
            for party in [call.caller, call.callee] where callOf[party]?.callID == call.id { callOf[party]?.owner = selfID }
        }
        touch(record.uid)
    }

    /// A party held here whose call's recorded owner is gone asks the call's owner now: a call it
    /// took over goes on (its owner is noted); one it does not know (it was never replicated) is
    /// over for the party, told it failed (state failed, reason messageFailed, with a sequence
    /// above any the lost node could have sent), so no client stays stuck in calling, connecting
    /// or connected. An owner that does not answer is asked again on the next check.
    func verifyCallsOfLostNodes() {
        // Dead or departed, not merely suspect: a suspicion is often refuted within a second.
        let gone = Set(node.membersOnLoop.filter { $0.state == .dead || $0.state == .left }.map(\.nodeID)).subtracting([selfID])
        for (uid, entry) in callOf.sorted(by: { $0.key < $1.key }) where gone.contains(entry.owner) {
            guard let callee = Self.callee(ofCallID: entry.callID) else {
                callLost(uid: uid, entry)
                continue
            }
            let owner = owner(of: callee)
            if owner == selfID {
                if book.calls[entry.callID]?.isActive == true { callOf[uid]?.owner = selfID } else { callLost(uid: uid, entry) }
                continue
            }
            var ask = SignalPartyAction()
            ask.kind = UInt32(WireMessageKind.callToken.rawValue)
            ask.uid = uid
            ask.callID = entry.callID
            atCallOwner(owner, .callPartyAction, ask,
                        local: { () throws(ShowroomError) -> SignalCallActionResponse in SignalCallActionResponse() }) { [self] result in
                guard callOf[uid]?.callID == entry.callID else { return }
                switch result {
                case .success: callOf[uid]?.owner = owner
                case .failure(let error) where [.unknownCall, .callEnded, .notYourCall].contains(error.code):
                    callLost(uid: uid, entry)
                case .failure: break  // asked again on the next check
                }
                touch(uid)
            }
        }
    }

    /// The call of `uid` is lost with its node: the party is freed and told it failed.
    func callLost(uid: UInt32, _ entry: UserRecord.InCall) {
        callOf[uid] = nil
        touch(uid)
        var notice = SignalNotice()
        notice.callID = entry.callID
        notice.sequence = 1 << 62
        notice.to = uid
        notice.state = UInt32(CallState.failed.rawValue)
        notice.reason = UInt32(CallStateReason.messageFailed.rawValue)
        notice.event = UInt32(CallEvent.none.rawValue)
        notice.call.callID = entry.callID
        notice.call.nodeID = entry.owner
        notice.call.endReason = "callSignalLost"
        notice.call.endMessage = "call-signal node \(entry.owner), which held the call, is gone and no other node holds it"
        logger.warning("a call's node is gone with it: its party here is freed", metadata: ["call": "\(entry.callID)", "uid": "\(uid)"])
        queue(notice)
    }

    /// Forgets deletions older than ``tombstoneLifetimeMs``: no late copy is still on its way.
    func dropOldTombstones() {
        let now = nowMs
        for (key, at) in tombstones where now - at >= Self.tombstoneLifetimeMs {
            records.dropTombstone(key)
            tombstones[key] = nil
        }
    }
}
