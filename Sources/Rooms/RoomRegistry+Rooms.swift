import ShowroomWire

extension RoomRegistry {
    /// A new room id, 12 characters of [a-z0-9], as ``create(_:nowMs:using:)`` makes for a request
    /// without one (a coordinator draws it first, to know which coordinator owns the room).
    public static func newRoomID(using generator: inout some RandomNumberGenerator) -> String {
        RoomNames.generateRoomID(using: &generator)
    }

    /// Largest ListRooms page.
    public static let maxPageSize = 100
    /// ListRooms page size when the request says 0.
    public static let defaultPageSize = 20

    /// Creates an open room owned by `request.ownerUid`.
    ///
    /// The owner's grace period starts now: the room closes (OWNER_OFFLINE) unless the owner joins
    /// the room's channel within ``RoomSettings/ownerGraceMs``.
    ///
    /// - Parameters:
    ///   - request: The room to create; an empty `roomID` gets a new 12-character [a-z0-9] id, an
    ///     empty `channel` becomes the room id.
    ///   - nowMs: The time now.
    ///   - generator: Draws new room ids (`SystemRandomNumberGenerator` in production).
    /// - Returns: The change (no notice: nobody listens to a room yet).
    /// - Throws: `INVALID_ARGUMENT` for a bad name, owner name, owner avatar, owner uid, room id or
    ///   channel (``Names``); `ROOM_EXISTS` when the room id is taken.
    public mutating func create(
        _ request: RoomCreateRoomRequest, nowMs: Int64, using generator: inout some RandomNumberGenerator
    ) throws(ShowroomError) -> RoomChange {
        let name = try RoomNames.validated(name: request.name)
        try Names.validateDisplayName(request.ownerName, field: "owner_name", allowEmpty: true)
        try Names.validateAvatar(request.ownerAvatar, field: "owner_avatar")
        guard request.ownerUid != 0 else {
            throw .invalidArgument("owner_uid is 0; give the uid the owner joins the room's channel with (1 – 4294967295)")
        }
        let roomID: String
        if request.roomID.isEmpty {
            var generated = RoomNames.generateRoomID(using: &generator)
            while rooms[generated] != nil { generated = RoomNames.generateRoomID(using: &generator) }
            roomID = generated
        } else {
            try Names.validateRoomID(request.roomID)
            guard rooms[request.roomID] == nil else {
                throw .roomExists("room \(request.roomID) exists already; choose another room_id, or leave it empty to get one made")
            }
            roomID = request.roomID
        }
        let channel = request.channel.isEmpty ? roomID : request.channel
        try Names.validateChannel(channel)
        guard request.seats <= Self.maxSeats else {
            throw .invalidArgument("seats is \(request.seats); a room has 1 – \(Self.maxSeats) co-host seats (0 means 1)")
        }

        var room = RoomRoom()
        room.roomID = roomID
        room.name = name
        room.ownerUid = request.ownerUid
        room.ownerName = request.ownerName
        room.ownerAvatar = request.ownerAvatar
        room.createdAtMs = nowMs
        room.channel = channel
        room.expiresAtMs = nowMs + settings.roomExpiryMs
        room.state = .open
        room.ownerOfflineSinceMs = nowMs
        room.version = 1
        room.updatedAtMs = nowMs
        room.seats = max(1, request.seats)
        put(room)
        return RoomChange(room: room)
    }

