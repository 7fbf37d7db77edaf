import Rooms
import ShowroomWire
import XCTest

/// Rooms on several coordinators (one ``RoomRegistry`` each) with the shell's routing done by hand:
/// PK steps between rooms of different owners travel as peer updates, delivered at once unless a
/// test holds them to interleave.
struct PKWorld {
    var coordinators: [RoomRegistry]
    var ownerOf: [String: Int] = [:]
    var generator = SeededGenerator(seed: 42)
    var nowMs: Int64 = 1_700_000_000_000
    /// Every interaction event published, per room, in order.
    var events: [String: [RoomRoomInteractionEvent]] = [:]
    /// Peer updates held back (when `holdPeerUpdates`).
    var held: [RoomPeerUpdateRequest] = []
    var holdPeerUpdates = false

    init(coordinators: Int = 2, settings: RoomSettings = RoomSettings()) {
        self.coordinators = Array(repeating: RoomRegistry(settings: settings), count: coordinators)
    }

    /// Creates room `id` owned by uid `owner` on coordinator `on`, with the owner present.
    mutating func createRoom(_ id: String, owner: UInt32, on coordinator: Int, seats: UInt32 = 0) throws {
        var request = Requests.create(id: id, owner: owner)
        request.seats = seats
        _ = try coordinators[coordinator].create(request, nowMs: nowMs, using: &generator)
        _ = coordinators[coordinator].ownerPresence(channel: id, uid: owner, present: true, nowMs: nowMs)
        ownerOf[id] = coordinator
    }

    func room(_ id: String) -> RoomRoom? { ownerOf[id].flatMap { coordinators[$0].room(id) } }
    func types(_ id: String) -> [RoomInteractionEventType] { events[id, default: []].map(\.type) }

    mutating func record(_ outcome: InteractionOutcome) {
        for change in outcome.changes {
            if let event = change.event { events[change.room.roomID, default: []].append(event) }
        }
        for update in outcome.peerUpdates {
            if holdPeerUpdates {
                held.append(update)
            } else if update.op == .matched {
                // The lower room's owner starts the PK: its commit is carried out here.
                if let started = try? coordinators[ownerOf[update.roomID]!].peerUpdate(update, nowMs: nowMs).0 {
                    record(started)
                    if let commit = started.commit { try? finishCommit(commit, at: update.roomID) }
                }
            } else {
                _ = try? deliver(update)
            }
        }
    }

    /// Delivers one peer update to the owner of its room.
    @discardableResult
    mutating func deliver(_ update: RoomPeerUpdateRequest) throws(ShowroomError) -> RoomPeerUpdateResponse {
        // The match queue runs at coordinator 0.
        guard let coordinator = update.roomID == RoomRegistry.matchKey ? 0 : ownerOf[update.roomID] else {
            throw .roomNotFound("no room \(update.roomID)")
        }
        let (outcome, answer) = try coordinators[coordinator].peerUpdate(update, nowMs: nowMs)
        record(outcome)
        return answer
    }

    mutating func releaseHeld() {
        let updates = held
        held = []
        for update in updates { _ = try? deliver(update) }
    }

    /// Runs an invite to its end (offer, and a start when it turned into one).
    @discardableResult
    mutating func invite(_ from: String, _ to: String, uid: UInt32, durationS: UInt32 = 0) throws -> RoomRoomPendingRequest? {
        let outcome = try beginInvite(from, to, uid: uid, durationS: durationS)
        return try finish(outcome, at: from)
    }

    /// The first step of an invite, at the inviting room's owner.
    mutating func beginInvite(_ from: String, _ to: String, uid: UInt32, durationS: UInt32 = 0) throws -> InteractionOutcome {
        let request = RoomPkInviteRequest.with {
            $0.roomID = from
            $0.uid = uid
            $0.peerRoomID = to
            $0.durationS = durationS
        }
        let outcome = try coordinators[ownerOf[from]!].pkInvite(request, nowMs: nowMs, using: &generator)
        record(outcome)
        return outcome
    }

