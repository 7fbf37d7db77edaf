import ShowroomWire

/// What a PK or co-host step did, for the shell to carry out: the room changes (persist, publish,
/// replicate, as every ``RoomChange``), the updates other rooms' owners must get (delivered with
/// retries: each is idempotent), and, for a PK start, the commit to ask of the other room's owner
/// before answering.
public struct InteractionOutcome: Sendable, Equatable {
    /// The changes, in order; each with its notice.
    public var changes: [RoomChange] = []
    /// Updates for the owners of other rooms (withdrawn invitations, ended PKs, aborts).
    public var peerUpdates: [RoomPeerUpdateRequest] = []
    /// Two-key step 2: ask the other room's owner to commit this PK, then call
    /// ``RoomRegistry/pkCommitAnswered(roomID:pkID:committed:refusal:nowMs:)``.
    public var commit: RoomPeerUpdateRequest?
    /// PK invite, first step: offer the invitation to the invited room's owner, then call
    /// ``RoomRegistry/pkOfferAnswered(roomID:invitationID:result:nowMs:)``.
    public var offer: RoomPeerUpdateRequest?
    /// The request made (invite, apply), for the answer.
    public var request: RoomRoomPendingRequest?

    /// An empty outcome.
    public init() {}

    mutating func append(_ other: InteractionOutcome) {
        changes += other.changes
        peerUpdates += other.peerUpdates
        commit = other.commit ?? commit
        offer = other.offer ?? offer
        request = other.request ?? request
    }
}

extension RoomRegistry {
    /// The most co-host seats a room has.
    public static let maxSeats: UInt32 = 8
    /// The longest PK duration a request may ask for, in seconds.
    public static let maxPkDurationS: UInt32 = 3600

    /// The uids that may publish in the room's channel: the owner, the co-hosts, and the peer host
    /// of a PK whose media is forwarded. Empty for a closed room (its channel keeps the token rules).
    public static func stage(of room: RoomRoom) -> [UInt32] {
        guard room.state == .open else { return [] }
        var uids: Set<UInt32> = [room.ownerUid]
        switch room.interaction.kind {
        case .cohost: uids.formUnion(room.interaction.seats.map(\.uid))
        case .pk where room.interaction.mediaMode == .forward: uids.insert(room.interaction.peerUid)
        default: break
        }
        return uids.sorted()
    }

    // MARK: - Shared steps

    /// The open room `roomID` with `uid` its owner, or the error.
    func ownedOpenRoom(_ roomID: String, uid: UInt32) throws(ShowroomError) -> RoomRoom {
        let room = try openRoom(roomID)
        guard uid == room.ownerUid else {
            throw .notRoomOwner("room \(room.roomID) is owned by uid \(room.ownerUid), not uid \(uid); only its owner may do this")
        }
        return room
    }

    /// Refuses starting anything in a room that is in a PK, a call, co-hosting (for PK) or a PK start.
    func requireIdle(_ room: RoomRoom, for what: String, allowingCoHost: Bool = false) throws(ShowroomError) {
        if room.hasPkIntent, room.pkIntent.kind == .pk {
            throw ShowroomError(.roomBusy, "room \(room.roomID) is starting a PK with room \(room.pkIntent.peerRoomID); \(what) is possible once it is idle")
        }
        switch room.interaction.kind {
        case .idle: return
        case .cohost where allowingCoHost: return
        case .pk:
            throw ShowroomError(.roomBusy, "room \(room.roomID) is in PK \(room.interaction.id) with room \(room.interaction.peerRoomID); \(what) is possible once it ends")
        case .call:
            throw ShowroomError(.roomBusy, "room \(room.roomID)'s owner is in a 1v1 call; \(what) is possible once it ends")
        case .cohost:
            throw ShowroomError(.roomBusy, "room \(room.roomID) has co-hosts on stage; \(what) is possible once they step down")
        case .UNRECOGNIZED:
            throw ShowroomError(.roomBusy, "room \(room.roomID) is busy")
        }
    }

    /// A new id for a request, a PK or a seat: `prefix` and 12 characters [a-z0-9].
    static func newInteractionID(_ prefix: String, using generator: inout some RandomNumberGenerator) -> String {
        prefix + RoomNames.generateRoomID(using: &generator)
    }

    /// A new open request of `kind` from `fromUid` in `room` to `toUid` in room `toRoomID` (the
    /// same room for co-hosting; its channel is learnt later for a PK), made at `nowMs`, ending
    /// `lifetimeMs` later.
    static func pendingRequest(_ kind: RoomRoomRequestKind, id: String, in room: RoomRoom, from fromUid: UInt32,
                               to toRoomID: String, _ toUid: UInt32, userName: String, nowMs: Int64,
                               lifetimeMs: Int64) -> RoomRoomPendingRequest {
        var request = RoomRoomPendingRequest()
        request.id = id
        request.kind = kind
        request.fromRoomID = room.roomID
        request.fromUid = fromUid
        request.fromChannel = room.channel
        request.toRoomID = toRoomID
        request.toUid = toUid
        if toRoomID == room.roomID { request.toChannel = room.channel }
        request.userName = userName
        request.createdAtMs = nowMs
        request.expiresAtMs = nowMs + lifetimeMs
        return request
    }