    /// A page of the open rooms, newest first.
    ///
    /// - Parameters:
    ///   - request: Page size (0 means 20, at most `maxPageSize`) and the token of the previous page.
    ///   - maxPageSize: The largest page a caller may ask for (coordinators gathering a page from
    ///     each other ask for one more than their client, to know whether more follow).
    ///   - include: Which open rooms to list (a coordinator lists the rooms it owns).
    /// - Returns: The page, the next page's token (empty on the last page) and the number of open
    ///   rooms listed.
    /// - Throws: `INVALID_ARGUMENT` for a page size over the limit or a token ListRooms did not hand out.
    public func list(_ request: RoomListRoomsRequest, maxPageSize: Int = Self.maxPageSize,
                     where include: (RoomRoom) -> Bool = { _ in true }) throws(ShowroomError) -> RoomListRoomsResponse {
        let pageSize = try Self.pageSize(of: request, max: maxPageSize)
        let after = try Self.position(after: request)
        let open = rooms.values.filter { $0.state == .open && include($0) }.sorted { RoomListPosition($0) < RoomListPosition($1) }
        let start = after.map { after in open.firstIndex { after < RoomListPosition($0) } ?? open.count } ?? 0
        let end = min(start + pageSize, open.count)

        var response = RoomListRoomsResponse()
        response.rooms = Array(open[start..<end])
        if end < open.count, let last = response.rooms.last {
            response.nextPageToken = RoomListPosition(last).token
        }
        response.total = UInt32(open.count)
        return response
    }

    /// Merges the pages every coordinator listed for one request (each asked for one room more
    /// than `request` wants, so that the merge knows whether more follow) into the page the client
    /// gets: newest first, each room once, `total` summed.
    public static func mergePages(_ pages: [RoomListRoomsResponse], for request: RoomListRoomsRequest) throws(ShowroomError) -> RoomListRoomsResponse {
        let pageSize = try pageSize(of: request, max: maxPageSize)
        var seen = Set<String>()
        let rooms = pages.flatMap(\.rooms).sorted { RoomListPosition($0) < RoomListPosition($1) }
            .filter { seen.insert($0.roomID).inserted }
        var response = RoomListRoomsResponse()
        response.rooms = Array(rooms.prefix(pageSize))
        if rooms.count > pageSize, let last = response.rooms.last {
            response.nextPageToken = RoomListPosition(last).token
        }
        response.total = pages.reduce(0) { $0 &+ $1.total }
        return response
    }

    /// A room listing at one coordinator, of the open rooms `include` lets it list (those it
    /// owns): the page it lists, and the request it asks every other coordinator (nil when the
    /// request was forwarded by the coordinator gathering the page). The gathering coordinator
    /// asks for one room more than its client did, and lists as many itself, so that the merge
    /// knows whether more follow (``mergePages(_:for:)``).
    /// - Throws: `INVALID_ARGUMENT` for a page size over the limit (one more for a forwarded
    ///   request) or a token ListRooms did not hand out.
    public func listing(_ request: RoomListRoomsRequest, forwarded: Bool,
                        where include: (RoomRoom) -> Bool) throws(ShowroomError) -> (page: RoomListRoomsResponse, ask: RoomListRoomsRequest?) {
        let size = try Self.pageSize(of: request, max: Self.maxPageSize + (forwarded ? 1 : 0))
        guard !forwarded else { return (try list(request, maxPageSize: Self.maxPageSize + 1, where: include), nil) }
        var ask = request
        ask.pageSize = UInt32(size + 1)
        return (try list(ask, maxPageSize: Self.maxPageSize + 1, where: include), ask)
    }

    /// The refusal of a listing whose gathering failed with `error`: a request's own fault as it
    /// is, any other as `UNAVAILABLE` (every coordinator is needed).
    public static func gatheringFailed(_ error: ShowroomError) -> ShowroomError {
        error.code == .invalidArgument ? error : .unavailable("listing rooms needs every coordinator: \(error.message); retry in a moment")
    }

    /// The page size a request asks for (0 means the default), checked against `max`.
    public static func pageSize(of request: RoomListRoomsRequest, max: Int = maxPageSize) throws(ShowroomError) -> Int {
        let pageSize = request.pageSize == 0 ? defaultPageSize : Int(request.pageSize)
        guard pageSize <= max else {
            throw .invalidArgument(
                "page_size \(request.pageSize) is too large; ask for 1 – \(maxPageSize) rooms per page (0 means \(defaultPageSize))")
        }
        return pageSize
    }