    /// Offers (and commits, where the answer asks) what `outcome` left to do for room `at`.
    mutating func finish(_ outcome: InteractionOutcome, at roomID: String) throws -> RoomRoomPendingRequest? {
        var outcome = outcome
        if let offer = outcome.offer {
            let result: Result<RoomPeerUpdateResponse, ShowroomError>
            do { result = .success(try deliver(offer)) } catch { result = .failure(error) }
            outcome = try coordinators[ownerOf[roomID]!].pkOfferAnswered(roomID: roomID, invitationID: offer.request.id,
                                                                         result: result, nowMs: nowMs)
            record(outcome)
        }
        if let commit = outcome.commit {
            try finishCommit(commit, at: roomID)
        }
        return outcome.request
    }

    mutating func finishCommit(_ commit: RoomPeerUpdateRequest, at roomID: String) throws {
        let answer = try deliver(commit)
        let done = try coordinators[ownerOf[roomID]!].pkCommitAnswered(roomID: roomID, pkID: commit.interaction.id,
                                                                       committed: answer.committed, refusal: answer, nowMs: nowMs)
        record(done)
    }

    /// The invited owner answers (accept or reject), or the inviting owner cancels.
    mutating func answer(_ roomID: String, uid: UInt32, invitation: String, accept: Bool = true, cancel: Bool = false) throws {
        let outcome = try beginAnswer(roomID, uid: uid, invitation: invitation, accept: accept, cancel: cancel)
        _ = try finish(outcome, at: roomID)
    }

    mutating func beginAnswer(_ roomID: String, uid: UInt32, invitation: String, accept: Bool = true,
                              cancel: Bool = false) throws -> InteractionOutcome {
        let request = RoomPkAnswerRequest.with {
            $0.roomID = roomID
            $0.uid = uid
            $0.invitationID = invitation
            $0.accept = accept
            $0.cancel = cancel
        }
        let outcome = try coordinators[ownerOf[roomID]!].pkAnswer(request, nowMs: nowMs)
        record(outcome)
        return outcome
    }

    /// The owner of `roomID` asks for a random match (or stops waiting); a start that follows is
    /// carried out to its end.
    mutating func match(_ roomID: String, uid: UInt32, cancel: Bool = false, durationS: UInt32 = 0) throws {
        let outcome = try coordinators[ownerOf[roomID]!].pkMatch(RoomPkMatchRequest.with {
            $0.roomID = roomID
            $0.uid = uid
            $0.cancel = cancel
            $0.durationS = durationS
        }, nowMs: nowMs)
        record(outcome)
    }

    mutating func stop(_ roomID: String, uid: UInt32, pk: String) throws {
        let outcome = try coordinators[ownerOf[roomID]!].pkStop(RoomPkStopRequest.with {
            $0.roomID = roomID
            $0.uid = uid
            $0.pkID = pk
        }, nowMs: nowMs)
        record(outcome)
    }

    /// Advances the clock and ticks every coordinator (interactions, then room lifetimes).
    mutating func advance(ms: Int64) {
        nowMs += ms
        for index in coordinators.indices {
            let owned = Set(ownerOf.filter { $0.value == index }.keys)
            let outcome = coordinators[index].tickInteractions(nowMs: nowMs) { owned.contains($0) }
            record(outcome)
            _ = coordinators[index].tick(nowMs: nowMs) { owned.contains($0) }
            var closing = InteractionOutcome()
            closing.peerUpdates = coordinators[index].takePeerUpdates()
            record(closing)
        }
    }

    mutating func close(_ roomID: String, uid: UInt32) throws {
        let index = ownerOf[roomID]!
        _ = try coordinators[index].close(Requests.close(roomID, uid: uid), byAdmin: false, nowMs: nowMs)
        var closing = InteractionOutcome()
        closing.peerUpdates = coordinators[index].takePeerUpdates()
        record(closing)
    }
}
