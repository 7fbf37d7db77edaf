import ShowroomWire

// Co-hosting: audience members on the room's stage, one per seat, granted by the owner. All of it
// happens in one room, at its owner coordinator; the stage that follows (``RoomRegistry/stage(of:)``)
// is what edges enforce.

extension RoomRegistry {
    /// An audience member applies for a seat (deduplicated: applying again returns the open
    /// application), or withdraws its application (`cancel`).
    ///
    /// - Throws: `INTERACTION_NOT_ALLOWED` for the owner, a co-host already seated, or a uid not in
    ///   the room's audience (join the room first); `ROOM_BUSY` while the room is in a PK or call;
    ///   `INTERACTION_NOT_FOUND` for cancelling no application; the room errors.
    public mutating func coHostApply(_ request: RoomCoHostApplyRequest, nowMs: Int64,
                                     using generator: inout some RandomNumberGenerator) throws(ShowroomError) -> InteractionOutcome {
        var room = try openRoom(request.roomID)
        try Names.validateDisplayName(request.userName, field: "user_name", allowEmpty: true)
        var outcome = InteractionOutcome()
        let open = room.pending.first { $0.kind == .cohostApplication && $0.fromUid == request.uid }
        if request.cancel {
            guard let open else {
                throw ShowroomError(.interactionNotFound, "uid \(request.uid) has no open application in room \(room.roomID)")
            }
            room.pending.removeAll { $0.id == open.id }
            outcome.changes.append(record(room, event: .cohostApplyCancelled, id: open.id, request: open, reason: .stopped,
                                          by: request.uid, nowMs: nowMs))
            return outcome
        }
        try requireAudience(room, uid: request.uid)
        try requireIdle(room, for: "co-hosting", allowingCoHost: true)
        if let open {
            outcome.request = open
            outcome.changes.append(RoomChange(room: room))
            return outcome
        }
        let application = Self.pendingRequest(
            .cohostApplication, id: Self.newInteractionID("ap-", using: &generator), in: room, from: request.uid,
            to: room.roomID, room.ownerUid, userName: request.userName, nowMs: nowMs, lifetimeMs: settings.applicationExpiryMs)
        room.pending.append(application)
        outcome.request = application
        outcome.changes.append(record(room, event: .cohostApplied, id: application.id, request: application, by: request.uid, nowMs: nowMs))
        return outcome
    }

    /// The owner invites an audience member up (deduplicated per invitee), or withdraws an
    /// invitation (`cancel`, naming it).
    ///
    /// - Throws: `NOT_ROOM_OWNER`; `INTERACTION_NOT_ALLOWED` for inviting the owner, a seated
    ///   co-host or a uid not in the audience; `ROOM_BUSY` in a PK or call; `INTERACTION_NOT_FOUND`.
    public mutating func coHostInvite(_ request: RoomCoHostInviteRequest, nowMs: Int64,
                                      using generator: inout some RandomNumberGenerator) throws(ShowroomError) -> InteractionOutcome {
        var room = try ownedOpenRoom(request.roomID, uid: request.uid)
        var outcome = InteractionOutcome()
        if request.cancel {
            try Self.validateInteractionID(request.invitationID, field: "invitation_id")
            guard let invitation = room.pending.first(where: { $0.id == request.invitationID && $0.kind == .cohostInvitation }) else {
                throw ShowroomError(.interactionNotFound, "room \(room.roomID) holds no open co-host invitation \(request.invitationID)")
            }
            room.pending.removeAll { $0.id == invitation.id }
            outcome.changes.append(record(room, event: .cohostInviteCancelled, id: invitation.id, request: invitation,
                                          reason: .stopped, by: request.uid, nowMs: nowMs))
            return outcome
        }
        try requireAudience(room, uid: request.inviteeUid)
        try requireIdle(room, for: "co-hosting", allowingCoHost: true)
        if let open = room.pending.first(where: { $0.kind == .cohostInvitation && $0.toUid == request.inviteeUid }) {
            outcome.request = open
            outcome.changes.append(RoomChange(room: room))
            return outcome
        }
        let invitation = Self.pendingRequest(
            .cohostInvitation, id: Self.newInteractionID("ci-", using: &generator), in: room, from: room.ownerUid,
            to: room.roomID, request.inviteeUid, userName: room.ownerName, nowMs: nowMs, lifetimeMs: settings.invitationExpiryMs)
        room.pending.append(invitation)
        outcome.request = invitation
        outcome.changes.append(record(room, event: .cohostInvited, id: invitation.id, request: invitation, by: request.uid, nowMs: nowMs))
        return outcome
    }

