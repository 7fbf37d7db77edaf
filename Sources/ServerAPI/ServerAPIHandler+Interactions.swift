import Foundation
import ShowroomAuth
import ShowroomWire

/// PK and co-host on the hosts' behalf: the requests the hosts' (and the co-host's) apps make,
/// with tokens this server mints for them, through the coordinator's client handling — so the
/// rooms, their viewers and the edges see exactly what they see when the apps ask.
extension ServerAPIHandler {
    /// A token for `uid` in `channel`, as the business server's token service would mint one
    /// (a publisher's, for a few minutes: it is used at once).
    func token(channel: String, uid: UInt32) throws(ShowroomError) -> String {
        do {
            return try RTCTokenBuilder.buildToken(
                appID: appID, appCertificate: appCertificate, channelName: channel, uid: uid, role: .publisher,
                tokenExpire: 300, issueTs: UInt32(clamping: nowMs() / 1000))
        } catch {
            throw .internal("could not mint a token for uid \(uid) in \(channel): \(error)")
        }
    }

    /// The room, as its owner coordinator has it.
    func room(_ id: String) async throws(ShowroomError) -> RoomRoom {
        var request = RoomGetRoomRequest()
        request.roomID = id
        return try await ask(.roomGet, request, expecting: RoomGetRoomResponse.self).room
    }

    func startPK(_ input: Operations.StartPK.Input) async throws -> Operations.StartPK.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the PK as JSON") }
        if let duration = body.durationS, !(1...3600).contains(duration) {
            throw ShowroomError.invalidArgument("duration_s must be 1 to 3600 (leave it out for a PK until stopped), not \(duration)")
        }
        guard body.peerRoomId != input.path.roomId else {
            throw ShowroomError(.interactionNotAllowed, "room \(body.peerRoomId) cannot PK itself; name another room as peer_room_id")
        }
        let inviter = try await room(input.path.roomId)
        // The path's room is there: a peer that is not is a conflict with what exists (409),
        // not a 404 of the resource the path names.
        let invitee: RoomRoom
        do {
            invitee = try await room(body.peerRoomId)
        } catch {
            guard error.code == .roomNotFound else { throw error }
            throw APIRefusal(status: .conflict, error: error)
        }
        var invite = RoomPkInviteRequest()
        invite.roomID = inviter.roomID
        invite.uid = inviter.ownerUid
        invite.token = try token(channel: inviter.channel, uid: inviter.ownerUid)
        invite.peerRoomID = invitee.roomID
        invite.durationS = UInt32(body.durationS ?? 0)
        let invited = try await ask(.roomPkInvite, invite, expecting: RoomInteractionResponse.self)
        var accept = RoomPkAnswerRequest()
        accept.roomID = invitee.roomID
        accept.uid = invitee.ownerUid
        accept.token = try token(channel: invitee.channel, uid: invitee.ownerUid)
        accept.invitationID = invited.request.id
        accept.accept = true
        do {
            _ = try await ask(.roomPkAnswer, accept, expecting: RoomInteractionResponse.self)
        } catch {
            // Not left pending: the inviting host takes its invitation back.
            var cancel = RoomPkAnswerRequest()
            cancel.roomID = inviter.roomID
            cancel.uid = inviter.ownerUid
            cancel.token = invite.token
            cancel.invitationID = invited.request.id
            cancel.cancel = true
            _ = try? await ask(.roomPkAnswer, cancel, expecting: RoomInteractionResponse.self)
            throw error
        }
        return .ok(.init(body: .json(Self.room(try await room(inviter.roomID)))))
    }

    func stopPK(_ input: Operations.StopPK.Input) async throws -> Operations.StopPK.Output {
        let current = try await room(input.path.roomId)
        guard current.interaction.kind == .pk else {
            // The room is there; its state is what does not allow it (409, not 404).
            throw ShowroomError(.interactionNotAllowed, "room \(current.roomID) is in no PK")
        }
        var stop = RoomPkStopRequest()
        stop.roomID = current.roomID
        stop.uid = current.ownerUid
        stop.token = try token(channel: current.channel, uid: current.ownerUid)
        stop.pkID = current.interaction.id
        let answer = try await ask(.roomPkStop, stop, expecting: RoomInteractionResponse.self)
        return .ok(.init(body: .json(Self.room(answer.room))))
    }

    func seatCoHost(_ input: Operations.SeatCoHost.Input) async throws -> Operations.SeatCoHost.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the co-host as JSON") }
        let uid = try Self.uid(body.uid, field: "uid")
        let current = try await room(input.path.roomId)
        var invite = RoomCoHostInviteRequest()
        invite.roomID = current.roomID
        invite.uid = current.ownerUid
        invite.token = try token(channel: current.channel, uid: current.ownerUid)
        invite.inviteeUid = uid
        let invited = try await ask(.roomCohostInvite, invite, expecting: RoomInteractionResponse.self)
        var accept = RoomCoHostAnswerRequest()
        accept.roomID = current.roomID
        accept.uid = uid
        accept.token = try token(channel: current.channel, uid: uid)
        accept.requestID = invited.request.id
        accept.accept = true
        do {
            let answer = try await ask(.roomCohostAnswer, accept, expecting: RoomInteractionResponse.self)
            return .ok(.init(body: .json(Self.room(answer.room))))
        } catch {
            var cancel = invite
            cancel.cancel = true
            cancel.invitationID = invited.request.id
            _ = try? await ask(.roomCohostInvite, cancel, expecting: RoomInteractionResponse.self)
            throw error
        }
    }

    func unseatCoHost(_ input: Operations.UnseatCoHost.Input) async throws -> Operations.UnseatCoHost.Output {
        let uid = try Self.uid(input.path.uid, field: "uid")
        let current = try await room(input.path.roomId)
        guard current.interaction.kind == .cohost, let seat = current.interaction.seats.first(where: { $0.uid == uid }) else {
            throw ShowroomError(.interactionNotAllowed, "uid \(uid) holds no co-host seat in room \(current.roomID)")
        }
        var stop = RoomCoHostStopRequest()
        stop.roomID = current.roomID
        stop.uid = current.ownerUid
        stop.token = try token(channel: current.channel, uid: current.ownerUid)
        stop.seatID = seat.id
        let answer = try await ask(.roomCohostStop, stop, expecting: RoomInteractionResponse.self)
        return .ok(.init(body: .json(Self.room(answer.room))))
    }

    func listPKs(_ input: Operations.ListPKs.Input) async throws -> Operations.ListPKs.Output {
        // Every open room, a page at a time (bounded: at most 100 pages of 100).
        var byID: [String: Components.Schemas.Pk] = [:]
        var token = ""
        for _ in 0..<100 {
            var request = RoomListRoomsRequest()
            request.pageSize = 100
            request.pageToken = token
            let page = try await ask(.roomList, request, expecting: RoomListRoomsResponse.self)
            for room in page.rooms where room.interaction.kind == .pk {
                var pk = byID[room.interaction.id] ?? .init(id: room.interaction.id, roomIds: [], hostUids: [], sinceMs: room.interaction.sinceMs)
                pk.roomIds.append(room.roomID)
                pk.hostUids.append(Int64(room.ownerUid))
                if room.interaction.endsAtMs > 0 { pk.endsAtMs = room.interaction.endsAtMs }
                byID[room.interaction.id] = pk
            }
            token = page.nextPageToken
            if token.isEmpty { break }
        }
        return .ok(.init(body: .json(.init(pks: byID.keys.sorted().map { byID[$0]! }))))
    }
}