    private static func position(after request: RoomListRoomsRequest) throws(ShowroomError) -> RoomListPosition? {
        request.pageToken.isEmpty ? nil : try RoomListPosition(token: request.pageToken)
    }

    /// The room with this id, open or closed (until purged).
    ///
    /// - Throws: `ROOM_NOT_FOUND` for an unknown id; `INVALID_ARGUMENT` for an empty one.
    public func get(_ request: RoomGetRoomRequest) throws(ShowroomError) -> RoomRoom {
        try existingRoom(request.roomID)
    }

    /// Closes a room: by its owner, or by an administrator.
    ///
    /// - Parameters:
    ///   - request: The room and the uid asking.
    ///   - byAdmin: The shell verified the request's admin signature; the uid does not matter then.
    ///   - nowMs: The time now.
    /// - Returns: The change, with notice ROOM_DESTROYED.
    /// - Throws: `ROOM_NOT_FOUND`; `NOT_ROOM_OWNER` (naming the owner) when neither owner nor admin;
    ///   `ROOM_CLOSED` when it is closed already.
    /// The most bytes a room's metadata may hold.
    public static let maxMetadataBytes = 4096

    /// Renames an open room and/or sets its metadata, by its owner or (`byAdmin`, a signature the
    /// caller verified) an administrator. Nothing given is nothing changed, and is refused.
    ///
    /// - Throws: `INVALID_ARGUMENT` (a bad name, metadata over ``maxMetadataBytes``, nothing to
    ///   change), `NOT_ROOM_OWNER`, `ROOM_CLOSED`, `ROOM_NOT_FOUND`.
    public mutating func update(_ request: RoomUpdateRoomRequest, byAdmin: Bool, nowMs: Int64) throws(ShowroomError) -> RoomChange {
        var room = try openRoom(request.roomID, actedOnBy: request.uid, byAdmin: byAdmin, to: "change")
        guard request.hasName || request.hasMetadata else {
            throw .invalidArgument("an update of room \(room.roomID) names a new name, new metadata or both; it named neither")
        }
        if request.hasName { room.name = try RoomNames.validated(name: request.name) }
        if request.hasMetadata {
            guard request.metadata.utf8.count <= Self.maxMetadataBytes else {
                throw .invalidArgument("metadata is \(request.metadata.utf8.count) bytes; a room keeps at most \(Self.maxMetadataBytes)")
            }
            room.metadata = request.metadata
        }
        room = Self.bumped(room, nowMs: nowMs)
        put(room)
        return RoomChange(room: room, notice: .roomUpdated)
    }

    public mutating func close(_ request: RoomCloseRoomRequest, byAdmin: Bool, nowMs: Int64) throws(ShowroomError) -> RoomChange {
        var room = try openRoom(request.roomID, actedOnBy: request.uid, byAdmin: byAdmin, to: "close")
        endInteractions(ofClosing: &room)
        room.state = .closed
        room.closeReason = byAdmin ? .adminClosed : .ownerClosed
        room.closedAtMs = nowMs
        room = Self.bumped(room, nowMs: nowMs)
        put(room)
        return RoomChange(room: room, notice: .roomDestroyed)
    }

    /// Room `id`, open, for its owner `uid` or an administrator to `verb`.
    private func openRoom(_ id: String, actedOnBy uid: UInt32, byAdmin: Bool, to verb: String) throws(ShowroomError) -> RoomRoom {
        let room = try existingRoom(id)
        guard byAdmin || uid == room.ownerUid else {
            throw .notRoomOwner("only room \(room.roomID)'s owner (uid \(room.ownerUid)) or an administrator may \(verb) it, not uid \(uid)")
        }
        guard room.state == .open else { throw closedError(room) }
        return room
    }
}
