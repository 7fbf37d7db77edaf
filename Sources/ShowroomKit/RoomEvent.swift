internal import ShowroomWire

/// What happens in a room (``RoomService/events(for:)``), from the coordinators' notices.
public enum RoomEvent: Sendable, Hashable {
    /// The room as it was when the subscription was set up: the first event of a stream.
    case snapshot(Room)
    /// The audience count changed (someone joined or left the room); the room after the change.
    case userCountChanged(Room)
    /// A chat message was sent in the room.
    case messageAdded(ChatMessage)
    /// The room's lifetime ended; the last event of the stream.
    case roomExpired(Room)
    /// The room was closed (by its owner, an administrator, or because the owner stayed away);
    /// the last event of the stream.
    case roomDestroyed(Room)
    /// The host entered or left a 1v1 call (``Room/interaction``); the room after the change.
    case interactionChanged(Room)
    /// A PK or co-host step: invited, accepted, started, ended, applied, seated ….
    case interaction(InteractionEvent)
    /// The room's name or metadata changed (its owner or the business server); the room after it.
    case roomUpdated(Room)

    /// True for the events after which a room has no more.
    public var endsRoom: Bool {
        switch self {
        case .roomExpired, .roomDestroyed: true
        case .snapshot, .userCountChanged, .messageAdded, .interactionChanged, .interaction, .roomUpdated: false
        }
    }

    /// The room's version after the event (nil for a chat message, which has its own sequence).
    var roomVersion: UInt64? {
        switch self {
        case .snapshot(let room), .userCountChanged(let room), .roomExpired(let room), .roomDestroyed(let room),
             .interactionChanged(let room), .roomUpdated(let room): room.version
        case .interaction(let event): event.room.version
        case .messageAdded: nil
        }
    }

    /// The event a notice reports, or `nil` for a kind this SDK does not know.
    init?(_ notice: RoomRoomNotice) {
        switch notice.kind {
        case .userCountChanged: self = .userCountChanged(Room(notice.room))
        case .messageAdded: self = .messageAdded(ChatMessage(notice.message))
        case .roomExpired: self = .roomExpired(Room(notice.room))
        case .roomDestroyed: self = .roomDestroyed(Room(notice.room))
        case .interactionChanged: self = .interactionChanged(Room(notice.room))
        case .interactionEvent: self = .interaction(InteractionEvent(notice))
        case .roomUpdated: self = .roomUpdated(Room(notice.room))
        default: return nil
        }
    }

    /// What makes two notices the same notice: after a failover two coordinators may publish it.
    static func identity(of notice: RoomRoomNotice) -> String {
        notice.kind == .messageAdded
            ? "\(notice.kind.rawValue)/message/\(notice.message.sequence)"
            : "\(notice.kind.rawValue)/version/\(notice.room.version)"
    }
}
