import ShowroomWire

// The edge's error codes (3000 – 3999 in proto/showroom/wire/error.proto), with the same
// conventions as the general ones in ShowroomWire: the message says what went wrong and what to do.
// Token problems the edge finds in a grant use the token codes (2000 – 2999), so a client gets the
// same code whether the shell's verifier or the plane caught it.

extension ShowroomError {
    /// The session has no connection to the channel named.
    ///
    /// - Parameter message: Which channel.
    /// - Returns: An error with code `ERROR_CODE_NOT_JOINED` (3000).
    public static func notJoined(_ message: String) -> ShowroomError { ShowroomError(.notJoined, message) }

    /// An audience member tried to publish; nothing was forwarded.
    ///
    /// - Parameter message: What it tried to publish, where.
    /// - Returns: An error with code `ERROR_CODE_ROLE_FORBIDS_PUBLISH` (3001).
    public static func roleForbidsPublish(_ message: String) -> ShowroomError { ShowroomError(.roleForbidsPublish, message) }


    /// A privilege of the token has expired.
    ///
    /// - Parameter message: Which privilege.
    /// - Returns: An error with code `ERROR_CODE_PRIVILEGE_EXPIRED` (3002).
    public static func privilegeExpired(_ message: String) -> ShowroomError { ShowroomError(.privilegeExpired, message) }

    /// The connection's media options do not publish this track.
    ///
    /// - Parameter message: Which track, which option to set.
    /// - Returns: An error with code `ERROR_CODE_TRACK_NOT_PUBLISHED` (3003).
    public static func trackNotPublished(_ message: String) -> ShowroomError { ShowroomError(.trackNotPublished, message) }

    /// A media payload is larger than the edge accepts.
    ///
    /// - Parameter message: The size and the limit.
    /// - Returns: An error with code `ERROR_CODE_FRAME_TOO_LARGE` (3004).
    public static func frameTooLarge(_ message: String) -> ShowroomError { ShowroomError(.frameTooLarge, message) }

    /// The session holds as many channel connections as allowed.
    ///
    /// - Parameter message: The limit.
    /// - Returns: An error with code `ERROR_CODE_TOO_MANY_CHANNELS` (3005).
    public static func tooManyChannels(_ message: String) -> ShowroomError { ShowroomError(.tooManyChannels, message) }

    /// The channel has as many connections as allowed.
    ///
    /// - Parameter message: The channel and the limit.
    /// - Returns: An error with code `ERROR_CODE_CHANNEL_FULL` (3006).
    public static func channelFull(_ message: String) -> ShowroomError { ShowroomError(.channelFull, message) }

    /// The channel has as many broadcasters as allowed.
    ///
    /// - Parameter message: The channel and the limit.
    /// - Returns: An error with code `ERROR_CODE_TOO_MANY_PUBLISHERS` (3007).
    public static func tooManyPublishers(_ message: String) -> ShowroomError { ShowroomError(.tooManyPublishers, message) }

    /// A track kind that is neither audio nor video.
    ///
    /// - Parameter message: The kind received.
    /// - Returns: An error with code `ERROR_CODE_UNKNOWN_TRACK` (3008).
    public static func unknownTrack(_ message: String) -> ShowroomError { ShowroomError(.unknownTrack, message) }

    /// A stream message is larger than allowed.
    ///
    /// - Parameter message: The size and the limit.
    /// - Returns: An error with code `ERROR_CODE_STREAM_MESSAGE_TOO_LARGE` (3009).
    public static func streamMessageTooLarge(_ message: String) -> ShowroomError { ShowroomError(.streamMessageTooLarge, message) }

    /// Stream messages are sent faster than allowed.
    ///
    /// - Parameter message: The rate limits.
    /// - Returns: An error with code `ERROR_CODE_STREAM_MESSAGE_RATE_LIMITED` (3010).
    public static func streamMessageRateLimited(_ message: String) -> ShowroomError { ShowroomError(.streamMessageRateLimited, message) }

    /// The session already has a connection to the channel.
    ///
    /// - Parameter message: Which channel.
    /// - Returns: An error with code `ERROR_CODE_ALREADY_JOINED` (3011).
    public static func alreadyJoined(_ message: String) -> ShowroomError { ShowroomError(.alreadyJoined, message) }

    /// No session is open for this client connection.
    ///
    /// - Parameter message: What to do (open a session).
    /// - Returns: An error with code `ERROR_CODE_NO_SESSION` (3012).
    public static func noSession(_ message: String) -> ShowroomError { ShowroomError(.noSession, message) }


    /// The same uid joined from another session.
    ///
    /// - Parameter message: The channel and uid.
    /// - Returns: An error with code `ERROR_CODE_UID_REPLACED` (3013).
    public static func uidReplaced(_ message: String) -> ShowroomError { ShowroomError(.uidReplaced, message) }

    /// The session was silent for longer than the heartbeat timeout.
    ///
    /// - Parameter message: The timeout.
    /// - Returns: An error with code `ERROR_CODE_SESSION_TIMED_OUT` (3014).
    public static func sessionTimedOut(_ message: String) -> ShowroomError { ShowroomError(.sessionTimedOut, message) }

    /// The same client id opened a new session.
    ///
    /// - Parameter message: The client id.
    /// - Returns: An error with code `ERROR_CODE_SESSION_REPLACED` (3015).
    public static func sessionReplaced(_ message: String) -> ShowroomError { ShowroomError(.sessionReplaced, message) }

    /// The uid is banned from the channel (joining) or from publishing in it.
    ///
    /// - Parameter message: The channel, what is banned, and when the ban ends.
    /// - Returns: An error with code `ERROR_CODE_BANNED` (3016).
    public static func banned(_ message: String) -> ShowroomError { ShowroomError(.banned, message) }
}
