import ShowroomWire

/// What a verified token allows: the channel and uid it is for and its privileges with their
/// expiries.
///
/// The shell verifies AccessToken2 tokens itself (signature, app id, token expiry) and maps the
/// result into a grant; ``ChannelPlane`` then enforces it for the connection's lifetime: join and
/// stay (``Privilege/join``), publish each track kind, send stream messages, warn
/// ``EdgeSettings/tokenWarningLead`` before the first privilege in use runs out, and revoke each
/// privilege when it does.
public struct ChannelGrant: Sendable, Hashable {
    /// The channel the token is for; empty means any channel (the wildcard token).
    public var channel: String
    /// The uid the token is for; 0 means any uid.
    public var uid: UInt32
    /// When the token itself expires: it cannot be used to join or renew after that
    /// (`ERROR_CODE_TOKEN_EXPIRED`). A live connection is governed by the privilege expiries, which
    /// the shell caps at the token's expiry (as ShowroomAuth's `TokenGrant` does).
    public var tokenExpiry: Expiry
    /// The privileges granted, each with its expiry. A privilege absent here is not granted.
    public var privileges: [Privilege: Expiry]

    /// Creates a grant.
    ///
    /// - Parameters:
    ///   - channel: The channel, or "" for any channel.
    ///   - uid: The uid, or 0 for any uid.
    ///   - tokenExpiry: When the token can no longer be used to join or renew.
    ///   - privileges: The privileges granted, with their expiries.
    public init(channel: String = "", uid: UInt32 = 0, tokenExpiry: Expiry = .never, privileges: [Privilege: Expiry]) {
        self.channel = channel
        self.uid = uid
        self.tokenExpiry = tokenExpiry
        self.privileges = privileges
    }

    /// Creates a grant from a verified token's Unix times, placing them on the monotonic clock:
    /// what the shell does with ShowroomAuth's `TokenGrant` (`expiresAt(_:)` per privilege,
    /// `tokenExpiresAt`).
    ///
    /// - Parameters:
    ///   - channel: The channel, or "" for any channel.
    ///   - uid: The uid, or 0 for any uid.
    ///   - tokenExpiresAt: Unix seconds at which the token expires.
    ///   - privilegeExpiries: Unix seconds at which each granted privilege expires.
    ///   - unixNow: The current Unix time in seconds.
    ///   - now: The monotonic clock, read at the same moment as `unixNow`.
    public init(
        channel: String, uid: UInt32, tokenExpiresAt: UInt32, privilegeExpiries: [Privilege: UInt32],
        unixNow: UInt32, now: Duration
    ) {
        func place(_ unix: UInt32) -> Expiry {
            .at(now + .seconds(Int64(unix) - Int64(unixNow)))
        }
        self.init(
            channel: channel, uid: uid, tokenExpiry: place(tokenExpiresAt),
            privileges: privilegeExpiries.mapValues(place))
    }

    /// A publisher's grant: every privilege, all expiring together (what a token built with the
    /// publisher role gives).
    ///
    /// - Parameters:
    ///   - channel: The channel, or "" for any channel.
    ///   - uid: The uid, or 0 for any uid.
    ///   - expiry: When the privileges (and the token) expire.
    /// - Returns: The grant.
    public static func publisher(channel: String = "", uid: UInt32 = 0, expiry: Expiry = .never) -> ChannelGrant {
        ChannelGrant(
            channel: channel, uid: uid, tokenExpiry: expiry,
            privileges: [.join: expiry, .publishAudio: expiry, .publishVideo: expiry, .publishData: expiry])
    }

    /// A subscriber's grant: the join privilege only.
    ///
    /// - Parameters:
    ///   - channel: The channel, or "" for any channel.
    ///   - uid: The uid, or 0 for any uid.
    ///   - expiry: When the privilege (and the token) expire.
    /// - Returns: The grant.
    public static func subscriber(channel: String = "", uid: UInt32 = 0, expiry: Expiry = .never) -> ChannelGrant {
        ChannelGrant(channel: channel, uid: uid, tokenExpiry: expiry, privileges: [.join: expiry])
    }

    /// True if the grant is for `channel` and `uid` (wildcards match anything).
    ///
    /// - Parameters:
    ///   - channel: A channel name.
    ///   - uid: A uid.
    public func covers(channel: String, uid: UInt32) -> Bool {
        (self.channel.isEmpty || self.channel == channel) && (self.uid == 0 || self.uid == uid)
    }

    /// True if `privilege` is granted and has not expired at `now`.
    ///
    /// - Parameters:
    ///   - privilege: The privilege asked for.
    ///   - now: The current clock value.
    public func allows(_ privilege: Privilege, at now: Duration) -> Bool {
        guard let expiry = privileges[privilege] else { return false }
        return !expiry.hasPassed(at: now)
    }

    /// Why `privilege` is not usable at `now`, or `nil` if it is.
    ///
    /// - Parameters:
    ///   - privilege: The privilege asked for.
    ///   - now: The current clock value.
    ///   - what: What the privilege was needed for, for the message ("publish video").
    /// - Returns: `ERROR_CODE_TOKEN_MISSING_PRIVILEGE` if it was never granted,
    ///   `ERROR_CODE_PRIVILEGE_EXPIRED` if it has expired.
    public func refusal(of privilege: Privilege, at now: Duration, for what: String) -> ShowroomError? {
        guard let expiry = privileges[privilege] else {
            return ShowroomError(.tokenMissingPrivilege, "the token has no \(privilege) privilege, needed to \(what); ask the app server for a token that grants it")
        }
        if expiry.hasPassed(at: now) {
            return .privilegeExpired("the token's \(privilege) privilege has expired, needed to \(what); renew the token")
        }
        return nil
    }
}

extension ShowroomError {
    /// The grant does not cover the channel or uid asked for.
    ///
    /// - Parameters:
    ///   - grant: The grant.
    ///   - channel: The channel asked for.
    ///   - uid: The uid asked for.
    /// - Returns: An error with code `ERROR_CODE_TOKEN_CHANNEL_MISMATCH` (2005) or
    ///   `ERROR_CODE_TOKEN_UID_MISMATCH` (2006).
    static func grantMismatch(_ grant: ChannelGrant, channel: String, uid: UInt32) -> ShowroomError {
        if !grant.channel.isEmpty, grant.channel != channel {
            return ShowroomError(.tokenChannelMismatch, "the token is for channel '\(grant.channel)', not '\(channel)'; request a token for '\(channel)'")
        }
        return ShowroomError(.tokenUidMismatch, "the token is for uid \(grant.uid), not \(uid); request a token for uid \(uid)")
    }
}
