import Calls
import ShowroomWire

// The call-signal node's values as they travel: call infos, notices, call events and refusals.

extension SignalCallInfo {
    /// The call as a party sees it, held by `nodeID`; `token` (with the channel) while the call is
    /// on and the party is one of its own.
    init(_ call: Call, nodeID: String, token: String?) {
        self.init()
        callID = call.id
        caller = call.caller
        callee = call.callee
        type = SignalCallType(call.type)
        self.extension = call.extensionInfo
        startedAtMs = call.startedAtMs
        acceptedAtMs = call.acceptedAtMs ?? 0
        connectedAtMs = call.connectedAtMs ?? 0
        endedAtMs = call.endedAtMs ?? 0
        self.nodeID = nodeID
        if let end = call.end {
            endReason = end.reason.rawValue
            endedBy = end.by ?? 0
            endMessage = end.message
        }
        if let token {
            channel = call.channel
            self.token = token
        }
    }
}

extension SignalNotice {
    /// A notice as it travels, with the call as its party sees it.
    init(_ notice: CallNotice, call: SignalCallInfo) {
        self.init()
        callID = notice.callID
        sequence = notice.sequence
        to = notice.to
        state = UInt32(notice.state.rawValue)
        reason = UInt32(notice.reason.rawValue)
        event = UInt32(notice.event.rawValue)
        self.call = call
    }

    /// The notice telling party `uid` its call failed with its node (with a sequence above any the
    /// lost node could have sent), so no client stays stuck in calling, connecting or connected.
    /// Whether this notice tells a party that its call is lost with its node
    /// (``init(lostCallOf:_:)``): decided by the party's node, not by the call's owner.
    var tellsLostCall: Bool {
        sequence == 1 << 62 && state == UInt32(CallState.failed.rawValue) && call.endReason == "callSignalLost"
    }

    init(lostCallOf uid: UInt32, _ entry: UserRecord.InCall) {
        self.init()
        callID = entry.callID
        sequence = 1 << 62
        to = uid
        state = UInt32(CallState.failed.rawValue)
        reason = UInt32(CallStateReason.messageFailed.rawValue)
        event = UInt32(CallEvent.none.rawValue)
        call.callID = entry.callID
        call.nodeID = entry.owner
        call.endReason = "callSignalLost"
        call.endMessage = "call-signal node \(entry.owner), which held the call, is gone and no other node holds it"
    }
}

extension SignalCallNotification {
    /// A call event for business servers: `type` 201 started, 202 connected, 203 ended.
    init(_ type: UInt32, _ call: Call, nodeID: String, nowMs: Int64) {
        self.init()
        noticeID = "\(call.id)-\(type)"
        eventType = type
        notifyMs = nowMs
        callID = call.id
        caller = call.caller
        callee = call.callee
        self.type = SignalCallType(call.type)
        channel = call.channel
        startedAtMs = call.startedAtMs
        connectedAtMs = call.connectedAtMs ?? 0
        endedAtMs = call.endedAtMs ?? 0
        durationMs = call.connectedDurationMs
        endReason = call.end?.reason.rawValue ?? ""
        endedBy = call.end?.by ?? 0
        self.nodeID = nodeID
    }
}

extension SignalCallStatus {
    /// A call as the call list shows it, held by `nodeID`.
    init(_ call: Call, nodeID: String) {
        self.init()
        callID = call.id
        caller = call.caller
        callee = call.callee
        type = SignalCallType(call.type)
        phase = call.phase.rawValue
        channel = call.channel
        self.nodeID = nodeID
        startedAtMs = call.startedAtMs
        endReason = call.end?.reason.rawValue ?? ""
    }
}

extension SignalRingRequest {
    /// The ring of call `callID` on `channel` that `caller`'s dial makes.
    init(_ dial: SignalDialRequest, caller: UInt32, callID: String, channel: String) {
        self.init()
        self.callID = callID
        self.channel = channel
        self.caller = caller
        callee = dial.callee
        type = dial.type
        self.extension = dial.extension
        timeoutMs = dial.timeoutMs
        firstFrameWaitingDisabled = dial.firstFrameWaitingDisabled
        liveRoomID = dial.liveRoomID
    }
}

