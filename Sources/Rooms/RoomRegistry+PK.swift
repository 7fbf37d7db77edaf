import ShowroomWire

// PK between two rooms, at each room's owner coordinator. The rooms may have different owners, so
// every step that touches both goes through ``RoomPeerUpdateRequest``s (the ReplicatedOwnership
// module's two-key protocol): an invitation is held by both rooms (offered to the invited room's
// owner before it is announced); a start is an intent written on the accepting room, then a commit
// on the other room, then the commit here; an end, a withdrawal or an abort reaches the other room
// as an idempotent update. The room whose owner got the decision (the accept) coordinates: intents
// are locks, and a commit never waits for anything, so two starts touching a room never deadlock
// (the later one is refused as busy).

extension RoomRegistry {
    // MARK: - Invite

    /// The owner of `request.roomID` invites the owner of `request.peerRoomID`.
    ///
    /// If the peer room invited this one already, this accepts that invitation (one PK, never
    /// two). Otherwise the invitation is stored here (unannounced) and ``InteractionOutcome/offer``
    /// must go to the peer room's owner; its answer goes to
    /// ``pkOfferAnswered(roomID:invitationID:result:nowMs:)``.
    ///
    /// - Throws: `INVALID_ARGUMENT`, `ROOM_NOT_FOUND`, `ROOM_CLOSED`, `NOT_ROOM_OWNER`, `ROOM_BUSY`
    ///   (in a PK, call, co-hosting or PK start), `REQUEST_PENDING` (an invitation is out already).
    public mutating func pkInvite(_ request: RoomPkInviteRequest, nowMs: Int64,
                                  using generator: inout some RandomNumberGenerator) throws(ShowroomError) -> InteractionOutcome {
        let room = try ownedOpenRoom(request.roomID, uid: request.uid)
        try Names.validateRoomID(request.peerRoomID)
        guard request.peerRoomID != room.roomID else {
            throw .invalidArgument("room \(room.roomID) cannot invite itself; name another room's id as peer_room_id")
        }
        guard request.durationS <= Self.maxPkDurationS else {
            throw .invalidArgument("duration_s is \(request.durationS); a PK lasts at most \(Self.maxPkDurationS) s (0 = until stopped)")
        }
        if case .UNRECOGNIZED(let mode) = request.mediaMode {
            throw .invalidArgument("media_mode \(mode) is not one of forward (0), subscribe (1)")
        }
        try requireIdle(room, for: "a PK")
        if let theirs = room.pending.first(where: { $0.kind == .pkInvitation && $0.fromRoomID == request.peerRoomID }) {
            // The peer invited us first: inviting back accepts.
            return try beginPK(room, invitation: theirs, nowMs: nowMs)
        }
        if let ours = room.pending.first(where: { $0.kind == .pkInvitation && $0.fromRoomID == room.roomID }) {
            throw ShowroomError(.requestPending,
                "room \(room.roomID) has invitation \(ours.id) out to room \(ours.toRoomID); cancel it or wait for its answer (it expires at \(ours.expiresAtMs))")
        }
        var invitation = Self.pendingRequest(
            .pkInvitation, id: Self.newInteractionID("pk-", using: &generator), in: room, from: room.ownerUid,
            to: request.peerRoomID, 0, userName: room.ownerName, nowMs: nowMs, lifetimeMs: settings.invitationExpiryMs)
        invitation.durationS = request.durationS
        invitation.mediaMode = request.mediaMode
        var stored = room
        stored.pending.append(invitation)
        var outcome = InteractionOutcome()
        outcome.changes.append(store(stored, nowMs: nowMs))
        outcome.offer = RoomPeerUpdateRequest.with {
            $0.op = .offer
            $0.roomID = request.peerRoomID
            $0.request = invitation
            $0.event = .pkInvited
            $0.byUid = request.uid
        }
        outcome.request = invitation
        return outcome
    }

