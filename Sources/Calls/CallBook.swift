/// The calls one call-signal node owns, as a pure state machine: requests and observations go in
/// with the time, directives (notices to each party, kicks, seals, events) come out. The shell
/// carries the notices, mints the ids, channels and tokens, and moves the clock.
///
/// The rules are CallAPI's, made server-side:
/// - a callee who is offline is refused at once; a callee in a call makes the caller's call end
///   busy (17) in the same answer, atomically, since one book decides;
/// - one timer per call (``CallSettings/callingTimeoutMs``) covers calling and connecting and ends
///   both sides once (caller 14, callee 18);
/// - every request is decided against the one record: cancel against accept, a second accept,
///   hang-up against timeout end in exactly one terminal state, the same for both sides; a request
///   that comes too late is refused with what happened;
/// - a call repeated by its caller while it rings is the same call, and nothing regresses a call
///   that is connecting or connected;
/// - connected means accepted and each side decoded the other's first frame (or accepted, when the
///   caller turned first-frame waiting off);
/// - a party that leaves the call's channel or loses signaling makes the other side see
///   `remoteLeft` (108) at once; back within ``CallSettings/leaveGraceMs`` it goes on, else the call
///   ends for both, and the channel is sealed against both, the leaver included.
///
/// A call is held by one book: the owner of its callee. (Which node owns what, and how a call
/// whose parties have different owners is decided, is the shell's business; see the
/// ReplicatedOwnership module's two-key protocol.)
public struct CallBook: Sendable {
    /// The settings every call gets unless it names its own timeout.
    public var settings: CallSettings
    /// Every call held, active or recently ended, by id.
    public private(set) var calls: [String: Call] = [:]
    /// The active call of each party.
    public private(set) var activeCall: [UInt32: String] = [:]
    /// The call on each channel, while the call is held.
    public private(set) var callOnChannel: [String: String] = [:]
    /// The latest call each callee was rung in that is held here, active or ended: what its
    /// user record carries (``UserRecord/ownedCall``).
    public private(set) var latestOwned: [UInt32: String] = [:]

    /// An empty book.
    public init(settings: CallSettings = CallSettings()) {
        self.settings = settings
    }

    /// The active call `uid` is in, if any.
    public func call(of uid: UInt32) -> Call? { activeCall[uid].flatMap { calls[$0] } }

    // MARK: - Requests

    /// `caller` calls `callee`. The shell gives the new call's `id` and private `channel` (fresh and
    /// random), whether the callee is logged in, and the call it is in elsewhere (one another book
    /// holds), if any. Returns the call (an existing one when the caller repeats a call that still
    /// rings) and what to do.
    public mutating func call(
        id: String, channel: String, from caller: UInt32, to callee: UInt32, type: CallType,
        extensionInfo: [String: String] = [:], timeoutMs: Int64? = nil, waitsForFirstFrame: Bool = true,
        callerLiveRoom: String? = nil, calleeOnline: Bool, calleeInCallElsewhere: String? = nil, nowMs: Int64
    ) throws(CallRefusal) -> (call: Call, directives: [CallDirective]) {
        guard caller != 0, callee != 0 else { throw CallRefusal(.invalidArgument, "uid 0 cannot call or be called") }
        guard caller != callee else { throw CallRefusal(.invalidArgument, "uid \(caller) cannot call itself") }
        try CallSettings.validate(extensionInfo)
        let timeout = timeoutMs ?? settings.callingTimeoutMs
        guard timeout > 0, timeout <= CallSettings.maxCallingTimeoutMs else {
            throw CallRefusal(.invalidArgument,
                              "the calling timeout must be 1 – \(CallSettings.maxCallingTimeoutMs) ms, not \(timeout)")
        }
        if let current = self.call(of: caller) {
            // The same call again (a resent message): the call that rings, unchanged.
            if current.caller == caller, current.callee == callee, current.phase == .ringing {
                return (current, [])
            }
            throw CallRefusal(.callerInCall,
                              "uid \(caller) is in call \(current.id) with uid \(current.other(than: caller)); hang it up first")
        }
        guard calleeOnline else {
            throw CallRefusal(.calleeOffline, "uid \(callee) is not logged in to signaling; try again when it is online")
        }
        guard calls[id] == nil else { throw CallRefusal(.invalidArgument, "call id \(id) is taken") }
        var call = Call(id: id, caller: caller, callee: callee, type: type, channel: channel,
                        extensionInfo: extensionInfo, waitsForFirstFrame: waitsForFirstFrame,
                        startedAtMs: nowMs, phase: .ringing)
        if let busy = self.call(of: callee)?.id ?? calleeInCallElsewhere {
            // Busy: the call ends in the same answer; the callee hears nothing of it.
            var directives: [CallDirective] = []
            end(&call, .init(reason: .busy, by: callee, message: "uid \(callee) is in call \(busy)"), nowMs: nowMs,
                into: &directives)
            calls[id] = call
            return (call, directives)
        }
        call.deadlineMs = nowMs + timeout
        if let room = callerLiveRoom, !room.isEmpty { call.liveRooms[caller] = room }
        activeCall[caller] = id
        activeCall[callee] = id
        callOnChannel[channel] = id
        latestOwned[callee] = id
        var directives: [CallDirective] = []
        notify(&call, [(caller, .calling, .none, .remoteUserRecvCall), (callee, .calling, .none, .none)], into: &directives)
        directives.append(.started(call))
        calls[id] = call
        return (call, directives)
    }