extension CallSignalNode.Ring {
    /// A ring from another node, checked for form: the channel must be the callee's private one,
    /// the live room a room id (the machine checks the rest).
    init(_ body: SignalRingRequest) throws(ShowroomError) {
        guard Names.callee(ofCallChannel: body.channel) == body.callee else {
            throw .invalidArgument("a ring names its caller, callee, call id and channel")
        }
        if !body.liveRoomID.isEmpty { try Names.validateRoomID(body.liveRoomID, field: "live_room_id") }
        self.init(callID: body.callID, channel: body.channel, caller: body.caller, callee: body.callee,
                  type: CallType(body.type), extensionInfo: body.extension,
                  timeoutMs: body.timeoutMs == 0 ? nil : Int64(body.timeoutMs),
                  waitsForFirstFrame: !body.firstFrameWaitingDisabled, liveRoom: body.liveRoomID)
    }
}

extension SignalPartyAction {
    /// Party `uid`'s request `kind` for call `callID`, as the call's owner gets it.
    init(_ kind: WireMessageKind, uid: UInt32, callID: String, reason: String = "", liveRoomID: String = "") {
        self.init()
        self.kind = UInt32(kind.rawValue)
        self.uid = uid
        self.callID = callID
        self.reason = reason
        self.liveRoomID = liveRoomID
    }
}

extension CallSignalNode.PartyRequest {
    /// The request a party action carries, checked for form.
    init(_ action: SignalPartyAction) throws(ShowroomError) {
        switch WireMessageKind(rawValue: Int(action.kind)) {
        case .callAccept:
            if !action.liveRoomID.isEmpty { try Names.validateRoomID(action.liveRoomID, field: "live_room_id") }
            self = .accept(liveRoom: action.liveRoomID)
        case .callCancel: self = .cancel
        case .callReject: self = .reject(reason: action.reason)
        case .callHangup: self = .hangup(reason: action.reason)
        case .callFirstFrame: self = .firstFrame
        case .callToken: self = .token
        case .callLogin: self = .signaling(.returned)
        case .callLogout: self = .signaling(.lost)
        default: throw ShowroomError.invalidArgument("party action kind \(action.kind) is not a call request")
        }
    }
}

extension SignalPartyCheckResponse {
    /// How a party's owner notes the party, as it travels.
    init(_ note: CallSignalShell.Machine.PartyNote) {
        self.init()
        switch note {
        case .inCall: self.note = .inCall
        case .free: self.note = .free
        case .inOtherCall(let other):
            self.note = .inOtherCall
            otherCallID = other
        case .unsure: self.note = .unsure
        }
    }

    /// The note it carries: a value this node does not know (a newer peer's) counts as unsure.
    var partyNote: CallSignalShell.Machine.PartyNote {
        switch note {
        case .inCall: .inCall
        case .free: .free
        case .inOtherCall: .inOtherCall(String(otherCallID.prefix(CallSignalShell.Machine.maxIDBytes)))
        case .unsure, .UNRECOGNIZED: .unsure
        }
    }
}

extension ShowroomError {
    /// A refusal of the call-signal machine as it travels.
    init<Notice, Random>(_ refusal: CallSignalNode<Notice, Random>.Refusal) {
        let code: ShowroomError.Code = switch refusal.code {
        case .invalidArgument: .invalidArgument
        case .notLoggedIn: .notLoggedIn
        case .callRateLimited: .callRateLimited
        case .callerInCall: .callerInCall
        case .calleeOffline: .calleeOffline
        case .unknownCall: .unknownCall
        case .notYourCall: .notYourCall
        case .stateMismatch: .callStateMismatch
        case .callEnded: .callEnded
        case .notOwner: .unavailable
        }
        self.init(code, refusal.message)
    }
}