    /// The invited room's owner answered an offer: accepted (the invitation is announced here),
    /// refused (it is dropped here and the refusal thrown for the client), or glare (the peer
    /// invited this room at the same time: the room with the lower id starts the PK with its own
    /// invitation; the other waits for that commit).
    public mutating func pkOfferAnswered(roomID: String, invitationID: String,
                                         result: Result<RoomPeerUpdateResponse, ShowroomError>,
                                         nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        guard var room = rooms[roomID], let index = room.pending.firstIndex(where: { $0.id == invitationID }) else {
            // Both invited each other and the peer's commit came first: the PK runs already.
            if let room = rooms[roomID], room.interaction.kind == .pk { return InteractionOutcome() }
            throw ShowroomError(.interactionNotFound, "invitation \(invitationID) of room \(roomID) is gone (answered, cancelled or expired)")
        }
        var outcome = InteractionOutcome()
        switch result {
        case .failure(let error):
            let invitation = room.pending.remove(at: index)
            outcome.changes.append(store(room, nowMs: nowMs))
            if error.code == .unavailable || error.code == .deadlineExceeded {
                // The offer may have arrived: make sure the peer drops it.
                outcome.peerUpdates.append(Self.peerUpdate(.withdraw, for: invitation, from: roomID, event: .pkCancelled))
            }
            throw ShowroomError(error.code, "room \(roomID) could not invite: \(error.message)")
        case .success(let answer):
            room.pending[index].toUid = answer.room.ownerUid
            room.pending[index].toChannel = answer.room.channel
            let invitation = room.pending[index]
            outcome.request = invitation
            if answer.glare {
                // Both invited each other. The lower id coordinates with its own invitation; the
                // higher keeps its invitation until that commit supersedes it.
                put(room)
                if roomID < invitation.toRoomID {
                    let started = try beginPK(room, invitation: invitation, nowMs: nowMs)
                    outcome.append(started)
                    outcome.request = invitation
                } else {
                    outcome.changes.append(store(room, nowMs: nowMs))
                }
                return outcome
            }
            outcome.changes.append(record(room, event: .pkInvited, id: invitation.id, request: invitation,
                                          by: invitation.fromUid, nowMs: nowMs))
            return outcome
        }
    }

    // MARK: - Answer (accept, reject, cancel)

    /// The invited owner accepts or rejects an invitation, or the inviting owner cancels it.
    ///
    /// An accept writes the intent here and returns the commit to ask of the inviting room's owner
    /// (``InteractionOutcome/commit``); its answer goes to
    /// ``pkCommitAnswered(roomID:pkID:committed:refusal:nowMs:)``.
    ///
    /// - Throws: `INTERACTION_NOT_FOUND` for an invitation that is not (or no longer) here;
    ///   `INTERACTION_NOT_ALLOWED` for accepting one's own invitation or cancelling another's;
    ///   `ROOM_BUSY` for accepting while busy; the room errors.
    public mutating func pkAnswer(_ request: RoomPkAnswerRequest, nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        var room = try ownedOpenRoom(request.roomID, uid: request.uid)
        try Self.validateInteractionID(request.invitationID, field: "invitation_id")
        guard let index = room.pending.firstIndex(where: { $0.id == request.invitationID && $0.kind == .pkInvitation }),
              room.pending[index].expiresAtMs > nowMs
        else {
            throw ShowroomError(.interactionNotFound,
                "room \(room.roomID) holds no open PK invitation \(request.invitationID): it was answered, cancelled or expired")
        }
        let invitation = room.pending[index]
        let sent = invitation.fromRoomID == room.roomID
        var outcome = InteractionOutcome()
        if request.cancel {
            guard sent else {
                throw ShowroomError(.interactionNotAllowed,
                    "invitation \(invitation.id) was sent by room \(invitation.fromRoomID); the invited room rejects it (accept false) instead of cancelling")
            }
            room.pending.remove(at: index)
            outcome.changes.append(record(room, event: .pkCancelled, id: invitation.id, request: invitation, reason: .stopped,
                                          by: request.uid, nowMs: nowMs))
            outcome.peerUpdates.append(Self.peerUpdate(.withdraw, for: invitation, from: room.roomID, event: .pkCancelled,
                                                       reason: .stopped, by: request.uid))
            return outcome
        }
        guard !sent else {
            throw ShowroomError(.interactionNotAllowed,
                "invitation \(invitation.id) was sent by this room; room \(invitation.toRoomID)'s owner answers it (cancel it with cancel set)")
        }
        guard request.accept else {
            room.pending.remove(at: index)
            outcome.changes.append(record(room, event: .pkRejected, id: invitation.id, request: invitation, by: request.uid, nowMs: nowMs))
            outcome.peerUpdates.append(Self.peerUpdate(.withdraw, for: invitation, from: room.roomID, event: .pkRejected, by: request.uid))
            return outcome
        }
        try requireIdle(room, for: "accepting a PK")
        return try beginPK(room, invitation: invitation, nowMs: nowMs)
    }

