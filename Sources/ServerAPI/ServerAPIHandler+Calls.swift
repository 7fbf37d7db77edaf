import Ownership
import ShowroomWire

/// 1v1 calls: the calls the call-signal nodes hold (`CALL_LIST`), ending one at the node that
/// holds it as a hangup by its caller (`CALL_PARTY_ACTION`, the request a party's node sends for
/// the caller's own hangup), and presence (`CALL_PRESENCE`, passed to the uids' owners).
extension ServerAPIHandler {
    /// Every alive call-signal node's calls, and the nodes that did not answer.
    func calls() async throws(ShowroomError) -> (calls: [SignalCallStatus], unanswered: [String]) {
        let nodes = try await coordinator.alive(.callsignal)
        guard !nodes.isEmpty else { throw ShowroomError(.noCallSignal, "no call-signal node is alive; calls are unavailable") }
        var calls: [SignalCallStatus] = []
        var unanswered: [String] = []
        for node in nodes {
            do {
                calls += try await coordinator.request(.callList, SignalCallListRequest(), to: node.endpoint, expecting: SignalCallListResponse.self).calls
            } catch {
                unanswered.append(node.id)
            }
        }
        return (calls.sorted { $0.callID < $1.callID }, unanswered)
    }

    static func call(_ status: SignalCallStatus) -> Components.Schemas.Call {
        .init(callId: status.callID, caller: Int64(status.caller), callee: Int64(status.callee), _type: status.type == .audio ? .audio : .video,
              phase: status.phase, channel: status.channel, node: status.nodeID, startedAtMs: status.startedAtMs,
              endReason: status.endReason.isEmpty ? nil : status.endReason)
    }

    /// The call `id`, from the node that holds it.
    func call(_ id: String) async throws(ShowroomError) -> SignalCallStatus {
        guard let call = try await calls().calls.first(where: { $0.callID == id }) else {
            throw ShowroomError(.unknownCall, "no call-signal node holds call \(id.prefix(64)): it never existed, or ended over a minute ago")
        }
        return call
    }

    func listCalls(_ input: Operations.ListCalls.Input) async throws -> Operations.ListCalls.Output {
        let (calls, unanswered) = try await calls()
        return .ok(.init(body: .json(.init(calls: calls.map(Self.call), unansweredNodes: unanswered.isEmpty ? nil : unanswered))))
    }

    func getCall(_ input: Operations.GetCall.Input) async throws -> Operations.GetCall.Output {
        .ok(.init(body: .json(Self.call(try await call(input.path.callId)))))
    }

    func endCall(_ input: Operations.EndCall.Input) async throws -> Operations.EndCall.Output {
        let reason = input.query.reason ?? "ended by the business server"
        try Names.validateDisplayName(reason, field: "reason", allowEmpty: true)
        let current = try await call(input.path.callId)
        guard current.phase != "ended" else {
            throw ShowroomError(.callEnded, "call \(current.callID) has ended already (\(current.endReason))")
        }
        guard let node = try await coordinator.alive(.callsignal).first(where: { $0.id == current.nodeID }) else {
            throw ShowroomError.unavailable("call-signal node \(current.nodeID), which holds the call, is not reachable; retry in a moment")
        }
        var hangup = SignalPartyAction()
        hangup.kind = UInt32(WireMessageKind.callHangup.rawValue)
        hangup.uid = current.caller
        hangup.callID = current.callID
        hangup.reason = reason
        _ = try await coordinator.request(.callPartyAction, hangup, to: node.endpoint, expecting: SignalCallActionResponse.self)
        return .ok(.init(body: .json(Self.call(try await call(current.callID)))))
    }

    func getPresence(_ input: Operations.GetPresence.Input) async throws -> Operations.GetPresence.Output {
        guard (1...100).contains(input.query.uids.count) else { throw ShowroomError.invalidArgument("uids lists 1 to 100 uids, comma-separated") }
        var uids: [UInt32] = []
        for value in input.query.uids { uids.append(try Self.uid(value, field: "uids")) }
        var request = SignalPresenceRequest()
        request.uids = uids
        guard let node = try await coordinator.alive(.callsignal).first else {
            throw ShowroomError(.noCallSignal, "no call-signal node is alive; presence is unavailable")
        }
        let answer = try await coordinator.request(.callPresence, request, to: node.endpoint, expecting: SignalPresenceResponse.self)
        let users = answer.entries.map { entry -> Components.Schemas.PresenceList.UsersPayloadPayload in
            let state: Components.Schemas.PresenceList.UsersPayloadPayload.StatePayload
            switch entry.state {
            case .inCall: state = .inCall
            case .online: state = .online
            default: state = .offline
            }
            return .init(uid: Int64(entry.uid), state: state)
        }
        return .ok(.init(body: .json(.init(users: users))))
    }
}
