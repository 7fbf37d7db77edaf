// Pure: no I/O, no clock, no randomness of its own.
import ShowroomWire

/// One step of a PK or co-host flow for the shell to carry out: the peer updates to send, the room
/// changes to write (persist, publish, replicate), and what follows them. The shell sends and
/// writes; what an answer from another room's owner leads to is decided by
/// ``CoordinatorNode/peerAnswered(_:result:nowMs:)``, which returns the next step.
public struct InteractionPlan: Sendable, Equatable {
    /// How a peer update goes to its room's owner.
    public enum PeerSend: Sendable, Equatable {
        /// Delivered until the owner has it: withdrawals, ends, aborts are idempotent.
        case deliver(RoomPeerUpdateRequest)
        /// Sent once, its answer not waited for: a match's queueing is repeated every tick while
        /// the room waits.
        case once(RoomPeerUpdateRequest)
    }

    /// What follows the writes.
    public enum Next: Sendable, Equatable {
        /// Done once the changes are written (a write answers after the successor holds it).
        case done
        /// Once the changes are written, `question` goes to the other room's owner; the flow
        /// waits for its answer.
        case ask(PeerQuestion)
        /// Refused at once with the error; the changes (what the refusal still changed) are
        /// written all the same, so that owner and successor hold the same record.
        case refused(ShowroomError)
    }

    /// The peer updates, in order; sent before the changes are written.
    public var sends: [PeerSend] = []
    /// The room changes, in order.
    public var changes: [RoomChange] = []
    /// What follows.
    public var next: Next = .done
    /// The request the step made (an invitation, an application), for the client's answer.
    public var request: RoomRoomPendingRequest?

    /// Nothing to do.
    public init() {}

    /// The plan that carries out `outcome` for room `roomID`: its updates sent, its changes
    /// written, then its offer (first) or commit asked of the other room's owner.
    public init(_ outcome: InteractionOutcome, roomID: String) {
        // Queueing for a match is repeated every tick while the room waits: one try is enough.
        sends = outcome.peerUpdates.map { $0.op == .matchEnqueue ? .once($0) : .deliver($0) }
        changes = outcome.changes
        request = outcome.request
        if let offer = outcome.offer {
            next = .ask(PeerQuestion(step: .offer, roomID: roomID, update: offer))
        } else if let commit = outcome.commit {
            next = .ask(PeerQuestion(step: .commit, roomID: roomID, update: commit))
        }
    }
}

/// A question to another room's owner whose answer a flow waits for.
public struct PeerQuestion: Sendable, Equatable {
    /// Which step of the flow asks.
    public enum Step: Sendable, Equatable {
        /// A PK invitation offered to the invited room (``RoomRegistry/pkOfferAnswered(roomID:invitationID:result:nowMs:)``).
        case offer
        /// A PK start asked of the other room (``RoomRegistry/pkCommitAnswered(roomID:pkID:committed:refusal:nowMs:)``).
        case commit
        /// Whether the peer room is in the PK still (``RoomRegistry/pkCheckAnswered(roomID:pkID:inPK:nowMs:)``).
        case check
    }

    /// The step.
    public var step: Step
    /// The room whose flow waits for the answer.
    public var roomID: String
    /// The update asked, of the owner of `update.roomID`.
    public var update: RoomPeerUpdateRequest

    /// Step `step` of room `roomID`'s flow, asking `update`.
    public init(step: Step, roomID: String, update: RoomPeerUpdateRequest) {
        self.step = step
        self.roomID = roomID
        self.update = update
    }
}

extension CoordinatorNode {
    /// How long after a PK intent begins its commit is asked again by the tick: a fresh one's
    /// commit is on its way.
    public static let pkIntentRetryAfterMs: Int64 = 1_000

    /// A client's PK or co-host request at room `roomID`'s owner: `step` applied to the registry.
    /// A refusal that still changed the room (a dropped intent or invitation) writes the room as it
    /// is now.
    public mutating func interact(in roomID: String,
                                  _ step: (inout RoomRegistry) throws(ShowroomError) -> InteractionOutcome) -> InteractionPlan {
        let before = records.registry.room(roomID)
        do throws(ShowroomError) {
            return InteractionPlan(try step(&records.registry), roomID: roomID)
        } catch {
            return refusal(error, roomID: roomID, before: before)
        }
    }

