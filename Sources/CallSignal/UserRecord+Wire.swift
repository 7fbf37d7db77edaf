import Calls
import ReplicatedOwnership
import ShowroomWire

extension SignalCallType {
    /// A call's type as it travels.
    init(_ type: CallType) { self = type == .audio ? .audio : .video }
}

extension CallType {
    /// A call's type from the wire (anything but audio is video).
    init(_ type: SignalCallType) { self = type == .audio ? .audio : .video }
}

/// The most records one replica batch carries (a hand-over goes in slices of this size).
let maxRecordsPerBatch = 2_000

extension SignalUserRecord {
    /// A stored record as it travels.
    init(_ entry: ReplicatedEntry<UserRecord>) {
        self.init()
        uid = UserRecord.uid(ofKey: entry.key) ?? 0
        version = entry.version
        writer = entry.writer
        guard let record = entry.value else {
            deleted = true
            return
        }
        if let state = record.session {
            session = SignalSessionRecord.with {
                $0.sessionID = state.id
                $0.loggedInAtMs = state.loggedInAtMs
                $0.tokenExpiresAtMs = state.tokenExpiresAtMs
            }
        }
        if let inCall = record.inCall {
            inCallID = inCall.callID
            inCallOwner = inCall.owner
        }
        if let call = record.ownedCall { ownedCall = SignalCallRecord(call) }
    }

    /// The record a peer sent, checked: a replica is only as good as its fields, and a malformed
    /// one must not trap or poison the book.
    func entry() throws(ShowroomError) -> ReplicatedEntry<UserRecord> {
        guard uid != 0 else { throw .invalidArgument("a user record names uid 0") }
        guard !writer.isEmpty, writer.utf8.count <= 128 else { throw .invalidArgument("a user record's writer must be a node id") }
        let key = UserRecord.key(of: uid)
        guard !deleted else { return ReplicatedEntry(key: key, value: nil, version: version, writer: writer) }
        var record = UserRecord(uid: uid)
        if hasSession {
            guard session.sessionID.hasPrefix("\(uid)-"), session.sessionID.utf8.count <= 64 else {
                throw .invalidArgument("uid \(uid)'s record names session '\(session.sessionID.prefix(64))'")
            }
            record.session = UserRecord.SessionState(id: session.sessionID, loggedInAtMs: session.loggedInAtMs,
                                                     tokenExpiresAtMs: session.tokenExpiresAtMs)
        }
        if !inCallID.isEmpty {
            guard inCallID.utf8.count <= 64, inCallOwner.utf8.count <= 128 else {
                throw .invalidArgument("uid \(uid)'s record names an oversize call")
            }
            record.inCall = UserRecord.InCall(callID: inCallID, owner: inCallOwner)
        }
        if hasOwnedCall {
            let call = try ownedCall.call()
            guard call.callee == uid else { throw .invalidArgument("uid \(uid)'s record holds a call to uid \(call.callee)") }
            record.ownedCall = call
        }
        return ReplicatedEntry(key: key, value: record, version: version, writer: writer)
    }
}

extension SignalReplicaBatch {
    /// The records a peer sent, each checked (``SignalUserRecord/entry()``), at most
    /// ``maxRecordsPerBatch`` of them.
    func entries() throws(ShowroomError) -> [ReplicatedEntry<UserRecord>] {
        guard records.count <= maxRecordsPerBatch else {
            throw .invalidArgument("a replica batch carries at most \(maxRecordsPerBatch) records, not \(records.count)")
        }
        var entries: [ReplicatedEntry<UserRecord>] = []
        for record in records { entries.append(try record.entry()) }
        return entries
    }
}

extension SignalCallRecord {
    /// A call as it travels to a replica.
    init(_ call: Call) {
        self.init()
        callID = call.id
        caller = call.caller
        callee = call.callee
        type = SignalCallType(call.type)
        channel = call.channel
        `extension` = call.extensionInfo
        waitsForFirstFrame = call.waitsForFirstFrame
        startedAtMs = call.startedAtMs
        phase = call.phase.rawValue
        sequence = call.sequence
        deadlineMs = call.deadlineMs ?? 0
        acceptedAtMs = call.acceptedAtMs ?? 0
        connectedAtMs = call.connectedAtMs ?? 0
        firstFrames = call.firstFrames.sorted()
        absentSince = call.absentSince
        liveRooms = call.liveRooms
        if let end = call.end {
            endReason = end.reason.rawValue
            endedBy = end.by ?? 0
            endMessage = end.message
        }
        endedAtMs = call.endedAtMs ?? 0
    }

    /// The call, checked like a ring: parties, id, channel, extension; an ended one with its end
    /// (a known reason, by a party or nobody, a text no longer than a party may give).
    func call() throws(ShowroomError) -> Call {
        guard caller != 0, callee != 0, caller != callee, callID.hasPrefix("\(callee)-"), callID.utf8.count <= 64,
              channel.utf8.count <= 64, Names.callee(ofCallChannel: channel) == callee,
              let phase = Call.Phase(rawValue: phase) else {
            throw .invalidArgument("a replicated call must name its parties, id, private channel and phase")
        }
        let parties: Set<UInt32> = [caller, callee]
        var end: Call.End?
        if phase == .ended {
            guard let reason = Call.End.Reason(rawValue: endReason), endedBy == 0 || parties.contains(endedBy), endedAtMs > 0 else {
                throw .invalidArgument("ended call \(callID)'s record must say why, by which party and when")
            }
            do {
                try CallSettings.validate(reason: endMessage)
            } catch {
                throw ShowroomError(CallSignalShell.Machine.Refusal(error))
            }
            end = Call.End(reason: reason, by: endedBy == 0 ? nil : endedBy, message: endMessage)
        } else {
            guard endReason.isEmpty, endedBy == 0, endMessage.isEmpty, endedAtMs == 0 else {
                throw .invalidArgument("active call \(callID)'s record must not carry an end")
            }
        }
        guard Set(firstFrames).isSubset(of: parties), Set(absentSince.keys).isSubset(of: parties),
              Set(liveRooms.keys).isSubset(of: parties) else {
            throw .invalidArgument("call \(callID)'s record names someone other than its parties")
        }
        for room in liveRooms.values { try Names.validateRoomID(room, field: "live_rooms") }
        do {
            try CallSettings.validate(`extension`)
        } catch {
            throw ShowroomError(CallSignalShell.Machine.Refusal(error))
        }
        return Call(restoring: callID, caller: caller, callee: callee, type: CallType(type),
                    channel: channel, extensionInfo: `extension`, waitsForFirstFrame: waitsForFirstFrame,
                    startedAtMs: startedAtMs, phase: phase, sequence: sequence,
                    deadlineMs: deadlineMs == 0 ? nil : deadlineMs, acceptedAtMs: acceptedAtMs == 0 ? nil : acceptedAtMs,
                    connectedAtMs: connectedAtMs == 0 ? nil : connectedAtMs, firstFrames: Set(firstFrames),
                    absentSince: absentSince, liveRooms: liveRooms, end: end, endedAtMs: end == nil ? nil : endedAtMs)
    }
}
