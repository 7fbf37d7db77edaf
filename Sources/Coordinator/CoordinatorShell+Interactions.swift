import NodeRuntime
import Rooms
import ShowroomWire
import SwiftProtobuf

// The steps of PK and co-host flows between two rooms' owners (ROOM_PEER_UPDATE). The machine
// decides each step (``InteractionPlan``); this carries the plans out: sends the peer updates,
// writes the changes, asks the other room's owner and hands its answer back to the machine.

extension CoordinatorShell {
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
        tellEdges(.edgeStage, RoomEdgeStageRequest.with { $0.stages = stages }, what: "\(stages.count) stages")
    }

    /// Sends `body` to every alive edge. An edge that does not take it is only logged (`what`
    /// names it): the periodic refresh sends it again.
    func tellEdges(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, what: String) {
        for edge in alive(.edge) where !edge.metadata.clusterEndpoint.isEmpty {
            node.send(kind, body: body, to: edge.metadata.clusterEndpoint, timeout: Self.peerTimeout) { [logger] result in
                if let refusal = result.refusal { logger.debug("edge \(edge.nodeID) did not take \(what): \(refusal)") }
            }
        }
    }
}
