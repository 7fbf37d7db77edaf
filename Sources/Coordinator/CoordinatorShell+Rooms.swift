import Foundation
import NodeRuntime
import Rooms
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

extension CoordinatorShell {
    /// Serves a room request here when this coordinator owns the room (or the request was
    /// forwarded already), else passes it to the owner and relays its answer.
    func routeRoomRequest(_ request: WireEnvelope, _ respond: Node.Responder) {
        var request = request
        let roomID: String
        do {
            roomID = try self.roomID(of: &request)
        } catch {
            respond(.failure(error))
            return
        }
        let owner = ownership.owner(of: roomID)
        let isRead = request.kind == .roomGet || request.kind == .roomChatHistory
        if request.forwarded, owner != selfID, !isRead {
            // The forwarding coordinator's view of the members differs from ours for a moment; a
            // write made here, by a coordinator that does not take itself for the owner, could
            // be acknowledged and then lost.
            respond(.failure(.unavailable(
                "coordinator \(selfID) takes \(owner) for the owner of room \(roomID); the coordinators are settling, retry in a moment")))
            return
        }
        if request.forwarded || owner == selfID {
            let members = ownership.ring
            afterCatchUp(of: roomID) { [self] in
                // Held for a catch-up, the request may find the members changed and the room
                // owned by another: it is routed again, never written by a coordinator that does
                // not own the room.
                guard members == ownership.ring else { return routeRoomRequest(request, respond) }
                if machine.takeOver.beginsTerm(.roomVersion, of: roomID),
                   let room = machine.records.registry.raiseVersion(of: roomID, termMs: machine.takeOver.termMs) {
                    machine.takeOver.began(.roomVersion, of: roomID)
                    apply([RoomChange(room: room)], replicate: true)
                }
                serveRoomRequest(request, respond)
            } fail: { [self] in
                let why = seesMostOfTheCluster ? "is taking over room \(roomID) from the others"
                    : "sees less than half of the cluster (a network partition?) and writes nothing until it sees more"
                respond(.failure(.unavailable("coordinator \(selfID) \(why); retry in a moment")))
            }
            return
        }
        guard let endpoint = clusterEndpoint(of: owner) else {
            serveRoomRequest(request, respond)
            return
        }
        node.forward(request, to: endpoint, timeout: Self.peerTimeout) { [self] result in
            switch result {
            case .success(let answer):
                respond(.relayed(answer))
            case .failure(let error):
                // Reads can be answered from the replica; writes wait for the membership to settle.
                if isRead {
                    serveRoomRequest(request, respond)
                } else {
                    respond(.failure(.unavailable(
                        "the coordinator owning room \(roomID) (\(owner)) did not answer (\(error.message)); retry in a moment")))
                }
            }
        }
    }

    /// The room a request is about; a create without an id gets one here, so that it can be routed.
    private func roomID(of request: inout WireEnvelope) throws(ShowroomError) -> String {
        switch request.kind {
        case .roomCreate:
            var body = try request.decodeBody(RoomCreateRoomRequest.self)
            if body.roomID.isEmpty {
                body.roomID = RoomRegistry.newRoomID(using: &random)
                do {
                    request.body = try body.serializedData()
                } catch {
                    throw .internal("cannot re-encode a create request: \(error)")
                }
            }
            return body.roomID
        case .roomGet: return try request.decodeBody(RoomGetRoomRequest.self).roomID
        case .roomJoin: return try request.decodeBody(RoomJoinRoomRequest.self).roomID
        case .roomLeave: return try request.decodeBody(RoomLeaveRoomRequest.self).roomID
        case .roomClose: return try request.decodeBody(RoomCloseRoomRequest.self).roomID
        case .roomUpdate: return try request.decodeBody(RoomUpdateRoomRequest.self).roomID
        case .roomChatSend: return try request.decodeBody(RoomSendChatRequest.self).roomID
        case .roomChatHistory: return try request.decodeBody(RoomChatHistoryRequest.self).roomID
        case .roomInteraction: return try request.decodeBody(RoomSetInteractionRequest.self).roomID
        default: return try interactionRoomID(of: request)
        }
    }