    /// Two-key step 1: writes the intent of the PK `invitation` names on `room` and returns the
    /// commit to ask of the other room's owner.
    mutating func beginPK(_ room: RoomRoom, invitation: RoomRoomPendingRequest, nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        try requireIdle(room, for: "a PK")
        let fromHere = invitation.fromRoomID == room.roomID
        var ours = RoomRoomInteraction()
        ours.kind = .pk
        ours.id = invitation.id
        ours.sinceMs = nowMs
        ours.peerRoomID = fromHere ? invitation.toRoomID : invitation.fromRoomID
        ours.peerUid = fromHere ? invitation.toUid : invitation.fromUid
        ours.peerChannel = fromHere ? invitation.toChannel : invitation.fromChannel
        // Overflow-safe: the duration is at most maxPkDurationS.
        ours.endsAtMs = invitation.durationS == 0 ? 0 : nowMs + Int64(invitation.durationS) * 1000
        ours.mediaMode = invitation.mediaMode
        var theirs = ours
        theirs.peerRoomID = room.roomID
        theirs.peerUid = room.ownerUid
        theirs.peerChannel = room.channel

        var stored = room
        stored.pkIntent = ours
        stored.pkIntentExpiresAtMs = nowMs + settings.pkIntentExpiryMs
        var outcome = InteractionOutcome()
        outcome.changes.append(store(stored, nowMs: nowMs))
        outcome.commit = RoomPeerUpdateRequest.with {
            $0.op = .commit
            $0.roomID = ours.peerRoomID
            $0.request = invitation
            $0.interaction = theirs
            $0.event = .pkStarted
        }
        outcome.request = invitation
        return outcome
    }

    /// Two-key step 3: the other room's owner answered the commit. Committed: the PK starts here
    /// (PK_ACCEPTED, PK_STARTED; the room's other requests are dropped). Refused: the intent is
    /// dropped and the refusal thrown for the client. An intent dropped already (expired) gets an
    /// abort to the other room instead.
    public mutating func pkCommitAnswered(roomID: String, pkID: String, committed: Bool, refusal: RoomPeerUpdateResponse,
                                          nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        var outcome = InteractionOutcome()
        guard var room = rooms[roomID], room.hasPkIntent, room.pkIntent.id == pkID else {
            if committed, let room = rooms[roomID], !(room.interaction.kind == .pk && room.interaction.id == pkID) {
                outcome.peerUpdates.append(RoomPeerUpdateRequest.with {
                    $0.op = .abort
                    $0.roomID = refusal.room.roomID
                    $0.interaction.id = pkID
                })
            }
            if let room = rooms[roomID], room.interaction.kind == .pk, room.interaction.id == pkID { return outcome }
            throw ShowroomError(.interactionNotFound, "the start of PK \(pkID) in room \(roomID) timed out; invite again")
        }
        let pk = room.pkIntent
        room.clearPkIntent()
        room.pkIntentExpiresAtMs = 0
        let invitation = room.pending.first { $0.id == pkID }
        guard committed, room.state == .open else {
            room.pending.removeAll { $0.id == pkID && refusal.refusalCode == UInt32(ShowroomError.Code.interactionNotFound.rawValue) }
            outcome.changes.append(store(room, nowMs: nowMs))
            if committed {
                outcome.peerUpdates.append(RoomPeerUpdateRequest.with {
                    $0.op = .abort
                    $0.roomID = pk.peerRoomID
                    $0.interaction = pk
                })
            }
            let code = ShowroomError.Code(rawValue: Int(refusal.refusalCode)) ?? .roomBusy
            throw ShowroomError(code == .unspecified ? .roomBusy : code,
                "room \(pk.peerRoomID) did not start the PK: \(refusal.refusal.isEmpty ? "it is busy" : refusal.refusal)")
        }
        room.pending.removeAll { $0.id == pkID }
        room.interaction = pk
        room.matchWaitingUntilMs = 0
        put(room)
        if let invitation {
            outcome.changes.append(record(room, event: .pkAccepted, id: pkID, request: invitation,
                                          by: invitation.fromRoomID == roomID ? invitation.toUid : room.ownerUid, nowMs: nowMs))
        }
        outcome.append(dropPending(in: roomID, reason: .superseded, nowMs: nowMs))
        outcome.changes.append(record(rooms[roomID] ?? room, event: .pkStarted, id: pkID, interaction: pk, nowMs: nowMs))
        return outcome
    }

