import ShowroomWire

/// The rooms one coordinator owns (or holds as successor), with their chat history, as a pure state
/// machine.
///
/// Every entry point takes the time as `nowMs` (milliseconds since the Unix epoch) and does no I/O:
/// mutating calls return ``RoomChange``s that the shell persists, publishes and replicates. Rooms
/// stay here after closing, answering GET, until ``RoomSettings/closedRoomRetentionMs`` has passed;
/// ``tick(nowMs:)`` then purges them.
public struct RoomRegistry: Sendable {
    /// Limits and lifetimes; changing them affects later calls only.
    public var settings: RoomSettings
    /// The rooms by id, open and closed (until purged).
    public private(set) var rooms: [String: RoomRoom] = [:]
    /// Kept chat history per room id, oldest first.
    private var chat: [String: [RoomChatMessage]] = [:]
    /// Room ids by channel, for owner presence (a room's channel never changes).
    private var roomIDsByChannel: [String: Set<String>] = [:]
    /// Updates for other rooms' owners made by closing rooms, until the shell takes them.
    var peerOutbox: [RoomPeerUpdateRequest] = []
    /// The random-match queue, at the matcher (the owner of ``matchKey``): waiting rooms by id.
    var matchQueue: [String: MatchEntry] = [:]
    /// Numbers the PKs the matcher pairs.
    var matchSequence: UInt64 = 0

    /// Creates an empty registry.
    ///
    /// - Parameter settings: Limits and lifetimes.
    public init(settings: RoomSettings = RoomSettings()) {
        self.settings = settings
    }

    /// The room with this id, open or closed (until purged).
    public func room(_ roomID: String) -> RoomRoom? { rooms[roomID] }

    /// The room's kept chat history, oldest first (empty for an unknown room).
    public func messages(in roomID: String) -> [RoomChatMessage] { chat[roomID] ?? [] }

    /// The ids of the rooms that run in `channel`, open or closed.
    public func roomIDs(inChannel channel: String) -> Set<String> { roomIDsByChannel[channel] ?? [] }

    // MARK: - Storage primitives (the only code that writes the stored properties)

    /// Stores `room` as the current record of its id.
    mutating func put(_ room: RoomRoom) {
        if let old = rooms[room.roomID], old.channel != room.channel {
            unindex(roomID: room.roomID, channel: old.channel)
        }
        rooms[room.roomID] = room
        roomIDsByChannel[room.channel, default: []].insert(room.roomID)
    }

    /// Removes a room and its chat history; returns its last record.
    @discardableResult
    mutating func remove(roomID: String) -> RoomRoom? {
        chat[roomID] = nil
        guard let room = rooms.removeValue(forKey: roomID) else { return nil }
        unindex(roomID: roomID, channel: room.channel)
        return room
    }

    private mutating func unindex(roomID: String, channel: String) {
        roomIDsByChannel[channel]?.remove(roomID)
        if roomIDsByChannel[channel]?.isEmpty == true { roomIDsByChannel[channel] = nil }
    }

    /// Adds chat messages to a room's history (ignoring sequences it holds already) and trims it to
    /// ``RoomSettings/chatHistoryKept``.
    ///
    /// - Returns: The messages added and kept, by sequence; and the sequences trimmed that had been
    ///   kept before (the ones the store holds).
    /// Adds `incoming` chat messages of a room (from a replica, a catch-up or the store), keeping
    /// only numbers up to `last` (the room's last chat number as held): what a losing copy of the
    /// room numbered beyond it goes. With `replacing` (the incoming room record won), an incoming
    /// message replaces a different one under its number: the chat follows the record that won.
    mutating func insert(messages incoming: [RoomChatMessage], roomID: String, replacing: Bool = false,
                         through last: UInt64 = .max) -> (added: [RoomChatMessage], dropped: [UInt64]) {
        var kept = chat[roomID] ?? []
        let before = Set(kept.map(\.sequence))
        var index = Dictionary(kept.enumerated().map { ($1.sequence, $0) }, uniquingKeysWith: { first, _ in first })
        var added: [RoomChatMessage] = []
        for message in incoming where message.sequence <= last {
            if let at = index[message.sequence] {
                guard replacing, kept[at] != message else { continue }
                kept[at] = message
            } else {
                index[message.sequence] = kept.count
                kept.append(message)
            }
            added.append(message)
        }
        var dropped = kept.filter { $0.sequence > last }.map(\.sequence)
        kept.removeAll { $0.sequence > last }
        guard !added.isEmpty || !dropped.isEmpty else { return ([], []) }
        kept.sort { $0.sequence < $1.sequence }
        let excess = kept.count - max(0, settings.chatHistoryKept)
        if excess > 0 {
            let trimmed = Set(kept.prefix(excess).map(\.sequence))
            kept.removeFirst(excess)
            dropped += trimmed.filter(before.contains)
            added.removeAll { trimmed.contains($0.sequence) }
        }
        chat[roomID] = kept
        return (added.sorted { $0.sequence < $1.sequence }, dropped.filter(before.contains).sorted())
    }

    // MARK: - Shared checks

    /// The room with this id, or the error a client gets for it.
    func existingRoom(_ roomID: String) throws(ShowroomError) -> RoomRoom {
        guard !roomID.isEmpty else {
            throw .invalidArgument("room_id is empty; give the id of the room (from CreateRoom or ListRooms)")
        }
        // No room has an id outside the rule, and the refusal does not echo a hostile one.
        try Names.validateRoomID(roomID)
        guard let room = rooms[roomID] else {
            throw .roomNotFound("no room \(roomID): it was never created or has been closed and purged")
        }
        return room
    }

    /// The open room with this id, or the error a client gets for it.
    func openRoom(_ roomID: String) throws(ShowroomError) -> RoomRoom {
        let room = try existingRoom(roomID)
        guard room.state == .open else { throw closedError(room) }
        return room
    }

    /// ROOM_CLOSED for `room`, saying why it closed.
    func closedError(_ room: RoomRoom) -> ShowroomError {
        let why: String
        switch room.closeReason {
        case .ownerClosed: why = "its owner closed it"
        case .adminClosed: why = "an administrator closed it"
        case .expired: why = "its lifetime of \(Self.describe(ms: settings.roomExpiryMs)) ended"
        case .ownerOffline: why = "its owner was away from channel \(room.channel) for \(Self.describe(ms: settings.ownerGraceMs))"
        default: why = "it is not open"
        }
        return .roomClosed("room \(room.roomID) is closed (\(why)); create a new room to go on")
    }

    /// `room` after one more change at `nowMs`.
    static func bumped(_ room: RoomRoom, nowMs: Int64) -> RoomRoom {
        var room = room
        room.version += 1
        room.updatedAtMs = nowMs
        return room
    }

    /// A duration for people: "20 minutes", "30 seconds", "1500 ms".
    static func describe(ms: Int64) -> String {
        func plural(_ n: Int64, _ unit: String) -> String { n == 1 ? "1 \(unit)" : "\(n) \(unit)s" }
        if ms > 0, ms % 60_000 == 0 { return plural(ms / 60_000, "minute") }
        if ms > 0, ms % 1000 == 0 { return plural(ms / 1000, "second") }
        return "\(ms) ms"
    }
}
