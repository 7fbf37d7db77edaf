extension ShowroomError {
    /// The stable, machine-readable error codes, grouped in ranges by area. A code, once published,
    /// keeps its number and meaning forever; its raw value is that number (`E3017` is
    /// ``channelElsewhere``, raw value 3017).
    ///
    /// - 1000 – 1999: general (any process)
    /// - 2000 – 2999: authentication and tokens
    /// - 3000 – 3999: channels and media (edge)
    /// - 4000 – 4999: rooms, PK, co-host (room-coordinator)
    /// - 5000 – 5999: calls and presence (call-signal)
    ///
    /// Printed, a code is its case name (`channelElsewhere`); ``ShowroomError/description`` prints
    /// `E3017 channel placed elsewhere: …`.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        /// No code given (a sender that set none).
        case unspecified = 0
        /// The message could not be decoded (not protobuf, wrong frame count, missing fields).
        case malformedMessage = 1000
        /// The receiver does not handle this message kind.
        case unknownKind = 1001
        /// The answer did not arrive within the request's deadline.
        case deadlineExceeded = 1002
        /// The receiver cannot serve now (shutting down, draining, overloaded); retry elsewhere or later.
        case unavailable = 1003
        /// A bug or an unexpected failure inside the receiver.
        case `internal` = 1004
        /// A message or frame is larger than the receiver accepts.
        case tooLarge = 1005
        /// The sender speaks a protocol version the receiver does not support.
        case unsupportedVersion = 1006
        /// A request field has a value outside what is allowed.
        case invalidArgument = 1007
        /// The message kind is internal to the cluster (gossip, replication, edge reports, bans) and
        /// arrived on a client endpoint, or from a peer that is not an authenticated cluster member.
        /// Nothing was done. Clients use the kinds their endpoint serves (proto/README.md).
        case permissionDenied = 1008
        /// The sender made more requests than its rate allows (a server API customer key past
        /// its requests per second); retry after the time the answer gives.
        case rateLimited = 1009
        /// The token is not an AccessToken2 token ("007" + base64 of zlib data) or its content is cut
        /// short or inconsistent.
        case tokenMalformed = 2001
        /// The token's signature does not match: it was not signed with this app's certificate, or it
        /// was altered after signing.
        case tokenBadSignature = 2002
        /// The token was issued for another app id than the one this cluster serves.
        case tokenWrongAppID = 2003
        /// The token's lifetime (issue time + expire) has passed; fetch a new token and renew.
        case tokenExpired = 2004
        /// The token is for another channel (and is not a wildcard-channel token).
        case tokenChannelMismatch = 2005
        /// The token is for another uid (and is not a uid-0, any-uid token).
        case tokenUidMismatch = 2006
        /// The token does not grant the privilege the action needs (join channel, publish audio,
        /// video or data), or that privilege has expired.
        case tokenMissingPrivilege = 2007
        /// The session has no connection to the channel named (join it first).
        case notJoined = 3000
        /// An audience member tried to publish (media or stream messages); nothing was forwarded.
        /// Switch to broadcaster first.
        case roleForbidsPublish = 3001
        /// A privilege of the token expired while in use (publish, or join: the connection was closed);
        /// renew the token when told it will expire.
        case privilegeExpired = 3002
        /// The connection's media options do not publish this track (publish_audio/video/data).
        case trackNotPublished = 3003
        /// A media payload is larger than the edge accepts.
        case frameTooLarge = 3004
        /// The session already holds as many channel connections as the edge allows.
        case tooManyChannels = 3005
        /// The channel has as many connections (subscribers) as the edge allows.
        case channelFull = 3006
        /// The channel has as many broadcasters as the edge allows; join or stay as audience.
        case tooManyPublishers = 3007
        /// A track kind that is neither audio nor video.
        case unknownTrack = 3008
        /// A stream message is larger than the edge accepts.
        case streamMessageTooLarge = 3009
        /// Stream messages are sent faster than the edge accepts (messages or bytes per second).
        case streamMessageRateLimited = 3010
        /// The session already has a connection to this channel.
        case alreadyJoined = 3011
        /// No session is open on this client connection (never opened, closed or timed out): open one
        /// and rejoin.
        case noSession = 3012
        /// The same uid joined the channel from another session; this connection was closed.
        case uidReplaced = 3013
        /// Nothing was heard from the session within the heartbeat timeout; it was closed.
        case sessionTimedOut = 3014
        /// The same client id opened a new session; this one was closed.
        case sessionReplaced = 3015
        /// The uid is banned from the channel (for joining or for publishing) until the time in the
        /// message; the connection was closed or the action refused.
        case banned = 3016
        /// The channel is placed on another edge; nothing was joined. Error.redirect names the edge:
        /// join there (the SDK does so by itself).
        case channelElsewhere = 3017
        /// The channel is a 1v1 call's private channel ("call-…"): only the two parties, with the tokens
        /// the cluster minted for that call (bound to the channel and the uid), may join; a wildcard
        /// token does not open it.
        case channelPrivate = 3018
        /// The channel runs a room: only its owner and the co-hosts the room granted a seat (and
        /// forwarded PK hosts) may publish there, whatever the token allows. Ask the owner for a seat.
        case notOnStage = 3019
        /// More destinations than a forward allows (4), in a request or after an update.
        case forwardTooManyDestinations = 3030
        /// The forward was started or updated more often than allowed (10 times a second); nothing
        /// changed. Send the complete destination set again a moment later.
        case forwardUpdateTooFrequent = 3031
        /// No forward runs for this channel connection: start one first.
        case forwardNotStarted = 3032
        /// A forward runs already for this channel connection: update it instead.
        case forwardAlreadyStarted = 3033
        /// A destination is the source channel itself, or is listed twice.
        case forwardInvalidDestination = 3034
        /// A destination's edge could not be reached (it died, or the channel could not be placed);
        /// the source edge places it again every second for a while.
        case forwardDestinationUnreachable = 3035
        /// The forwarded broadcaster left the source channel (or stopped being a broadcaster): every
        /// forward of it ended.
        case forwardSourceLeft = 3036
        /// The same uid joined the destination channel otherwise (or was there): the forwarded
        /// connection was replaced.
        case forwardSameUidInDestination = 3037
        /// No room has this id (never created, or purged after closing).
        case roomNotFound = 4000
        /// Only the room's owner (or an administrator) may do this.
        case notRoomOwner = 4001
        /// A chat message is longer than a room accepts.
        case chatMessageTooLarge = 4002
        /// The room is closed (by its owner, by expiry or because its owner stayed away).
        case roomClosed = 4003
        /// A room with this id exists already.
        case roomExists = 4004
        /// No edge is alive to host the channel; start an edge or retry shortly.
        case noEdgeAvailable = 4005
        /// An admin request's signature is missing, wrong or too old (sign it with the app certificate).
        case adminUnauthorized = 4006
        /// No room-coordinator is alive in the cluster.
        case noCoordinator = 4007
        /// The room (or the peer room) is busy with another PK, co-hosting, call or pending start.
        case roomBusy = 4010
        /// The invitation, application, PK or seat named is not (or no longer) there: answered,
        /// cancelled, expired or ended.
        case interactionNotFound = 4011
        /// The uid may not do this in this interaction (not the invited owner, not the co-host ...).
        case interactionNotAllowed = 4012
        /// Every co-host seat of the room is taken.
        case noSeatFree = 4013
        /// The room has an open request of this kind already (one outgoing PK invitation per room).
        case requestPending = 4014
        /// No ban rule has that id, or it was lifted or has ended.
        case banRuleNotFound = 4015
        /// No recording of the channel has that id (never started, or forgotten long after it stopped).
        case recordingNotFound = 4016
        /// A recording of the same publishers of the channel runs already: stop it first.
        case recordingConflict = 4017
        /// The session id names no session (never logged in, logged out, timed out or replaced by a
        /// newer login of the same uid): log in again.
        case notLoggedIn = 5000
        /// The callee is not logged in to signaling; nothing rang.
        case calleeOffline = 5001
        /// The caller is in another call; hang it up first.
        case callerInCall = 5002
        /// No such call (never made, or ended over a minute ago).
        case unknownCall = 5003
        /// The requester is not the party this request is for (someone else's call, a caller accepting).
        case notYourCall = 5004
        /// The call is not where the request needs it (cancel after accept): CallAPI's stateMismatch.
        case callStateMismatch = 5005
        /// The call ended already; the message says how.
        case callEnded = 5006
        /// No call-signal node is alive in the cluster.
        case noCallSignal = 5007
        /// The caller started calls faster than a call-signal node accepts (10 in 10 s); the message says
        /// when it may call again.
        case callRateLimited = 5008
        /// A code this build does not know yet (sent by a newer server): ``ShowroomError/number``
        /// holds the number received.
        case unrecognized = -1

        /// A short lowercase phrase naming the code, as in ``ShowroomError/description``
        /// (e.g. "malformed message").
        public var summary: String {
            switch self {
            case .unspecified: return "unspecified error"
            case .malformedMessage: return "malformed message"
            case .unknownKind: return "unknown message kind"
            case .deadlineExceeded: return "deadline exceeded"
            case .unavailable: return "unavailable"
            case .internal: return "internal error"
            case .tooLarge: return "too large"
            case .unsupportedVersion: return "unsupported version"
            case .invalidArgument: return "invalid argument"
            case .tokenMalformed: return "malformed token"
            case .tokenBadSignature: return "bad token signature"
            case .tokenWrongAppID: return "token for another app id"
            case .tokenExpired: return "token expired"
            case .tokenChannelMismatch: return "token for another channel"
            case .tokenUidMismatch: return "token for another uid"
            case .tokenMissingPrivilege: return "token lacks a privilege"
            case .notJoined: return "not joined"
            case .roleForbidsPublish: return "role forbids publish"
            case .privilegeExpired: return "privilege expired"
            case .trackNotPublished: return "track not published"
            case .frameTooLarge: return "frame too large"
            case .tooManyChannels: return "too many channels"
            case .channelFull: return "channel full"
            case .tooManyPublishers: return "too many publishers"
            case .unknownTrack: return "unknown track"
            case .streamMessageTooLarge: return "stream message too large"
            case .streamMessageRateLimited: return "stream message rate limited"
            case .alreadyJoined: return "already joined"
            case .noSession: return "no session"
            case .uidReplaced: return "uid replaced"
            case .sessionTimedOut: return "session timed out"
            case .sessionReplaced: return "session replaced"
            case .banned: return "banned"
            case .permissionDenied: return "permission denied"
            case .rateLimited: return "rate limited"
            case .channelElsewhere: return "channel placed elsewhere"
            case .channelPrivate: return "private call channel"
            case .forwardTooManyDestinations: return "too many forward destinations"
            case .forwardUpdateTooFrequent: return "forward updates too frequent"
            case .forwardNotStarted: return "forward not started"
            case .forwardAlreadyStarted: return "forward already started"
            case .forwardInvalidDestination: return "invalid forward destination"
            case .forwardDestinationUnreachable: return "forward destination unreachable"
            case .forwardSourceLeft: return "forward source left"
            case .forwardSameUidInDestination: return "same uid in forward destination"
            case .roomNotFound: return "room not found"
            case .notRoomOwner: return "not the room's owner"
            case .chatMessageTooLarge: return "chat message too large"
            case .roomClosed: return "room closed"
            case .roomExists: return "room exists"
            case .noEdgeAvailable: return "no edge available"
            case .adminUnauthorized: return "admin request unauthorized"
            case .noCoordinator: return "no coordinator"
            case .notLoggedIn: return "not logged in"
            case .calleeOffline: return "callee offline"
            case .callerInCall: return "caller in a call"
            case .unknownCall: return "unknown call"
            case .notYourCall: return "not your call"
            case .callStateMismatch: return "call state mismatch"
            case .callEnded: return "call ended"
            case .noCallSignal: return "no call-signal node"
            case .callRateLimited: return "calls too frequent"
            case .notOnStage: return "not on stage"
            case .roomBusy: return "room busy"
            case .interactionNotFound: return "interaction not found"
            case .interactionNotAllowed: return "interaction not allowed"
            case .noSeatFree: return "no seat free"
            case .requestPending: return "request pending"
            case .banRuleNotFound: return "ban rule not found"
            case .recordingNotFound: return "recording not found"
            case .recordingConflict: return "recording conflict"
            case .unrecognized: return "unrecognized error"
            }
        }
    }
}
