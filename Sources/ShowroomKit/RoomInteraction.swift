internal import ShowroomWire

/// A PK: two rooms' hosts battle, each room's audience sees both.
public struct PK: Sendable, Hashable {
    /// How a PK's audiences see the peer host.
    public enum MediaMode: Sendable, Hashable {
        /// The edges forward the peer host's stream into this room's channel: nobody needs
        /// another connection.
        case forward
        /// Hosts and audiences subscribe to the peer room's channel themselves.
        case subscribe
    }

    /// The PK's id, the same in both rooms; ``RoomService/stopPK(roomID:uid:token:pkID:)`` names it.
    public var id: String
    /// The other room, its host and its channel.
    public var peerRoomID: String
    public var peerUid: UInt32
    public var peerChannel: String
    /// When it started, ms since the Unix epoch.
    public var sinceMs: Int64
    /// When it ends by its duration, by the server's clock; 0 when it lasts until stopped.
    public var endsAtMs: Int64
    /// How the audiences see the peer host.
    public var mediaMode: MediaMode
}

/// A co-host's seat on a room's stage.
public struct CoHostSeat: Sendable, Hashable {
    /// The co-host.
    public var uid: UInt32
    public var userName: String
    /// The seat's id; ``RoomService/stopCoHosting(roomID:uid:token:seatID:)`` names it, so a late
    /// stop never ends a later co-host.
    public var id: String
    /// Since when, ms since the Unix epoch.
    public var sinceMs: Int64
}

/// An open request of a room: a PK invitation (held by both rooms), a co-host application or
/// invitation. It is answered, cancelled or expires.
public struct InteractionRequest: Sendable, Hashable {
    /// What is asked.
    public enum Kind: Sendable, Hashable {
        /// One room's host invites another's to a PK.
        case pkInvitation
        /// An audience member asks the host for a seat.
        case coHostApplication
        /// The host asks an audience member up.
        case coHostInvitation
    }

    /// The request's id; answers name it.
    public var id: String
    public var kind: Kind
    /// Who asks, from which room.
    public var fromRoomID: String
    public var fromUid: UInt32
    /// Who is asked, in which room (the same room for co-hosting).
    public var toRoomID: String
    public var toUid: UInt32
    /// The asking user's display name.
    public var userName: String
    /// When it was made and when the server ends it, ms since the Unix epoch.
    public var createdAtMs: Int64
    public var expiresAtMs: Int64
    /// A PK invitation: the duration asked for (0 = until stopped) and the media mode.
    public var durationSeconds: UInt32
    public var mediaMode: PK.MediaMode
}

/// What happened in a room's interaction (``RoomEvent/interaction(_:)``).
public struct InteractionEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        case pkInvited, pkAccepted, pkRejected, pkCancelled, pkExpired, pkStarted, pkEnded
        /// Random match: the room waits, its wait expired, or it stopped waiting.
        case pkMatchWaiting, pkMatchExpired, pkMatchCancelled
        case coHostApplied, coHostApplicationCancelled, coHostInvited, coHostInvitationCancelled
        case coHostAccepted, coHostRejected, coHostExpired, coHostStarted, coHostStopped
        /// A kind this SDK does not know.
        case other
    }

    /// Why a PK or a seat ended, or a request went away.
    public enum Reason: Sendable, Hashable {
        case none
        /// A user stopped it (``InteractionEvent/byUid``).
        case stopped
        /// The PK's duration ran out.
        case durationEnded
        /// This room closed.
        case roomClosed
        /// The peer room closed (or its host stayed away).
        case peerRoomClosed
        /// The co-host left the room.
        case leftRoom
        /// Another request of the room was accepted.
        case superseded
    }

    public var kind: Kind
    /// The request's, the PK's or the seat's id.
    public var id: String
    /// The request concerned, if any.
    public var request: InteractionRequest?
    public var reason: Reason
    /// Who did it (0: the server).
    public var byUid: UInt32
    /// The co-host concerned (seat started or stopped).
    public var uid: UInt32
    /// The room after the event (its ``Room/version`` orders a room's events).
    public var room: Room
}

extension PK.MediaMode {
    init(_ wire: RoomPkMediaMode) { self = wire == .subscribe ? .subscribe : .forward }
    var wire: RoomPkMediaMode { self == .subscribe ? .subscribe : .forward }
}

extension Room.Interaction {
    init(_ wire: RoomRoomInteraction) {
        switch wire.kind {
        case .call: self = .call(id: wire.id, sinceMs: wire.sinceMs)
        case .pk:
            self = .pk(PK(id: wire.id, peerRoomID: wire.peerRoomID, peerUid: wire.peerUid, peerChannel: wire.peerChannel,
                          sinceMs: wire.sinceMs, endsAtMs: wire.endsAtMs, mediaMode: PK.MediaMode(wire.mediaMode)))
        case .cohost:
            self = .coHosting(wire.seats.map { CoHostSeat(uid: $0.uid, userName: $0.userName, id: $0.id, sinceMs: $0.sinceMs) })
        default: self = .idle
        }
    }
}

extension InteractionRequest {
    init(_ wire: RoomRoomPendingRequest) {
        let kind: Kind = switch wire.kind {
        case .cohostApplication: .coHostApplication
        case .cohostInvitation: .coHostInvitation
        default: .pkInvitation
        }
        self.init(
            id: wire.id,
            kind: kind,
            fromRoomID: wire.fromRoomID, fromUid: wire.fromUid, toRoomID: wire.toRoomID, toUid: wire.toUid,
            userName: wire.userName, createdAtMs: wire.createdAtMs, expiresAtMs: wire.expiresAtMs,
            durationSeconds: wire.durationS, mediaMode: PK.MediaMode(wire.mediaMode))
    }
}

extension InteractionEvent {
    init(_ notice: RoomRoomNotice) {
        let event = notice.event
        let kinds: [RoomInteractionEventType: Kind] = [
            .pkInvited: .pkInvited, .pkAccepted: .pkAccepted, .pkRejected: .pkRejected, .pkCancelled: .pkCancelled,
            .pkExpired: .pkExpired, .pkStarted: .pkStarted, .pkEnded: .pkEnded, .pkMatchWaiting: .pkMatchWaiting,
            .pkMatchExpired: .pkMatchExpired, .pkMatchCancelled: .pkMatchCancelled, .cohostApplied: .coHostApplied,
            .cohostApplyCancelled: .coHostApplicationCancelled, .cohostInvited: .coHostInvited,
            .cohostInviteCancelled: .coHostInvitationCancelled, .cohostAccepted: .coHostAccepted,
            .cohostRejected: .coHostRejected, .cohostExpired: .coHostExpired, .cohostStarted: .coHostStarted,
            .cohostStopped: .coHostStopped,
        ]
        let reasons: [RoomInteractionEndReason: Reason] = [
            .stopped: .stopped, .durationEnded: .durationEnded, .roomClosed: .roomClosed, .peerRoomClosed: .peerRoomClosed,
            .leftRoom: .leftRoom, .superseded: .superseded,
        ]
        self.init(
            kind: kinds[event.type] ?? .other, id: event.id, request: event.hasRequest ? InteractionRequest(event.request) : nil,
            reason: reasons[event.reason] ?? .none, byUid: event.byUid, uid: event.uid, room: Room(notice.room))
    }
}
