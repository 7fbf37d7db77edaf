import NodeRuntime
import Rooms
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

// PK and co-host requests at the room's owner coordinator, and the steps between two rooms'
// owners (ROOM_PEER_UPDATE). The registry decides; this carries its outcomes out: persist, publish
// and replicate the changes, offer and commit at the other room's owner (waiting for the answer
// before answering the client), and deliver the other updates until the other owner has them.

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
            /// Decodes the body, checks the actor's token, and applies it to the machine.records.registry.
            func act<Body: RoomActorRequest>(_: Body.Type, _ step: (inout RoomRegistry, Body) throws -> InteractionOutcome)
                throws(ShowroomError) -> (String, InteractionOutcome) {
                let body = try request.decodeBody(Body.self)
                try verifyMember(body.token, uid: body.uid, roomID: body.roomID, nowMs: now)
                let before = machine.records.registry.room(body.roomID)
                do {
                    return (body.roomID, try step(&machine.records.registry, body))
                } catch {
                    replicateIfChanged(body.roomID, from: before)
                    throw error as? ShowroomError ?? .internal("\(request.kind) failed: \(error)")
                }
            }
            let (roomID, outcome): (String, InteractionOutcome)
            switch request.kind {
            case .roomPkInvite: (roomID, outcome) = try act(RoomPkInviteRequest.self) { [self] in try $0.pkInvite($1, nowMs: now, using: &random) }
            case .roomPkAnswer: (roomID, outcome) = try act(RoomPkAnswerRequest.self) { try $0.pkAnswer($1, nowMs: now) }
            case .roomPkStop: (roomID, outcome) = try act(RoomPkStopRequest.self) { try $0.pkStop($1, nowMs: now) }
            case .roomPkMatch: (roomID, outcome) = try act(RoomPkMatchRequest.self) { try $0.pkMatch($1, nowMs: now) }
            case .roomCohostApply:
                (roomID, outcome) = try act(RoomCoHostApplyRequest.self) { [self] in try $0.coHostApply($1, nowMs: now, using: &random) }
            case .roomCohostInvite:
                (roomID, outcome) = try act(RoomCoHostInviteRequest.self) { [self] in try $0.coHostInvite($1, nowMs: now, using: &random) }
            case .roomCohostAnswer:
                (roomID, outcome) = try act(RoomCoHostAnswerRequest.self) { [self] in try $0.coHostAnswer($1, nowMs: now, using: &random) }
            case .roomCohostStop: (roomID, outcome) = try act(RoomCoHostStopRequest.self) { try $0.coHostStop($1, nowMs: now) }
            default: throw ShowroomError.unknownKind("\(request.kind) is not a PK or co-host request")
            }
            let made = outcome.request
            carryOut(outcome, roomID: roomID) { [self] result in
                switch result {
                case .success:
                    var answer = RoomInteractionResponse()
                    answer.room = machine.records.registry.room(roomID) ?? RoomRoom()
                    // As the room holds it now (an invitation learns the invited room's owner).
                    if let made { answer.request = answer.room.pending.first { $0.id == made.id } ?? made }
                    respond(.success(answer))
                case .failure(let error):
                    respond(.failure(error))
                }
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

    /// Carries `outcome` out for `roomID`: writes its changes (answering after the successor has
    /// them), delivers its peer updates, and runs its offer or commit at the other room's owner,
    /// feeding the answer back to the registry, until nothing is left; `done` gets the first
    /// refusal on the way.
    func carryOut(_ outcome: InteractionOutcome, roomID: String, done: @escaping (Result<Void, ShowroomError>) -> Void) {
        for update in outcome.peerUpdates {
            // Queueing for a match is repeated every tick while the room waits: one try is enough.
            if update.op == .matchEnqueue { askPeer(update) { _ in } } else { deliverPeerUpdate(update) }
        }
        apply(outcome.changes, replicate: true, then: { [self] in
            if let offer = outcome.offer {
                askPeer(offer) { [self] result in
                    let before = machine.records.registry.room(roomID)
                    let next = Result { () throws(ShowroomError) in
                        try machine.records.registry.pkOfferAnswered(roomID: roomID, invitationID: offer.request.id, result: result, nowMs: nowMs)
                    }
                    continueWith(next, roomID: roomID, before: before, done: done)
                }
            } else if let commit = outcome.commit {
                askPeer(commit) { [self] result in
                    let answer = (try? result.get()) ?? RoomPeerUpdateResponse.with {
                        $0.refusal = "its coordinator did not answer; try again"
                        $0.refusalCode = UInt32(WireErrorCode.unavailable.rawValue)
                    }
                    if case .failure = result {
                        // Unknown whether it committed: the intent stays, the tick asks again
                        // until it commits or expires (then aborts).
                        return done(.failure(.unavailable("room \(commit.roomID)'s coordinator did not answer the PK start; it is retried until \(settingsIntentSeconds) s have passed")))
                    }
                    let before = machine.records.registry.room(roomID)
                    let next = Result { () throws(ShowroomError) in
                        try machine.records.registry.pkCommitAnswered(roomID: roomID, pkID: commit.interaction.id, committed: answer.committed,
                                                      refusal: answer, nowMs: nowMs)
                    }
                    continueWith(next, roomID: roomID, before: before, done: done)
                }
            } else {
                done(.success(()))
            }
        })
    }

    private var settingsIntentSeconds: Int64 { machine.records.registry.settings.pkIntentExpiryMs / 1000 }

    private func continueWith(_ next: Result<InteractionOutcome, ShowroomError>, roomID: String, before: RoomRoom?,
                              done: @escaping (Result<Void, ShowroomError>) -> Void) {
        switch next {
        case .success(let outcome):
            carryOut(outcome, roomID: roomID, done: done)
        case .failure(let error):
            replicateIfChanged(roomID, from: before)
            done(.failure(error))
        }
    }

    /// A refusal that still changed the room (a dropped intent or invitation): the room as it is
    /// now is persisted and sent to its successor like any write, so the two hold the same record.
    private func replicateIfChanged(_ roomID: String, from before: RoomRoom?) {
        guard let room = machine.records.registry.room(roomID), room != before else { return }
        apply([RoomChange(room: room)], replicate: true)
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
        do {
            let (outcome, answer) = try machine.records.registry.peerUpdate(update, nowMs: nowMs)
            carryOut(outcome, roomID: update.roomID) { _ in completion(.success(answer)) }
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

    /// The interaction duties of the tick: expiries, PK durations, intents past their expiry, the
    /// peer updates closing rooms left, and asking again the commits of intents this coordinator
    /// holds (one it took over from a lost owner).
    func tickInteractions(nowMs now: Int64, writes: (String) -> Bool) {
        let outcome = machine.records.registry.tickInteractions(nowMs: now, owns: writes)
        for update in machine.records.registry.takePeerUpdates() { deliverPeerUpdate(update) }
        carryOut(outcome, roomID: "") { _ in }
        send(machine.tickStages())
        for update in machine.records.registry.matchEnqueues(nowMs: now, owns: writes) { askPeer(update) { _ in } }
        // Intents begun a second ago or more: a fresh one's commit is on its way.
        for commit in machine.records.registry.pkIntents(begunBefore: now - 1_000, owns: writes) {
            let roomID = commit.interaction.peerRoomID
            var outcome = InteractionOutcome()
            outcome.commit = commit
            carryOut(outcome, roomID: roomID) { _ in }
        }
        checkPKs(nowMs: now, writes: writes)
        deliveries.retryDue()
    }

    /// Every few seconds, each PK of a room this coordinator writes is checked at the peer room's
    /// owner; a peer that is not in it any more (its END was lost with a coordinator that died)
    /// ends this side too. No answer: asked again next time.
    private func checkPKs(nowMs now: Int64, writes: (String) -> Bool) {
        for (roomID, check) in machine.pkChecksDue(nowMs: now, writes: writes) {
            askPeer(check) { [self] result in
                guard case .success(let answer) = result else { return }
                let outcome = machine.records.registry.pkCheckAnswered(roomID: roomID, pkID: check.interaction.id,
                                                                       inPK: answer.committed, nowMs: nowMs)
                carryOut(outcome, roomID: roomID) { _ in }
            }
        }
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