    // MARK: - Stop

    /// Either owner ends the PK it names; the other room's owner hears it (PK_ENDED, STOPPED).
    ///
    /// - Throws: `INTERACTION_NOT_FOUND` when the room is not in that PK (a stale id); the room errors.
    public mutating func pkStop(_ request: RoomPkStopRequest, nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        let room = try ownedOpenRoom(request.roomID, uid: request.uid)
        try Self.validateInteractionID(request.pkID, field: "pk_id")
        guard room.interaction.kind == .pk, room.interaction.id == request.pkID else {
            throw ShowroomError(.interactionNotFound,
                "room \(room.roomID) is not in PK \(request.pkID)\(room.interaction.kind == .pk ? " (it is in PK \(room.interaction.id))" : ""); nothing was stopped")
        }
        return endPK(room, reason: .stopped, by: request.uid, notifyPeer: true, nowMs: nowMs)
    }

    /// Ends the room's PK with `reason`; the peer's owner gets an END unless it told us.
    private mutating func endPK(_ room: RoomRoom, reason: RoomInteractionEndReason, by: UInt32, notifyPeer: Bool,
                                nowMs: Int64) -> InteractionOutcome {
        var room = room
        let pk = room.interaction
        room.interaction = RoomRoomInteraction()
        var outcome = InteractionOutcome()
        outcome.changes.append(record(room, event: .pkEnded, id: pk.id, interaction: pk, reason: reason, by: by, nowMs: nowMs))
        if notifyPeer {
            outcome.peerUpdates.append(RoomPeerUpdateRequest.with {
                $0.op = .end
                $0.roomID = pk.peerRoomID
                $0.interaction = pk
                $0.reason = reason == .roomClosed ? .peerRoomClosed : reason
                $0.byUid = by
            })
        }
        return outcome
    }

    // MARK: - Updates from the other room's owner

    /// Applies an update from the owner of the room on the other side of a PK or an invitation.
    /// Every op is idempotent.
    ///
    /// - Returns: The outcome and the answer for the sender.
    /// - Throws: For OFFER, the refusal (`ROOM_NOT_FOUND`, `ROOM_CLOSED`, `ROOM_BUSY`) travels as
    ///   the answer's error; `INVALID_ARGUMENT` for a malformed update.
    public mutating func peerUpdate(_ update: RoomPeerUpdateRequest, nowMs: Int64) throws(ShowroomError) -> (InteractionOutcome, RoomPeerUpdateResponse) {
        var outcome = InteractionOutcome()
        var answer = RoomPeerUpdateResponse()
        switch update.op {
        case .offer:
            var room = try openRoom(update.roomID)
            let invitation = update.request
            guard invitation.kind == .pkInvitation, invitation.toRoomID == room.roomID, !invitation.id.isEmpty,
                  invitation.fromRoomID != room.roomID else {
                throw .invalidArgument("a PK offer names an invitation to this room from another")
            }
            answer.room = room
            if room.pending.contains(where: { $0.id == invitation.id }) { return (outcome, answer) }
            if room.pending.contains(where: { $0.kind == .pkInvitation && $0.fromRoomID == room.roomID && $0.toRoomID == invitation.fromRoomID }) {
                answer.glare = true
                return (outcome, answer)
            }
            try requireIdle(room, for: "a PK")
            var held = invitation
            held.toUid = room.ownerUid
            held.toChannel = room.channel
            // A newer invitation from the same room replaces an older one (it has one out at a time).
            room.pending.removeAll { $0.kind == .pkInvitation && $0.fromRoomID == invitation.fromRoomID }
            room.pending.append(held)
            outcome.changes.append(record(room, event: .pkInvited, id: held.id, request: held, by: held.fromUid, nowMs: nowMs))
            answer.room = rooms[room.roomID] ?? room
        case .withdraw:
            guard var room = rooms[update.roomID], let index = room.pending.firstIndex(where: { $0.id == update.request.id }) else {
                return (outcome, answer)
            }
            let request = room.pending.remove(at: index)
            let type: RoomInteractionEventType = [.pkRejected, .pkCancelled, .pkExpired].contains(update.event) ? update.event : .pkCancelled
            outcome.changes.append(record(room, event: type, id: request.id, request: request, reason: update.reason,
                                          by: update.byUid, nowMs: nowMs))
        case .commit:
            answer = commit(update, into: &outcome, nowMs: nowMs)
        case .abort:
            guard var room = rooms[update.roomID] else { return (outcome, answer) }
            if room.hasPkIntent, room.pkIntent.id == update.interaction.id {
                room.clearPkIntent()
                room.pkIntentExpiresAtMs = 0
                outcome.changes.append(store(room, nowMs: nowMs))
            } else if room.interaction.kind == .pk, room.interaction.id == update.interaction.id {
                outcome = endPK(room, reason: .unspecified, by: 0, notifyPeer: false, nowMs: nowMs)
            }
        case .end:
            guard let room = rooms[update.roomID], room.state == .open, room.interaction.kind == .pk,
                  room.interaction.id == update.interaction.id else { return (outcome, answer) }
            outcome = endPK(room, reason: update.reason, by: update.byUid, notifyPeer: false, nowMs: nowMs)
        case .matchEnqueue:
            outcome.peerUpdates = try enqueueMatch(update, nowMs: nowMs)
        case .matchDequeue:
            matchQueue[update.request.fromRoomID] = nil
        case .matched:
            outcome = try startMatched(update, nowMs: nowMs)
        case .check:
            answer.committed = rooms[update.roomID].map { room in
                room.state == .open && !update.interaction.id.isEmpty
                    && ((room.interaction.kind == .pk && room.interaction.id == update.interaction.id)
                        || (room.hasPkIntent && room.pkIntent.id == update.interaction.id))
            } ?? false
        case .unspecified, .UNRECOGNIZED:
            throw .invalidArgument("peer update op \(update.op) is not one of offer, withdraw, commit, abort, end, match, check")
        }
        return (outcome, answer)
    }

