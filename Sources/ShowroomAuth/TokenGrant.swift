/// What a verified RTC token allows: which privileges hold in which channel for which uid, and
/// until when.
///
/// Every time is Unix seconds. A privilege never outlives the token: its expiry is the earlier of
/// the token's and its own (0 in the token meaning "as long as the token").
///
/// ```swift
/// let grant = try verifier.verify(token, channel: "room-1", uid: 42, now: now)
/// if grant.allows(.publishVideoStream, at: now) { ... }
/// if grant.willExpireSoon(now: now) { send(.tokenPrivilegeWillExpire) }
/// ```
public struct TokenGrant: Sendable, Hashable {
    /// Seconds before ``willExpireAt`` at which a client is told "token will expire", so that it
    /// can fetch a new token and renew in time.
    public static let willExpireWarning: UInt32 = 30

    /// The channel the token was verified for.
    public let channel: String
    /// The uid the token was verified for.
    public let uid: UInt32
    /// Whether the token works in any channel (its channel name is empty).
    public let isWildcardChannel: Bool
    /// Whether the token works for any uid (its uid is empty, i.e. uid 0).
    public let isWildcardUid: Bool
    /// Unix time at which the token was issued.
    public let issuedAt: UInt32
    /// Unix time at which the token itself expires.
    public let tokenExpiresAt: UInt32
    /// Unix time at which the token was verified.
    public let verifiedAt: UInt32
    /// Unix time of the earliest expiry that matters: the token's, or that of a privilege still
    /// valid when verified (join, and any publish privilege). The client must renew before it.
    public let willExpireAt: UInt32
    /// Privilege → Unix time it expires, for the privileges the token grants.
    private let expiries: [RTCPrivilege: UInt32]

    /// Creates a grant from the matching RTC service of a token.
    ///
    /// - Parameters:
    ///   - service: The token's RTC service that matched the channel and uid.
    ///   - issuedAt: The token's issue time.
    ///   - tokenExpiresAt: The token's expiry.
    ///   - channel: The channel verified for.
    ///   - uid: The uid verified for.
    ///   - now: The time of verification.
    public init(
        service: RTCService,
        issuedAt: UInt32,
        tokenExpiresAt: UInt32,
        channel: String,
        uid: UInt32,
        now: UInt32
    ) {
        var expiries: [RTCPrivilege: UInt32] = [:]
        for privilege in RTCPrivilege.allCases {
            guard let expire = service[privilege] else { continue }
            // 0 means "as long as the token"; anything else is capped by the token's own expiry.
            expiries[privilege] = expire == 0 ? tokenExpiresAt : min(AccessToken2.offset(issuedAt, by: expire), tokenExpiresAt)
        }
        self.expiries = expiries
        self.channel = channel
        self.uid = uid
        self.isWildcardChannel = service.isWildcardChannel
        self.isWildcardUid = service.isWildcardUid
        self.issuedAt = issuedAt
        self.tokenExpiresAt = tokenExpiresAt
        self.verifiedAt = now
        // A privilege already gone at verification would make the warning fire at once and
        // forever; it is simply not held.
        self.willExpireAt = expiries.values.filter { $0 > now }.reduce(tokenExpiresAt, min)
    }

    /// When `privilege` expires, or `nil` if the token does not grant it.
    ///
    /// - Parameter privilege: The privilege.
    /// - Returns: Unix time at which the privilege stops holding (possibly already past).
    public func expiresAt(_ privilege: RTCPrivilege) -> UInt32? {
        expiries[privilege]
    }

    /// Whether the token grants `privilege` and it has not expired at `now`.
    ///
    /// - Parameters:
    ///   - privilege: The privilege an action needs.
    ///   - now: The current Unix time.
    public func allows(_ privilege: RTCPrivilege, at now: UInt32) -> Bool {
        guard let expiry = expiries[privilege] else { return false }
        return now < expiry
    }

    /// The privileges granted and still valid at `now`.
    ///
    /// - Parameter now: The current Unix time.
    public func privileges(at now: UInt32) -> Set<RTCPrivilege> {
        Set(expiries.filter { now < $0.value }.keys)
    }

    /// Seconds from `now` until ``willExpireAt``; 0 once it has passed.
    ///
    /// - Parameter now: The current Unix time.
    public func secondsUntilExpiry(now: UInt32) -> UInt32 {
        willExpireAt > now ? willExpireAt - now : 0
    }

    /// Whether "token will expire" is due: at most ``willExpireWarning`` seconds remain.
    ///
    /// - Parameter now: The current Unix time.
    public func willExpireSoon(now: UInt32) -> Bool {
        secondsUntilExpiry(now: now) <= Self.willExpireWarning
    }

    /// Unix time at which to send "token will expire": ``willExpireWarning`` seconds before
    /// ``willExpireAt`` (or at verification, if that is already later).
    public var warnAt: UInt32 {
        let warn = willExpireAt > Self.willExpireWarning ? willExpireAt - Self.willExpireWarning : 0
        return max(warn, verifiedAt)
    }
}
