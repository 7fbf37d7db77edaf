import NodeRuntime
import Rooms
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

// PK and co-host requests at the room's owner coordinator, and the steps between two rooms'
// owners (ROOM_PEER_UPDATE). The machine decides each step (``InteractionPlan``); this carries the
// plans out: sends the peer updates, writes the changes, asks the other room's owner and hands its
// answer back to the machine.

extension CoordinatorShell {
    /// The PK and co-host request kinds clients send.
    static let interactionKinds: [WireMessageKind] = [
        .roomPkInvite, .roomPkAnswer, .roomPkStop, .roomPkMatch,
        .roomCohostApply, .roomCohostInvite, .roomCohostAnswer, .roomCohostStop,
    ]

    /// The room an interaction request or peer update is about.
    func interactionRoomID(of request: WireEnvelope) throws(ShowroomError) -> String {
        guard request.kind != .roomPeerUpdate else { return try request.decodeBody(RoomPeerUpdateRequest.self).roomID }
        func roomID<Body: RoomActorRequest>(_: Body.Type) throws(ShowroomError) -> String { try request.decodeBody(Body.self).roomID }
        return try roomID(Self.actorRequestType(of: request.kind))
    }

    /// The body type of an interaction request kind.
    private static func actorRequestType(of kind: WireMessageKind) throws(ShowroomError) -> any RoomActorRequest.Type {
        switch kind {
        case .roomPkInvite: RoomPkInviteRequest.self
        case .roomPkAnswer: RoomPkAnswerRequest.self
        case .roomPkStop: RoomPkStopRequest.self
        case .roomPkMatch: RoomPkMatchRequest.self
        case .roomCohostApply: RoomCoHostApplyRequest.self
        case .roomCohostInvite: RoomCoHostInviteRequest.self
        case .roomCohostAnswer: RoomCoHostAnswerRequest.self
        case .roomCohostStop: RoomCoHostStopRequest.self
        default: throw .unknownKind("\(kind) is not a PK or co-host request")
        }
    }

    /// Serves an interaction request or peer update at the room's owner.
    func serveInteraction(_ request: WireEnvelope, _ respond: Node.Responder) {
        let now = nowMs
        do throws(ShowroomError) {
            if request.kind == .roomPeerUpdate {
                return servePeerUpdate(try request.decodeBody(RoomPeerUpdateRequest.self)) { respond($0.outcome) }
            }
            /// Decodes the body, checks the actor's token, and has the machine take the step.
            func act<Body: RoomActorRequest>(_: Body.Type, _ step: (inout RoomRegistry, Body) throws -> InteractionOutcome)
                throws(ShowroomError) -> (String, InteractionPlan) {
                let body = try request.decodeBody(Body.self)
                try verifyMember(body.token, uid: body.uid, roomID: body.roomID, nowMs: now)
                return (body.roomID, machine.interact(in: body.roomID) { registry throws(ShowroomError) in
                    do {
                        return try step(&registry, body)
                    } catch {
                        throw error as? ShowroomError ?? .internal("\(request.kind) failed: \(error)")
                    }
                })
            }
            let (roomID, plan): (String, InteractionPlan)
            switch request.kind {
            case .roomPkInvite: (roomID, plan) = try act(RoomPkInviteRequest.self) { [self] in try $0.pkInvite($1, nowMs: now, using: &random) }
            case .roomPkAnswer: (roomID, plan) = try act(RoomPkAnswerRequest.self) { try $0.pkAnswer($1, nowMs: now) }
            case .roomPkStop: (roomID, plan) = try act(RoomPkStopRequest.self) { try $0.pkStop($1, nowMs: now) }
            case .roomPkMatch: (roomID, plan) = try act(RoomPkMatchRequest.self) { try $0.pkMatch($1, nowMs: now) }
            case .roomCohostApply:
                (roomID, plan) = try act(RoomCoHostApplyRequest.self) { [self] in try $0.coHostApply($1, nowMs: now, using: &random) }
            case .roomCohostInvite:
                (roomID, plan) = try act(RoomCoHostInviteRequest.self) { [self] in try $0.coHostInvite($1, nowMs: now, using: &random) }
            case .roomCohostAnswer:
                (roomID, plan) = try act(RoomCoHostAnswerRequest.self) { [self] in try $0.coHostAnswer($1, nowMs: now, using: &random) }
            case .roomCohostStop: (roomID, plan) = try act(RoomCoHostStopRequest.self) { try $0.coHostStop($1, nowMs: now) }
            default: throw ShowroomError.unknownKind("\(request.kind) is not a PK or co-host request")
            }
            let made = plan.request
            carryOut(plan) { [self] result in
                respond(result.map { machine.interactionAnswer(roomID: roomID, made: made) }.outcome)
            }
        } catch {
            respond(.failure(error))
        }
    }

