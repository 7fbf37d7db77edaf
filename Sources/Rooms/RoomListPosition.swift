import ShowroomWire

/// A place in the list of open rooms, newest first (creation time descending, then room id):
/// what a ListRooms page token encodes, so that paging stays stable while rooms are created.
struct RoomListPosition: Comparable, Sendable {
    var createdAtMs: Int64
    var roomID: String

    init(_ room: RoomRoom) {
        createdAtMs = room.createdAtMs
        roomID = room.roomID
    }

    /// Parses a page token ("<createdAtMs>:<roomId>").
    init(token: String) throws(ShowroomError) {
        guard let colon = token.firstIndex(of: ":"),
              let createdAtMs = Int64(token[..<colon]),
              case let roomID = String(token[token.index(after: colon)...]), !roomID.isEmpty
        else {
            throw .invalidArgument(
                "page_token '\(token.prefix(40))\(token.count > 40 ? "…" : "")' is not one ListRooms handed out; pass next_page_token unchanged, or an empty page_token for the first page")
        }
        self.createdAtMs = createdAtMs
        self.roomID = roomID
    }

    /// The token that resumes the list after this position.
    var token: String { "\(createdAtMs):\(roomID)" }

    /// `lhs` comes before `rhs` in the list.
    static func < (lhs: RoomListPosition, rhs: RoomListPosition) -> Bool {
        lhs.createdAtMs != rhs.createdAtMs ? lhs.createdAtMs > rhs.createdAtMs : lhs.roomID < rhs.roomID
    }
}