    /// The owner answers an application, or the invited user an invitation. Accepting seats the
    /// user (COHOST_ACCEPTED, COHOST_STARTED) when a seat is free and the room is not in a PK or
    /// call; the request goes either way.
    ///
    /// - Throws: `INTERACTION_NOT_FOUND` (answered, cancelled, expired); `INTERACTION_NOT_ALLOWED`
    ///   for anybody but the one asked; `NO_SEAT_FREE`; `ROOM_BUSY`; the room errors.
    public mutating func coHostAnswer(_ request: RoomCoHostAnswerRequest, nowMs: Int64,
                                      using generator: inout some RandomNumberGenerator) throws(ShowroomError) -> InteractionOutcome {
        var room = try openRoom(request.roomID)
        try Self.validateInteractionID(request.requestID, field: "request_id")
        guard let asked = room.pending.first(where: {
            $0.id == request.requestID && ($0.kind == .cohostApplication || $0.kind == .cohostInvitation)
        }), asked.expiresAtMs > nowMs else {
            throw ShowroomError(.interactionNotFound,
                "room \(room.roomID) holds no open co-host request \(request.requestID): it was answered, cancelled or expired")
        }
        guard request.uid == asked.toUid else {
            throw ShowroomError(.interactionNotAllowed,
                "co-host request \(asked.id) is answered by uid \(asked.toUid) (\(asked.kind == .cohostApplication ? "the room's owner" : "the invited user")), not uid \(request.uid)")
        }
        let candidate = asked.kind == .cohostApplication ? asked.fromUid : asked.toUid
        var outcome = InteractionOutcome()
        guard request.accept else {
            room.pending.removeAll { $0.id == asked.id }
            outcome.changes.append(record(room, event: .cohostRejected, id: asked.id, request: asked, by: request.uid, nowMs: nowMs))
            return outcome
        }
        try requireIdle(room, for: "co-hosting", allowingCoHost: true)
        try requireAudience(room, uid: candidate)
        let seats = room.interaction.kind == .cohost ? room.interaction.seats : []
        guard seats.count < Int(max(1, room.seats)) else {
            throw ShowroomError(.noSeatFree,
                "all \(max(1, room.seats)) co-host seats of room \(room.roomID) are taken; a co-host must step down first")
        }
        room.pending.removeAll { $0.id == asked.id || (($0.kind == .cohostApplication && $0.fromUid == candidate)
                                                       || ($0.kind == .cohostInvitation && $0.toUid == candidate)) }
        outcome.changes.append(record(room, event: .cohostAccepted, id: asked.id, request: asked, by: request.uid, nowMs: nowMs))
        var seat = RoomCoHostSeat()
        seat.uid = candidate
        seat.userName = asked.kind == .cohostApplication ? asked.userName : ""
        seat.id = Self.newInteractionID("co-", using: &generator)
        seat.sinceMs = nowMs
        room = rooms[room.roomID] ?? room
        if room.interaction.kind != .cohost {
            room.interaction = RoomRoomInteraction()
            room.interaction.kind = .cohost
            room.interaction.sinceMs = nowMs
        }
        room.interaction.seats.append(seat)
        outcome.changes.append(record(room, event: .cohostStarted, id: seat.id, interaction: room.interaction, by: request.uid,
                                      uid: candidate, nowMs: nowMs))
        return outcome
    }

    /// The co-host or the owner ends the seat it names (COHOST_STOPPED, STOPPED).
    ///
    /// - Throws: `INTERACTION_NOT_FOUND` for a seat that is not (or no longer) taken — a late stop
    ///   never ends a later co-host; `INTERACTION_NOT_ALLOWED` for anybody else; the room errors.
    public mutating func coHostStop(_ request: RoomCoHostStopRequest, nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        let room = try openRoom(request.roomID)
        try Self.validateInteractionID(request.seatID, field: "seat_id")
        guard room.interaction.kind == .cohost, let seat = room.interaction.seats.first(where: { $0.id == request.seatID }) else {
            throw ShowroomError(.interactionNotFound,
                "room \(room.roomID) has no co-host seat \(request.seatID) (it ended already); nothing was stopped")
        }
        guard request.uid == seat.uid || request.uid == room.ownerUid else {
            throw ShowroomError(.interactionNotAllowed,
                "seat \(seat.id) is ended by its co-host (uid \(seat.uid)) or the room's owner (uid \(room.ownerUid)), not uid \(request.uid)")
        }
        return endSeat(room, seat: seat, reason: .stopped, by: request.uid, nowMs: nowMs)
    }

    /// `uid` left the room (LeaveRoom, or quit its channel): its seat ends (LEFT_ROOM) and its open
    /// applications and invitations go.
    public mutating func coHostLeft(roomID: String, uid: UInt32, nowMs: Int64) -> InteractionOutcome {
        var outcome = InteractionOutcome()
        guard var room = rooms[roomID], room.state == .open, uid != room.ownerUid else { return outcome }
        let mine = room.pending.filter {
            ($0.kind == .cohostApplication && $0.fromUid == uid) || ($0.kind == .cohostInvitation && $0.toUid == uid)
        }
        for request in mine {
            room.pending.removeAll { $0.id == request.id }
            let type: RoomInteractionEventType = request.kind == .cohostApplication ? .cohostApplyCancelled : .cohostInviteCancelled
            outcome.changes.append(record(room, event: type, id: request.id, request: request, reason: .leftRoom, by: uid, nowMs: nowMs))
            room = rooms[roomID] ?? room
        }
        if room.interaction.kind == .cohost, let seat = room.interaction.seats.first(where: { $0.uid == uid }) {
            outcome.append(endSeat(room, seat: seat, reason: .leftRoom, by: uid, nowMs: nowMs))
        }
        return outcome
    }

    /// Co-hosts that quit (or were kicked from) a room's channel, from the channel's activities.
    public mutating func coHostsLeft(after activities: [RoomChannelActivity], nowMs: Int64) -> InteractionOutcome {
        var outcome = InteractionOutcome()
        for activity in activities where activity.type == .broadcasterLeft || activity.type == .audienceLeft {
            guard activity.reason == .quit || activity.reason == .kicked else { continue }
            for roomID in roomIDs(inChannel: activity.channel).sorted() {
                outcome.append(coHostLeft(roomID: roomID, uid: activity.uid, nowMs: nowMs))
            }
        }
        return outcome
    }

    private mutating func endSeat(_ room: RoomRoom, seat: RoomCoHostSeat, reason: RoomInteractionEndReason, by: UInt32,
                                  nowMs: Int64) -> InteractionOutcome {
        var room = room
        room.interaction.seats.removeAll { $0.id == seat.id }
        if room.interaction.seats.isEmpty { room.interaction = RoomRoomInteraction() }
        var outcome = InteractionOutcome()
        outcome.changes.append(record(room, event: .cohostStopped, id: seat.id, interaction: room.interaction, reason: reason,
                                      by: by, uid: seat.uid, nowMs: nowMs))
        return outcome
    }

    private func requireAudience(_ room: RoomRoom, uid: UInt32) throws(ShowroomError) {
        guard uid != room.ownerUid else {
            throw ShowroomError(.interactionNotAllowed, "uid \(uid) owns room \(room.roomID) and is on its stage already")
        }
        if room.interaction.kind == .cohost, room.interaction.seats.contains(where: { $0.uid == uid }) {
            throw ShowroomError(.interactionNotAllowed, "uid \(uid) is a co-host of room \(room.roomID) already")
        }
        guard room.audienceUids.contains(uid) else {
            throw ShowroomError(.interactionNotAllowed,
                "uid \(uid) is not in room \(room.roomID)'s audience; it joins the room (JoinRoom) before co-hosting")
        }
    }
}
