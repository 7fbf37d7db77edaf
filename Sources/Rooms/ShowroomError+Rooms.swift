import ShowroomWire

// The room-coordinator's error codes (4000 – 4999 in proto/showroom/wire/error.proto), with the same
// conventions as the general ones in ShowroomWire: the message says what went wrong and what to do.

extension ShowroomError {
    /// No room has this id: it was never created, or it was closed and then purged.
    ///
    /// - Parameter message: Which room id.
    /// - Returns: An error with code `ERROR_CODE_ROOM_NOT_FOUND` (4000).
    public static func roomNotFound(_ message: String) -> ShowroomError { ShowroomError(.roomNotFound, message) }

    /// Only the room's owner (or an administrator) may do this.
    ///
    /// - Parameter message: The room, its owner's uid and the uid that asked.
    /// - Returns: An error with code `ERROR_CODE_NOT_ROOM_OWNER` (4001).
    public static func notRoomOwner(_ message: String) -> ShowroomError { ShowroomError(.notRoomOwner, message) }

    /// A chat message is longer than a room accepts.
    ///
    /// - Parameter message: The message's size and the limit.
    /// - Returns: An error with code `ERROR_CODE_CHAT_MESSAGE_TOO_LARGE` (4002).
    public static func chatMessageTooLarge(_ message: String) -> ShowroomError { ShowroomError(.chatMessageTooLarge, message) }

    /// The room is closed (by its owner, an administrator, expiry, or its owner staying away).
    ///
    /// - Parameter message: The room and why it closed.
    /// - Returns: An error with code `ERROR_CODE_ROOM_CLOSED` (4003).
    public static func roomClosed(_ message: String) -> ShowroomError { ShowroomError(.roomClosed, message) }

    /// A room with this id exists already.
    ///
    /// - Parameter message: The room id and what to do (another id, or none to get one made).
    /// - Returns: An error with code `ERROR_CODE_ROOM_EXISTS` (4004).
    public static func roomExists(_ message: String) -> ShowroomError { ShowroomError(.roomExists, message) }

    /// No edge is alive to host the channel.
    ///
    /// - Parameter message: The channel and what to do (start an edge, retry shortly).
    /// - Returns: An error with code `ERROR_CODE_NO_EDGE_AVAILABLE` (4005).
    public static func noEdgeAvailable(_ message: String) -> ShowroomError { ShowroomError(.noEdgeAvailable, message) }

    /// An admin request's signature is missing, wrong or too old.
    ///
    /// - Parameter message: Which of these, and how to sign.
    /// - Returns: An error with code `ERROR_CODE_ADMIN_UNAUTHORIZED` (4006).
    public static func adminUnauthorized(_ message: String) -> ShowroomError { ShowroomError(.adminUnauthorized, message) }

    /// No room-coordinator is alive in the cluster.
    ///
    /// - Parameter message: What was asked and what to do (start a coordinator, retry shortly).
    /// - Returns: An error with code `ERROR_CODE_NO_COORDINATOR` (4007).
    public static func noCoordinator(_ message: String) -> ShowroomError { ShowroomError(.noCoordinator, message) }
}