    /// The callee accepts, naming the live room it hosts, if any (it shows the call from now to
    /// the end, as does the caller's). Accepting again is harmless (nothing changes).
    public mutating func accept(_ id: String, by uid: UInt32, liveRoom: String? = nil,
                                nowMs: Int64) throws(CallRefusal) -> [CallDirective] {
        var call = try existing(id, party: uid)
        guard uid == call.callee else { throw CallRefusal(.notYourCall, "only the callee (uid \(call.callee)) accepts call \(id)") }
        switch call.phase {
        case .ended: throw Self.endedRefusal(call)
        case .connecting, .connected: return []
        case .ringing: break
        }
        call.phase = .connecting
        call.acceptedAtMs = nowMs
        if let room = liveRoom, !room.isEmpty { call.liveRooms[uid] = room }
        var directives: [CallDirective] = []
        for (party, room) in call.liveRooms.sorted(by: { $0.key < $1.key }) {
            directives.append(.interaction(roomID: room, owner: party, callID: id, inCall: true))
        }
        notify(&call, [(call.callee, .connecting, .localAccepted, .localAccepted),
                       (call.caller, .connecting, .remoteAccepted, .remoteAccepted)], into: &directives)
        connectIfReady(&call, nowMs: nowMs, into: &directives)
        calls[id] = call
        return directives
    }

    /// The caller cancels a call that rings.
    public mutating func cancel(_ id: String, by uid: UInt32, nowMs: Int64) throws(CallRefusal) -> [CallDirective] {
        var call = try existing(id, party: uid)
        guard uid == call.caller else { throw CallRefusal(.notYourCall, "only the caller (uid \(call.caller)) cancels call \(id)") }
        switch call.phase {
        case .ended: throw Self.endedRefusal(call)
        case .connecting, .connected:
            throw CallRefusal(.stateMismatch, "call \(id) was accepted already; hang it up instead")
        case .ringing: break
        }
        var directives: [CallDirective] = []
        end(&call, .init(reason: .cancelled, by: uid, message: ""), nowMs: nowMs, into: &directives)
        calls[id] = call
        return directives
    }

    /// The callee rejects a call that rings, saying why.
    public mutating func reject(_ id: String, by uid: UInt32, reason: String = "",
                                nowMs: Int64) throws(CallRefusal) -> [CallDirective] {
        var call = try existing(id, party: uid)
        guard uid == call.callee else { throw CallRefusal(.notYourCall, "only the callee (uid \(call.callee)) rejects call \(id)") }
        try CallSettings.validate(reason: reason)
        switch call.phase {
        case .ended: throw Self.endedRefusal(call)
        case .connecting, .connected:
            throw CallRefusal(.stateMismatch, "call \(id) was accepted already; hang it up instead")
        case .ringing: break
        }
        var directives: [CallDirective] = []
        end(&call, .init(reason: .rejected, by: uid, message: reason), nowMs: nowMs, into: &directives)
        calls[id] = call
        return directives
    }