    /// Two-key step 2 at the other room: starts the PK if the room is open, idle (or starting this
    /// very PK) and holds the invitation, or invited the coordinating room at the same time.
    private mutating func commit(_ update: RoomPeerUpdateRequest, into outcome: inout InteractionOutcome, nowMs: Int64) -> RoomPeerUpdateResponse {
        var answer = RoomPeerUpdateResponse()
        func refuse(_ code: ShowroomError.Code, _ why: String) -> RoomPeerUpdateResponse {
            answer.committed = false
            answer.refusalCode = UInt32(code.rawValue)
            answer.refusal = why
            return answer
        }
        let pk = update.interaction
        guard var room = rooms[update.roomID] else { return refuse(.roomNotFound, "room \(update.roomID) does not exist") }
        answer.room = room
        guard pk.kind == .pk, !pk.id.isEmpty, !pk.peerRoomID.isEmpty else {
            return refuse(.invalidArgument, "a commit names a PK with its id and the coordinating room")
        }
        if room.interaction.kind == .pk, room.interaction.id == pk.id {
            answer.committed = true
            return answer
        }
        guard room.state == .open else { return refuse(.roomClosed, "room \(room.roomID) is closed") }
        do {
            try requireIdle(room, for: "a PK")
        } catch {
            return refuse(.roomBusy, error.message)
        }
        let holds = room.pending.contains { $0.id == pk.id && $0.kind == .pkInvitation }
        let crossed = room.pending.first { $0.kind == .pkInvitation && $0.fromRoomID == room.roomID && $0.toRoomID == pk.peerRoomID }
        // A random match: the room still waits for one.
        let matched = update.request.kind == .unspecified && room.matchWaitingUntilMs > nowMs
        guard holds || crossed != nil || matched else {
            return refuse(.interactionNotFound, "room \(room.roomID) holds no invitation \(pk.id) (it was cancelled, rejected or expired)")
        }
        let invitation = room.pending.first { $0.id == pk.id } ?? update.request
        room.pending.removeAll { $0.id == pk.id || $0.id == crossed?.id }
        room.interaction = pk
        room.matchWaitingUntilMs = 0
        put(room)
        outcome.changes.append(record(room, event: .pkAccepted, id: pk.id, request: invitation, by: invitation.toUid, nowMs: nowMs))
        outcome.append(dropPending(in: room.roomID, reason: .superseded, nowMs: nowMs))
        outcome.changes.append(record(rooms[room.roomID] ?? room, event: .pkStarted, id: pk.id, interaction: pk, nowMs: nowMs))
        answer.committed = true
        answer.room = rooms[room.roomID] ?? room
        return answer
    }

    // MARK: - Time