    /// An update from another room's owner, applied to a room this coordinator owns
    /// (``RoomRegistry/peerUpdate(_:nowMs:)``): the plan, and the answer to send once it is
    /// carried out.
    public mutating func peerUpdate(_ update: RoomPeerUpdateRequest,
                                    nowMs: Int64) throws(ShowroomError) -> (plan: InteractionPlan, answer: RoomPeerUpdateResponse) {
        let (outcome, answer) = try records.registry.peerUpdate(update, nowMs: nowMs)
        return (InteractionPlan(outcome, roomID: update.roomID), answer)
    }

    /// The other room's owner answered `question`, or did not (`result` failed): the flow's next
    /// step. A commit not answered stays an intent, asked again by the tick until it commits or
    /// expires (then it aborts); a check not answered is asked again next time.
    public mutating func peerAnswered(_ question: PeerQuestion, result: Result<RoomPeerUpdateResponse, ShowroomError>,
                                      nowMs: Int64) -> InteractionPlan {
        let roomID = question.roomID
        let before = records.registry.room(roomID)
        do throws(ShowroomError) {
            switch (question.step, result) {
            case (.offer, _):
                return InteractionPlan(try records.registry.pkOfferAnswered(roomID: roomID, invitationID: question.update.request.id,
                                                                            result: result, nowMs: nowMs), roomID: roomID)
            case (.commit, .failure):
                var plan = InteractionPlan()
                plan.next = .refused(.unavailable(
                    "room \(question.update.roomID)'s coordinator did not answer the PK start; it is retried until \(records.registry.settings.pkIntentExpiryMs / 1000) s have passed"))
                return plan
            case (.commit, .success(let answer)):
                return InteractionPlan(try records.registry.pkCommitAnswered(roomID: roomID, pkID: question.update.interaction.id,
                                                                             committed: answer.committed, refusal: answer, nowMs: nowMs),
                                       roomID: roomID)
            case (.check, .failure):
                return InteractionPlan()
            case (.check, .success(let answer)):
                return InteractionPlan(records.registry.pkCheckAnswered(roomID: roomID, pkID: question.update.interaction.id,
                                                                        inPK: answer.committed, nowMs: nowMs), roomID: roomID)
            }
        } catch {
            return refusal(error, roomID: roomID, before: before)
        }
    }

    /// A flow of room `roomID` refused with `error`: the room is written if the refusal changed
    /// it since `before`.
    private func refusal(_ error: ShowroomError, roomID: String, before: RoomRoom?) -> InteractionPlan {
        var plan = InteractionPlan()
        plan.next = .refused(error)
        if let room = records.registry.room(roomID), room != before { plan.changes = [RoomChange(room: room)] }
        return plan
    }

    /// The answer to a client's PK or co-host request in room `roomID` once its flow is done: the
    /// room as held now, and the request it made as the room holds it now (an invitation learns
    /// the invited room's owner).
    public func interactionAnswer(roomID: String, made: RoomRoomPendingRequest?) -> RoomInteractionResponse {
        var answer = RoomInteractionResponse()
        answer.room = records.registry.room(roomID) ?? RoomRoom()
        if let made { answer.request = answer.room.pending.first { $0.id == made.id } ?? made }
        return answer
    }

    /// The tick's interaction duties in the rooms `writes` lets this coordinator write: expiries,
    /// PK durations, intents past their expiry, and the peer updates that closing rooms left.
    public mutating func tickInteractions(nowMs: Int64, writes: (String) -> Bool) -> InteractionPlan {
        let outcome = records.registry.tickInteractions(nowMs: nowMs, owns: writes)
        let closing = records.registry.takePeerUpdates().map(InteractionPlan.PeerSend.deliver)
        var plan = InteractionPlan(outcome, roomID: "")
        plan.sends = closing + plan.sends
        return plan
    }

    /// The tick's match queueings of the rooms `writes` lets this coordinator write that wait
    /// for a match, each sent once.
    public func matchEnqueues(nowMs: Int64, writes: (String) -> Bool) -> InteractionPlan {
        var plan = InteractionPlan()
        plan.sends = records.registry.matchEnqueues(nowMs: nowMs, owns: writes).map(InteractionPlan.PeerSend.once)
        return plan
    }

    /// The commits to ask again of the PK intents held for the rooms `writes` lets this
    /// coordinator write, begun ``pkIntentRetryAfterMs`` ago or more (one taken over from a lost
    /// owner, one whose commit was not answered).
    public func pkIntentRetries(nowMs: Int64, writes: (String) -> Bool) -> [InteractionPlan] {
        records.registry.pkIntents(begunBefore: nowMs - Self.pkIntentRetryAfterMs, owns: writes).map { commit in
            var plan = InteractionPlan()
            plan.next = .ask(PeerQuestion(step: .commit, roomID: commit.interaction.peerRoomID, update: commit))
            return plan
        }
    }
}