    /// A party hangs up, saying why. While the call rings this is the caller's cancel or the
    /// callee's reject (CallAPI's hang-up works in every state).
    public mutating func hangup(_ id: String, by uid: UInt32, reason: String = "",
                                nowMs: Int64) throws(CallRefusal) -> [CallDirective] {
        var call = try existing(id, party: uid)
        try CallSettings.validate(reason: reason)
        switch call.phase {
        case .ended: throw Self.endedRefusal(call)
        case .ringing:
            return uid == call.caller ? try cancel(id, by: uid, nowMs: nowMs) : try reject(id, by: uid, reason: reason, nowMs: nowMs)
        case .connecting, .connected: break
        }
        var directives: [CallDirective] = []
        end(&call, .init(reason: .hungUp, by: uid, message: reason), nowMs: nowMs, into: &directives)
        calls[id] = call
        return directives
    }

    // MARK: - Observations

    /// `uid` decoded the other party's first frame (its client says so).
    public mutating func firstFrameDecoded(_ id: String, by uid: UInt32, nowMs: Int64) throws(CallRefusal) -> [CallDirective] {
        var call = try existing(id, party: uid)
        guard call.isActive, !call.firstFrames.contains(uid) else { return [] }
        call.firstFrames.insert(uid)
        var directives: [CallDirective] = []
        connectIfReady(&call, nowMs: nowMs, into: &directives)
        calls[id] = call
        return directives
    }

    /// `uid` joined the call's channel (an edge's report), or came back to signaling: the other
    /// side sees `remoteJoined`, and a pending grace ends.
    public mutating func partyJoined(_ id: String, uid: UInt32, nowMs: Int64) -> [CallDirective] {
        guard var call = calls[id], call.isActive, call.isParty(uid) else { return [] }
        call.absentSince[uid] = nil
        var directives: [CallDirective] = []
        notifyEvent(&call, to: call.other(than: uid), .remoteJoined, into: &directives)
        calls[id] = call
        return directives
    }

    /// `uid` left the call's channel (an edge's report) or lost signaling: the other side sees
    /// `remoteLeft` at once, and the grace period starts (once: a second report keeps the first
    /// time).
    public mutating func partyLeft(_ id: String, uid: UInt32, nowMs: Int64) -> [CallDirective] {
        guard var call = calls[id], call.isActive, call.isParty(uid), call.absentSince[uid] == nil else { return [] }
        call.absentSince[uid] = nowMs
        var directives: [CallDirective] = []
        notifyEvent(&call, to: call.other(than: uid), .remoteLeft, into: &directives)
        calls[id] = call
        return directives
    }

    /// Ends what the clock ends: calls not connected within their timeout, parties away longer than
    /// the grace, calls longer than the maximum; forgets ended calls after ``CallSettings/retainEndedMs``.
    public mutating func tick(nowMs: Int64) -> [CallDirective] {
        var directives: [CallDirective] = []
        for id in calls.keys.sorted() {
            guard var call = calls[id] else { continue }
            if !call.isActive {
                if let ended = call.endedAtMs, nowMs - ended >= settings.retainEndedMs {
                    calls[id] = nil
                    if callOnChannel[call.channel] == id { callOnChannel[call.channel] = nil }
                    if latestOwned[call.callee] == id { latestOwned[call.callee] = nil }
                }
                continue
            }
            if let deadline = call.deadlineMs, nowMs >= deadline {
                end(&call, .init(reason: .timedOut, by: nil, message: ""), nowMs: nowMs, into: &directives)
            } else if let (leaver, since) = call.absentSince.min(by: { ($0.value, $0.key) < ($1.value, $1.key) }),
                      // (both away since the same time: the lower uid, whatever the table's order)
                      nowMs - since >= settings.leaveGraceMs {
                end(&call, .init(reason: .partyLeft, by: leaver, message: "uid \(leaver) left the call"), nowMs: nowMs,
                    into: &directives)
            } else if let connected = call.connectedAtMs, nowMs - connected >= settings.maxCallMs {
                end(&call, .init(reason: .tooLong, by: nil, message: "the call reached its maximum length"), nowMs: nowMs,
                    into: &directives)
            }
            calls[id] = call
        }
        return directives
    }

    // MARK: - Ownership moving

