/// One page of the open rooms (``RoomService/listRooms(pageSize:pageToken:)``), newest first.
public struct RoomPage: Sendable, Hashable {
    /// The rooms of this page.
    public var rooms: [Room]
    /// The next page's token; empty on the last page.
    public var nextPageToken: String
    /// Open rooms in all.
    public var total: Int

    /// Creates a page.
    ///
    /// - Parameters:
    ///   - rooms: The rooms.
    ///   - nextPageToken: The next page's token, empty on the last.
    ///   - total: Open rooms in all.
    public init(rooms: [Room], nextPageToken: String, total: Int) {
        self.rooms = rooms
        self.nextPageToken = nextPageToken
        self.total = total
    }
}