    /// Checks that `token` is `uid`'s token for the room's channel (join privilege), so that nobody
    /// acts for another user.
    private func verifyMember(_ token: String, uid: UInt32, roomID: String, nowMs: Int64) throws(ShowroomError) {
        guard uid != 0 else { throw .invalidArgument("uid is 0; act with the user's uid (1 – 4294967295)") }
        // An unknown room is refused by the registry with its own error.
        guard let channel = machine.records.registry.room(roomID)?.channel else { return }
        guard let appID = configuration.appID, let certificate = configuration.appCertificate else {
            throw .unavailable(
                "coordinator \(selfID) has no app id and certificate configured, so it cannot check the tokens PK and co-host requests carry; set appID and appCertificate")
        }
        guard !token.isEmpty else {
            throw ShowroomError(.tokenMalformed, "PK and co-host requests carry the uid's token for the room's channel '\(channel)'")
        }
        do {
            _ = try TokenVerifier(appID: appID, appCertificate: certificate).verify(token, channel: channel, uid: uid,
                                                                                  now: UInt32(clamping: nowMs / 1000))
        } catch {
            throw error.showroomError
        }
    }

    /// Carries `plan` out: sends its peer updates, writes its changes (answering after the
    /// successor has them), asks its question of the other room's owner and carries out the
    /// machine's next step with the answer, until nothing is left; `done` gets the refusal on the
    /// way, if any.
    func carryOut(_ plan: InteractionPlan, done: @escaping (Result<Void, ShowroomError>) -> Void) {
        for send in plan.sends {
            switch send {
            case .once(let update): askPeer(update) { _ in }
            case .deliver(let update): deliverPeerUpdate(update)
            }
        }
        switch plan.next {
        case .done:
            apply(plan.changes, replicate: true, then: { done(.success(())) })
        case .refused(let error):
            apply(plan.changes, replicate: true)
            done(.failure(error))
        case .ask(let question):
            apply(plan.changes, replicate: true, then: { [self] in
                askPeer(question.update) { [self] result in
                    carryOut(machine.peerAnswered(question, result: result, nowMs: nowMs), done: done)
                }
            })
        }
    }

    /// Sends a peer update to its room's owner (served here when that is this coordinator) and
    /// returns the answer.
    private func askPeer(_ update: RoomPeerUpdateRequest, completion: @escaping (Result<RoomPeerUpdateResponse, ShowroomError>) -> Void) {
        let owner = ownership.owner(of: update.roomID)
        guard owner != selfID, let endpoint = clusterEndpoint(of: owner) else {
            return servePeerUpdate(update, completion: completion)
        }
        node.send(.roomPeerUpdate, body: update, to: endpoint, timeout: Self.peerTimeout) { result in
            completion(Result { () throws(ShowroomError) in
                let answer = try result.get()
                if let failure = answer.failure { throw failure }
                return try answer.decodeBody(RoomPeerUpdateResponse.self)
            })
        }
    }

    /// Applies a peer update to a room this coordinator owns; answers once the change is written.
    private func servePeerUpdate(_ update: RoomPeerUpdateRequest,
                                 completion: @escaping (Result<RoomPeerUpdateResponse, ShowroomError>) -> Void) {
        do throws(ShowroomError) {
            let (plan, answer) = try machine.peerUpdate(update, nowMs: nowMs)
            carryOut(plan) { _ in completion(.success(answer)) }
        } catch {
            completion(.failure(error))
        }
    }

    /// Delivers an idempotent peer update (withdraw, end, abort) until the room's owner has it.
    func deliverPeerUpdate(_ update: RoomPeerUpdateRequest) {
        deliveries.deliver(.roomPeerUpdate, key: update.roomID, what: "\(update.op) of \(update.interaction.id.isEmpty ? update.request.id : update.interaction.id) for room \(update.roomID)") {
            update
        }
    }

    /// The interaction duties of the tick (``CoordinatorNode/tickInteractions(nowMs:writes:)``),
    /// the stages' refresh, and the questions to other rooms' owners the machine has due: match
    /// queueings, commits of intents, PK checks; then the deliveries due again.
    func tickInteractions(nowMs now: Int64, writes: (String) -> Bool) {
        carryOut(machine.tickInteractions(nowMs: now, writes: writes)) { _ in }
        send(machine.tickStages())
        carryOut(machine.matchEnqueues(nowMs: now, writes: writes)) { _ in }
        for plan in machine.pkIntentRetries(nowMs: now, writes: writes) { carryOut(plan) { _ in } }
        for plan in machine.pkChecksDue(nowMs: now, writes: writes) { carryOut(plan) { _ in } }
        deliveries.retryDue()
    }

    // MARK: - The stage at the edges

    /// Sends `stages` (``CoordinatorNode/stages(of:onlyChanged:)``) to every alive edge.
    func send(_ stages: [RoomStage]) {
        guard !stages.isEmpty else { return }
        let request = RoomEdgeStageRequest.with { $0.stages = stages }
        for edge in alive(.edge) where !edge.metadata.clusterEndpoint.isEmpty {
            node.send(.edgeStage, body: request, to: edge.metadata.clusterEndpoint, timeout: Self.peerTimeout) { [logger] result in
                if let refusal = result.refusal {
                    // The periodic refresh sends it again.
                    logger.debug("edge \(edge.nodeID) did not take \(stages.count) stages: \(refusal)")
                }
            }
        }
    }
}