    /// How far an adopted call's sequence numbers jump: past any notice its former owner may have
    /// sent after its last replicated write, so the parties never drop the new owner's notices as
    /// stale.
    public static let adoptedSequenceGap: UInt64 = 1_000

    /// Takes over an active call from its former owner's replica (this node owns it now): its
    /// timers (calling timeout, grace, maximum length) go on from the replicated times. A call
    /// held already, or one whose parties are in another call here, is left as it is. Returns
    /// whether it was adopted.
    @discardableResult
    public mutating func adopt(_ call: Call) -> Bool {
        guard call.isActive, calls[call.id] == nil,
              activeCall[call.caller] == nil, activeCall[call.callee] == nil else { return false }
        var call = call
        call.sequence &+= Self.adoptedSequenceGap
        calls[call.id] = call
        activeCall[call.caller] = call.id
        activeCall[call.callee] = call.id
        callOnChannel[call.channel] = call.id
        latestOwned[call.callee] = call.id
        return true
    }

    /// Takes the end of a call from a record of its callee (another node held the call too, on
    /// the other side of a partition, and ended it there): a copy still active here ends the same
    /// way, its parties told, with notice numbers above both copies'; one not held here is kept
    /// as ended, so this node's record of the callee carries the end on. Ended beats active: an
    /// active copy that arrives later is not adopted over it.
    public mutating func adoptEnd(_ ended: Call, nowMs: Int64) -> [CallDirective] {
        guard !ended.isActive, let end = ended.end else { return [] }
        guard var call = calls[ended.id] else {
            calls[ended.id] = ended
            if activeCall[ended.callee] == nil { latestOwned[ended.callee] = ended.id }
            return []
        }
        guard call.isActive else { return [] }
        call.sequence = max(call.sequence, ended.sequence)
        var directives: [CallDirective] = []
        self.end(&call, end, nowMs: nowMs, into: &directives)
        calls[call.id] = call
        return directives
    }

    /// Ends an active call at once because party `uid` is no longer in it where its signaling is
    /// held (its owner node freed it, or noted it in another call, while this book held the call
    /// on): both parties are told, as for a party that left (``Call/End/Reason/partyLeft``), so
    /// they hear the same end and neither stays in a call the other left. Nothing for a call not
    /// held, over, or of which `uid` is no party.
    public mutating func endForAbsentParty(_ id: String, uid: UInt32, message: String, nowMs: Int64) -> [CallDirective] {
        guard var call = calls[id], call.isActive, call.isParty(uid) else { return [] }
        var directives: [CallDirective] = []
        end(&call, .init(reason: .partyLeft, by: uid, message: message), nowMs: nowMs, into: &directives)
        calls[id] = call
        return directives
    }

    /// Numbers the next notices of a call held here, still active, above those of another node's
    /// copy of it (`copy`, from that node's record of the callee): on the other side of a
    /// partition that node took the call over and told the parties its own numbers, 1 000 above
    /// this book's, and a party drops a notice numbered below one it took (an end never heard
    /// leaves it in a call that is over). Returns whether the numbers moved.
    @discardableResult
    public mutating func numberAbove(_ copy: Call) -> Bool {
        guard var call = calls[copy.id], call.isActive, call.caller == copy.caller, call.callee == copy.callee,
              copy.sequence > call.sequence else { return false }
        call.sequence = copy.sequence
        calls[call.id] = call
        return true
    }

    /// Forgets a call another node owns now (it was handed over): no notice, no seal.
    public mutating func release(_ id: String) {
        guard let call = calls.removeValue(forKey: id) else { return }
        for party in [call.caller, call.callee] where activeCall[party] == id { activeCall[party] = nil }
        if callOnChannel[call.channel] == id { callOnChannel[call.channel] = nil }
        if latestOwned[call.callee] == id { latestOwned[call.callee] = nil }
    }

    // MARK: - Helpers

    private func existing(_ id: String, party uid: UInt32) throws(CallRefusal) -> Call {
        guard let call = calls[id] else {
            throw CallRefusal(.unknownCall, "no call \(id): it never existed or ended over \(settings.retainEndedMs / 1000) s ago")
        }
        guard call.isParty(uid) else { throw CallRefusal(.notYourCall, "uid \(uid) is not a party of call \(id)") }
        return call
    }