    /// Expires the rooms' pending requests, ends PKs whose duration ran out, drops PK intents past
    /// their expiry (aborting them at the other room) and ends random-match waits. Only for rooms
    /// `owns` says this coordinator owns, so that each step happens once.
    public mutating func tickInteractions(nowMs: Int64, owns: (String) -> Bool = { _ in true }) -> InteractionOutcome {
        var outcome = InteractionOutcome()
        for roomID in rooms.keys.sorted() where owns(roomID) {
            guard var room = rooms[roomID], room.state == .open else { continue }
            for request in room.pending where request.expiresAtMs <= nowMs {
                room.pending.removeAll { $0.id == request.id }
                let type: RoomInteractionEventType = request.kind == .pkInvitation ? .pkExpired : .cohostExpired
                outcome.changes.append(record(room, event: type, id: request.id, request: request, nowMs: nowMs))
                room = rooms[roomID] ?? room
            }
            if room.hasPkIntent, room.pkIntentExpiresAtMs <= nowMs {
                let pk = room.pkIntent
                room.clearPkIntent()
                room.pkIntentExpiresAtMs = 0
                outcome.changes.append(store(room, nowMs: nowMs))
                outcome.peerUpdates.append(RoomPeerUpdateRequest.with {
                    $0.op = .abort
                    $0.roomID = pk.peerRoomID
                    $0.interaction = pk
                })
                room = rooms[roomID] ?? room
            }
            if room.interaction.kind == .pk, room.interaction.endsAtMs != 0, room.interaction.endsAtMs <= nowMs {
                outcome.append(endPK(room, reason: .durationEnded, by: 0, notifyPeer: true, nowMs: nowMs))
                room = rooms[roomID] ?? room
            }
            if room.matchWaitingUntilMs != 0, room.matchWaitingUntilMs <= nowMs {
                room.matchWaitingUntilMs = 0
                outcome.changes.append(record(room, event: .pkMatchExpired, id: room.roomID, nowMs: nowMs))
            }
        }
        return outcome
    }

    /// The checks of the PKs of rooms `owns` says are this coordinator's to write, begun before
    /// `begunBefore`: each asks the peer room's owner whether its room is in the PK too
    /// (``pkCheckAnswered(roomID:pkID:inPK:nowMs:)`` takes the answer).
    public func pkChecks(begunBefore: Int64, owns: (String) -> Bool) -> [(roomID: String, check: RoomPeerUpdateRequest)] {
        rooms.values.filter { $0.state == .open && $0.interaction.kind == .pk && $0.interaction.sinceMs < begunBefore && owns($0.roomID) }
            .sorted { $0.roomID < $1.roomID }.map { room in
                (room.roomID, RoomPeerUpdateRequest.with {
                    $0.op = .check
                    $0.roomID = room.interaction.peerRoomID
                    $0.interaction = room.interaction
                })
            }
    }

    /// The peer's owner answered a check of PK `pkID` of `roomID`: a room whose peer is not in
    /// the PK any more (its end never arrived) ends its own side, telling nobody.
    public mutating func pkCheckAnswered(roomID: String, pkID: String, inPK: Bool, nowMs: Int64) -> InteractionOutcome {
        guard !inPK, let room = rooms[roomID], room.state == .open, room.interaction.kind == .pk,
              room.interaction.id == pkID else { return InteractionOutcome() }
        return endPK(room, reason: .unspecified, by: 0, notifyPeer: false, nowMs: nowMs)
    }

    /// The PK intents this coordinator holds for rooms `owns` says it owns, to ask their commit
    /// again (a successor that took a room over finds its predecessor's intent).
    public func pkIntents(begunBefore: Int64 = .max, owns: (String) -> Bool) -> [RoomPeerUpdateRequest] {
        rooms.values.filter { $0.hasPkIntent && $0.pkIntent.sinceMs <= begunBefore && $0.state == .open && owns($0.roomID) }.sorted { $0.roomID < $1.roomID }.map { room in
            var theirs = room.pkIntent
            theirs.peerRoomID = room.roomID
            theirs.peerUid = room.ownerUid
            theirs.peerChannel = room.channel
            return RoomPeerUpdateRequest.with {
                $0.op = .commit
                $0.roomID = room.pkIntent.peerRoomID
                $0.interaction = theirs
                $0.request = room.pending.first { $0.id == room.pkIntent.id } ?? RoomRoomPendingRequest()
                $0.event = .pkStarted
            }
        }
    }
}