    /// Validates an id a client names (an invitation, a PK, a seat).
    static func validateInteractionID(_ id: String, field: String) throws(ShowroomError) {
        guard !id.isEmpty, id.utf8.count <= 64 else {
            throw .invalidArgument("\(field) is \(id.isEmpty ? "empty" : "longer than 64 bytes"); give the id from the request's answer or event")
        }
    }

    /// The change that stores `room` (bumped) with an INTERACTION_EVENT notice.
    mutating func record(_ room: RoomRoom, event type: RoomInteractionEventType, id: String,
                         request: RoomRoomPendingRequest? = nil, interaction: RoomRoomInteraction? = nil,
                         reason: RoomInteractionEndReason = .unspecified, by: UInt32 = 0, uid: UInt32 = 0,
                         nowMs: Int64) -> RoomChange {
        let room = Self.bumped(room, nowMs: nowMs)
        put(room)
        var event = RoomRoomInteractionEvent()
        event.type = type
        event.id = id
        if let request { event.request = request }
        if let interaction { event.interaction = interaction }
        event.reason = reason
        event.byUid = by
        event.uid = uid
        return RoomChange(room: room, notice: .interactionEvent, event: event)
    }

    /// The change that stores `room` (bumped) without a notice.
    mutating func store(_ room: RoomRoom, nowMs: Int64) -> RoomChange {
        let room = Self.bumped(room, nowMs: nowMs)
        put(room)
        return RoomChange(room: room)
    }

    /// Drops every pending request of the room (not `except`), with its event; PK invitations also
    /// go to the other room's owner as withdrawn.
    mutating func dropPending(in roomID: String, except keep: String? = nil, reason: RoomInteractionEndReason,
                              nowMs: Int64) -> InteractionOutcome {
        var outcome = InteractionOutcome()
        guard var room = rooms[roomID] else { return outcome }
        let dropped = room.pending.filter { $0.id != keep }
        guard !dropped.isEmpty else { return outcome }
        room.pending.removeAll { $0.id != keep }
        for (index, request) in dropped.enumerated() {
            let type: RoomInteractionEventType
            switch request.kind {
            case .pkInvitation:
                type = .pkCancelled
                outcome.peerUpdates.append(Self.peerUpdate(.withdraw, for: request, from: roomID, event: .pkCancelled, reason: reason))
            case .cohostApplication: type = .cohostApplyCancelled
            default: type = .cohostInviteCancelled
            }
            // One version per dropped request, so that each notice is its own step.
            if index > 0 { room = rooms[roomID] ?? room }
            outcome.changes.append(record(room, event: type, id: request.id, request: request, reason: reason, nowMs: nowMs))
        }
        return outcome
    }

    /// An update for the owner of the room on the other side of `request` (a PK invitation).
    static func peerUpdate(_ op: RoomPeerOp, for request: RoomRoomPendingRequest, from roomID: String,
                           event: RoomInteractionEventType, reason: RoomInteractionEndReason = .unspecified,
                           by: UInt32 = 0) -> RoomPeerUpdateRequest {
        RoomPeerUpdateRequest.with {
            $0.op = op
            $0.roomID = request.fromRoomID == roomID ? request.toRoomID : request.fromRoomID
            $0.request = request
            $0.event = event
            $0.reason = reason
            $0.byUid = by
        }
    }

    /// Ends whatever the room is doing with others because it is closing: a PK ends (the peer
    /// hears PEER_ROOM_CLOSED), seats empty, pending requests go (PK invitations withdrawn at the
    /// peer). Changes `room` in place, for the closing change to carry; the peers' updates wait in
    /// ``takePeerUpdates()``.
    mutating func endInteractions(ofClosing room: inout RoomRoom) {
        if room.interaction.kind == .pk {
            peerOutbox.append(RoomPeerUpdateRequest.with {
                $0.op = .end
                $0.roomID = room.interaction.peerRoomID
                $0.interaction = room.interaction
                $0.reason = .peerRoomClosed
            })
        }
        if room.hasPkIntent {
            peerOutbox.append(RoomPeerUpdateRequest.with {
                $0.op = .abort
                $0.roomID = room.pkIntent.peerRoomID
                $0.interaction = room.pkIntent
            })
        }
        for request in room.pending where request.kind == .pkInvitation {
            peerOutbox.append(Self.peerUpdate(.withdraw, for: request, from: room.roomID, event: .pkCancelled, reason: .peerRoomClosed))
        }
        if room.interaction.kind != .call { room.interaction = RoomRoomInteraction() }
        room.pending = []
        room.clearPkIntent()
        room.pkIntentExpiresAtMs = 0
        room.matchWaitingUntilMs = 0
    }

    /// The updates for other rooms' owners that closing rooms left (from ``tick(nowMs:closes:)``
    /// and ``close(_:byAdmin:nowMs:)``); taking them empties the list.
    public mutating func takePeerUpdates() -> [RoomPeerUpdateRequest] {
        defer { peerOutbox = [] }
        return peerOutbox
    }
}