    private static func endedRefusal(_ call: Call) -> CallRefusal {
        let how = call.end.map { end in
            "\(end.reason.rawValue)" + (end.by.map { " by uid \($0)" } ?? "")
        } ?? "ended"
        return CallRefusal(.callEnded, "call \(call.id) is over (\(how))")
    }

    private mutating func connectIfReady(_ call: inout Call, nowMs: Int64, into directives: inout [CallDirective]) {
        guard call.phase == .connecting else { return }
        let ready = !call.waitsForFirstFrame || call.firstFrames.isSuperset(of: [call.caller, call.callee])
        guard ready else { return }
        call.phase = .connected
        call.connectedAtMs = nowMs
        call.deadlineMs = nil
        let reason: CallStateReason = call.waitsForFirstFrame ? .recvRemoteFirstFrame : .none
        let event: CallEvent = call.waitsForFirstFrame ? .recvRemoteFirstFrame : .none
        notify(&call, [(call.caller, .connected, reason, event), (call.callee, .connected, reason, event)], into: &directives)
        directives.append(.connected(call))
    }

    private mutating func end(_ call: inout Call, _ end: Call.End, nowMs: Int64, into directives: inout [CallDirective]) {
        call.phase = .ended
        call.end = end
        call.endedAtMs = nowMs
        call.deadlineMs = nil
        for party in [call.caller, call.callee] where activeCall[party] == call.id { activeCall[party] = nil }
        notify(&call, Self.endNotices(call, end), into: &directives)
        if call.acceptedAtMs != nil {
            for (party, room) in call.liveRooms.sorted(by: { $0.key < $1.key }) {
                directives.append(.interaction(roomID: room, owner: party, callID: call.id, inCall: false))
            }
        }
        if end.reason != .busy { directives.append(.seal(channel: call.channel, parties: [call.caller, call.callee])) }
        directives.append(.ended(call))
    }

    /// What each party is told of an end: its state (prepared), CallAPI's reason and event.
    private static func endNotices(_ call: Call, _ end: Call.End) -> [(UInt32, CallState, CallStateReason, CallEvent)] {
        let by = end.by ?? call.caller
        switch end.reason {
        case .cancelled:
            return [(call.caller, .prepared, .localCancelled, .localCancelled),
                    (call.callee, .prepared, .remoteCancelled, .remoteCancelled)]
        case .rejected:
            return [(call.callee, .prepared, .localRejected, .localRejected),
                    (call.caller, .prepared, .remoteRejected, .remoteRejected)]
        case .hungUp:
            return [(by, .prepared, .localHangup, .localHangup), (call.other(than: by), .prepared, .remoteHangup, .remoteHangup)]
        case .timedOut:
            return [(call.caller, .prepared, .callingTimeout, .callingTimeout),
                    (call.callee, .prepared, .remoteCallingTimeout, .remoteCallingTimeout)]
        case .busy:
            // The callee hears nothing of a call that found it busy.
            return [(call.caller, .prepared, .remoteCallBusy, .remoteCallBusy)]
        case .partyLeft:
            return [(call.other(than: by), .prepared, .remoteHangup, .remoteHangup), (by, .prepared, .localHangup, .localLeft)]
        case .tooLong:
            return [(call.caller, .prepared, .remoteHangup, .remoteHangup), (call.callee, .prepared, .remoteHangup, .remoteHangup)]
        }
    }

    private func notify(_ call: inout Call, _ notices: [(UInt32, CallState, CallStateReason, CallEvent)],
                        into directives: inout [CallDirective]) {
        for (uid, state, reason, event) in notices {
            call.sequence &+= 1
            directives.append(.notify(CallNotice(callID: call.id, sequence: call.sequence, to: uid, state: state,
                                                 reason: reason, event: event, call: call)))
        }
    }

    /// An event without a state change: the party's state as the call's phase gives it.
    private func notifyEvent(_ call: inout Call, to uid: UInt32, _ event: CallEvent, into directives: inout [CallDirective]) {
        notify(&call, [(uid, call.state, .none, event)], into: &directives)
    }
}

extension Call {
    /// Each party's state in the call's current phase.
    public var state: CallState {
        switch phase {
        case .ringing: .calling
        case .connecting: .connecting
        case .connected: .connected
        case .ended: .prepared
        }
    }
}