    /// Applies a room request to the registry; writes answer once the successor has the change.
    private func serveRoomRequest(_ request: WireEnvelope, _ respond: Node.Responder) {
        let now = nowMs
        do {
            switch request.kind {
            case .roomGet:
                var answer = RoomGetRoomResponse()
                answer.room = try machine.records.registry.get(try request.decodeBody(RoomGetRoomRequest.self))
                respond(.success(answer))
            case .roomChatHistory:
                respond(.success(try machine.records.registry.history(try request.decodeBody(RoomChatHistoryRequest.self))))
            case .roomCreate:
                let change = try machine.records.registry.create(try request.decodeBody(RoomCreateRoomRequest.self), nowMs: now, using: &random)
                write(change, answer: RoomCreateRoomResponse.with { $0.room = change.room }, respond)
            case .roomJoin:
                let change = try machine.records.registry.join(try request.decodeBody(RoomJoinRoomRequest.self), nowMs: now)
                write(change, answer: RoomJoinRoomResponse.with { $0.room = change.room }, respond)
            case .roomLeave:
                let body = try request.decodeBody(RoomLeaveRoomRequest.self)
                let change = try machine.records.registry.leave(body, nowMs: now)
                // A co-host leaving the room steps down; its open requests go.
                var plan = InteractionPlan(machine.records.registry.coHostLeft(roomID: body.roomID, uid: body.uid, nowMs: now),
                                           roomID: body.roomID)
                plan.changes.insert(change, at: 0)
                carryOut(plan) { [self] _ in
                    respond(.success(RoomLeaveRoomResponse.with { $0.room = machine.records.registry.room(body.roomID) ?? change.room }))
                }
            case .roomClose:
                let body = try request.decodeBody(RoomCloseRoomRequest.self)
                var byAdmin = false
                if body.hasAdmin {
                    try verifyAdmin(body.admin, action: "close-room", target: body.roomID, uid: 0, nowMs: now)
                    byAdmin = true
                }
                let change = try machine.records.registry.close(body, byAdmin: byAdmin, nowMs: now)
                // Its PK ends at the peer, its invitations are withdrawn there.
                for update in machine.records.registry.takePeerUpdates() { deliverPeerUpdate(update) }
                write(change, answer: RoomCloseRoomResponse.with { $0.room = change.room }, respond)
            case .roomUpdate:
                let body = try request.decodeBody(RoomUpdateRoomRequest.self)
                if body.hasAdmin {
                    try verifyAdmin(body.admin, action: "update-room", target: body.roomID, uid: 0, nowMs: now)
                }
                let change = try machine.records.registry.update(body, byAdmin: body.hasAdmin, nowMs: now)
                write(change, answer: RoomUpdateRoomResponse.with { $0.room = change.room }, respond)
            case .roomChatSend:
                let change = try machine.records.registry.sendChat(try request.decodeBody(RoomSendChatRequest.self), nowMs: now)
                var answer = RoomSendChatResponse()
                if let message = change.message { answer.message = message }
                write(change, answer: answer, respond)
            case .roomInteraction:
                let body = try request.decodeBody(RoomSetInteractionRequest.self)
                guard let change = try machine.records.registry.setInteraction(body, nowMs: now) else {
                    // Nothing changed (a repeat, or a late clear of another call).
                    respond(.success(RoomSetInteractionResponse.with { $0.room = machine.records.registry.room(body.roomID) ?? RoomRoom() }))
                    return
                }
                write(change, answer: RoomSetInteractionResponse.with { $0.room = change.room }, respond)
            default:
                serveInteraction(request, respond)
            }
        } catch {
            respond(.failure(error))
        }
    }

    /// Persists, publishes and replicates `change`, then answers.
    private func write(_ change: RoomChange, answer: some SwiftProtobuf.Message, _ respond: Node.Responder) {
        apply([change], replicate: true, then: { respond(.success(answer)) })
    }

    /// Checks an admin request's signature against the app certificate.
    func verifyAdmin(_ signature: RoomAdminSignature, action: String, target: String, uid: UInt32,
                     nowMs: Int64) throws(ShowroomError) {
        guard let certificate = configuration.appCertificate else {
            throw ShowroomError(.adminUnauthorized,
                                "coordinator \(selfID) has no app certificate configured, so it accepts no admin request; set appCertificate")
        }
        try AdminSigner.verify(signature, action: action, target: target, uid: uid, nowMs: nowMs, appCertificate: certificate)
    }

    // MARK: - Listing (scatter-gather: every coordinator lists the rooms it owns)

    /// Lists open rooms newest first across all coordinators: each lists its own (asked for one
    /// more than a page, to know whether more follow), this one merges.
    func listRooms(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ () throws -> RoomListRoomsRequest in
            let body = try request.decodeBody(RoomListRoomsRequest.self)
            // A coordinator gathering a page asks the others for one room more than its client did.
            _ = try RoomRegistry.pageSize(of: body, max: RoomRegistry.maxPageSize + (request.forwarded ? 1 : 0))
            return body
        }) else { return }
        let ownership = ownership
        var asked = body
        asked.pageSize = UInt32(((try? RoomRegistry.pageSize(of: body)) ?? RoomRegistry.defaultPageSize) + 1)
        if request.forwarded {
            // A coordinator gathering a page asks for one room more than its client did.
            if let page = respond.answering({
                try machine.records.registry.list(body, maxPageSize: RoomRegistry.maxPageSize + 1) { ownership.owns($0.roomID) }
            }) {
                respond(.success(page))
            }
            return
        }
        guard let local = respond.answering({
            try machine.records.registry.list(asked, maxPageSize: RoomRegistry.maxPageSize + 1) { ownership.owns($0.roomID) }
        }) else { return }
        var ask = request
        ask.body = (try? asked.serializedData()) ?? request.body
        node.forwardAll(otherCoordinators.map { ($0, ask) }, timeout: Self.peerTimeout) { result in
            do throws(ShowroomError) {
                let pages = try result.get().map { answer throws(ShowroomError) in try answer.decodeBody(RoomListRoomsResponse.self) }
                respond(.success(try RoomRegistry.mergePages([local] + pages, for: body)))
            } catch {
                respond(.failure(error.code == .invalidArgument ? error
                    : .unavailable("listing rooms needs every coordinator: \(error.message); retry in a moment")))
            }
        }
    }
}
