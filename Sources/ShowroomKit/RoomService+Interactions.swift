internal import ShowroomWire
internal import SwiftProtobuf

// PK and co-host requests. Each names the room, the acting uid and that uid's RTC token for the
// room's channel (the one it joins with): the coordinator checks it, so nobody acts for another
// user. Refusals: `ROOM_BUSY` (4010), `INTERACTION_NOT_FOUND` (4011, answered, cancelled, expired
// or ended: a stale id), `INTERACTION_NOT_ALLOWED` (4012), `NO_SEAT_FREE` (4013),
// `REQUEST_PENDING` (4014), `NOT_ROOM_OWNER` (4001), and the token codes (2000 – 2999).

extension RoomService {
    // MARK: - PK

    /// The host of `roomID` invites the host of `peerRoomID` to a PK. Both rooms must be open and
    /// idle, and a room has one invitation out at a time. If the peer invited this room already,
    /// this accepts that invitation (one PK, never two). The invitation expires on the server
    /// (15 s by default); both rooms hear every step as ``RoomEvent/interaction(_:)``.
    ///
    /// - Parameters:
    ///   - durationSeconds: How long the PK lasts by the server's clock; 0 until stopped.
    ///   - mediaMode: How audiences see the peer host.
    /// - Returns: The invitation (or the accepted one).
    public func invitePK(roomID: String, uid: UInt32, token: String, peerRoomID: String, durationSeconds: UInt32 = 0,
                         mediaMode: PK.MediaMode = .forward) async throws(ShowroomError) -> InteractionRequest {
        var request = RoomPkInviteRequest()
        request.peerRoomID = peerRoomID
        request.durationS = durationSeconds
        request.mediaMode = mediaMode.wire
        return InteractionRequest(try await interact(.roomPkInvite, request.acting(in: roomID, as: uid, token: token)).request)
    }

    /// The invited host accepts a PK invitation: the PK starts in both rooms, and both rooms' other
    /// invitations are cancelled. Of concurrent accepts the first wins; the others get `ROOM_BUSY`.
    ///
    /// - Returns: This room, in the PK.
    public func acceptPK(roomID: String, uid: UInt32, token: String, invitationID: String) async throws(ShowroomError) -> Room {
        try await answerPK(roomID: roomID, uid: uid, token: token, invitationID: invitationID, accept: true, cancel: false)
    }

    /// The invited host rejects a PK invitation; the inviting room hears it.
    public func rejectPK(roomID: String, uid: UInt32, token: String, invitationID: String) async throws(ShowroomError) -> Room {
        try await answerPK(roomID: roomID, uid: uid, token: token, invitationID: invitationID, accept: false, cancel: false)
    }

    /// The inviting host withdraws its invitation; the invited room hears it.
    public func cancelPKInvitation(roomID: String, uid: UInt32, token: String, invitationID: String) async throws(ShowroomError) -> Room {
        try await answerPK(roomID: roomID, uid: uid, token: token, invitationID: invitationID, accept: false, cancel: true)
    }

    /// Either host ends the PK it names (a stale id ends nothing: `INTERACTION_NOT_FOUND`).
    public func stopPK(roomID: String, uid: UInt32, token: String, pkID: String) async throws(ShowroomError) -> Room {
        var request = RoomPkStopRequest()
        request.pkID = pkID
        return Room(try await interact(.roomPkStop, request.acting(in: roomID, as: uid, token: token)).room)
    }

    /// The host asks for a random PK: the room waits (30 s by default) until the cluster pairs it
    /// with another waiting room, and the PK starts in both (``InteractionEvent/Kind/pkStarted``);
    /// alone, its wait expires (``InteractionEvent/Kind/pkMatchExpired``). `cancel` stops waiting.
    ///
    /// - Returns: This room, waiting (``Room/matchWaitingUntilMs``).
    public func matchPK(roomID: String, uid: UInt32, token: String, durationSeconds: UInt32 = 0,
                        cancel: Bool = false) async throws(ShowroomError) -> Room {
        var request = RoomPkMatchRequest()
        request.durationS = durationSeconds
        request.cancel = cancel
        return Room(try await interact(.roomPkMatch, request.acting(in: roomID, as: uid, token: token)).room)
    }

    private func answerPK(roomID: String, uid: UInt32, token: String, invitationID: String, accept: Bool,
                          cancel: Bool) async throws(ShowroomError) -> Room {
        var request = RoomPkAnswerRequest()
        request.invitationID = invitationID
        request.accept = accept
        request.cancel = cancel
        return Room(try await interact(.roomPkAnswer, request.acting(in: roomID, as: uid, token: token)).room)
    }

    // MARK: - Co-host

    /// An audience member of the room (joined through ``joinRoom(_:uid:userName:)``) asks for a
    /// seat; asking again returns the open application.
    public func applyForCoHosting(roomID: String, uid: UInt32, token: String, userName: String = "") async throws(ShowroomError) -> InteractionRequest {
        var request = RoomCoHostApplyRequest()
        request.userName = userName
        return InteractionRequest(try await interact(.roomCohostApply, request.acting(in: roomID, as: uid, token: token)).request)
    }

    /// Withdraws the uid's open application.
    public func cancelCoHostApplication(roomID: String, uid: UInt32, token: String) async throws(ShowroomError) -> Room {
        var request = RoomCoHostApplyRequest()
        request.cancel = true
        return Room(try await interact(.roomCohostApply, request.acting(in: roomID, as: uid, token: token)).room)
    }

    /// The host invites an audience member up.
    public func inviteCoHost(roomID: String, uid: UInt32, token: String, inviteeUid: UInt32) async throws(ShowroomError) -> InteractionRequest {
        var request = RoomCoHostInviteRequest()
        request.inviteeUid = inviteeUid
        return InteractionRequest(try await interact(.roomCohostInvite, request.acting(in: roomID, as: uid, token: token)).request)
    }

    /// The host withdraws a co-host invitation.
    public func cancelCoHostInvitation(roomID: String, uid: UInt32, token: String, invitationID: String) async throws(ShowroomError) -> Room {
        var request = RoomCoHostInviteRequest()
        request.cancel = true
        request.invitationID = invitationID
        return Room(try await interact(.roomCohostInvite, request.acting(in: roomID, as: uid, token: token)).room)
    }

    /// The one asked answers a co-host request: the host an application, the invited user an
    /// invitation. Accepting seats the user when a seat is free: the edges let it publish in the
    /// room's channel from then on (``ShowroomEngine/setClientRole(_:on:)`` to broadcaster).
    public func answerCoHostRequest(roomID: String, uid: UInt32, token: String, requestID: String, accept: Bool) async throws(ShowroomError) -> Room {
        var request = RoomCoHostAnswerRequest()
        request.requestID = requestID
        request.accept = accept
        return Room(try await interact(.roomCohostAnswer, request.acting(in: roomID, as: uid, token: token)).room)
    }

    /// The co-host or the host ends the seat it names; the edges stop the co-host's tracks at once.
    public func stopCoHosting(roomID: String, uid: UInt32, token: String, seatID: String) async throws(ShowroomError) -> Room {
        var request = RoomCoHostStopRequest()
        request.seatID = seatID
        return Room(try await interact(.roomCohostStop, request.acting(in: roomID, as: uid, token: token)).room)
    }

    private func interact(_ kind: WireMessageKind, _ body: some RoomActorRequest) async throws(ShowroomError) -> RoomInteractionResponse {
        try await client.request(kind, body: body, key: body.roomID, expecting: RoomInteractionResponse.self)
    }
}
