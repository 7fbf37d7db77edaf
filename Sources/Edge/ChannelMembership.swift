/// One session's membership in one channel (a `joinChannelEx` connection), as ``ChannelPlane``
/// keeps it.
struct ChannelMembership: Sendable {
    let id: ConnectionID
    let session: SessionID
    let channel: String
    let uid: UInt32
    let joinedAt: Duration
    var role: ClientRole
    var options: MediaOptions
    var grant: ChannelGrant
    /// Neither counted in summaries nor reported: a relay link's connection on the origin, a
    /// relay's stand-in publisher.
    var unreported = false
    /// The tracks actually published (role, options and privileges all allow it).
    var publishing: TrackKinds = []
    /// Explicit subscribe (true) / unsubscribe (false), overriding auto-subscribe; kept for tracks
    /// not published yet.
    var subscriptionOverrides: [TrackKey: Bool] = [:]
    /// Remote tracks muted locally; kept for tracks not published or subscribed yet.
    var mutedTracks: Set<TrackKey> = []
    /// The deadline the last "token will expire" was sent for.
    var warnedDeadline: Duration?
    /// Privileges whose expiry was already handled.
    var expiredPrivileges: Set<Privilege> = []
    /// Volume indication smoothing memory (this connection as listener).
    var reportedVolumes: [UInt32: Double] = [:]
    /// Last stream message sequence per stream id.
    var streamSequences: [UInt32: UInt32] = [:]
    /// Stream message rate window.
    var messageWindowStart: Duration = .zero
    var messagesInWindow = 0
    var messageBytesInWindow = 0

    /// True if remote `key` is to be subscribed (the track may not exist).
    func wantsSubscription(to key: TrackKey) -> Bool {
        guard key.uid != uid else { return false }
        return subscriptionOverrides[key] ?? options.autoSubscribes(key.kind)
    }

    /// The tracks role, options and grant allow it to publish at `now`.
    func allowedTracks(at now: Duration) -> TrackKinds {
        guard role == .broadcaster else { return [] }
        var kinds: TrackKinds = []
        for kind in TrackKind.allCases where options.publishes(kind) && grant.allows(.publish(kind), at: now) {
            kinds.insert(TrackKinds(kind))
        }
        return kinds
    }

    /// The privileges the connection uses now: join always; a broadcaster's publish privileges for
    /// what its options publish.
    var privilegesInUse: [Privilege] {
        var privileges: [Privilege] = [.join]
        if role == .broadcaster {
            if options.publishAudio { privileges.append(.publishAudio) }
            if options.publishVideo { privileges.append(.publishVideo) }
            if options.publishData { privileges.append(.publishData) }
        }
        return privileges
    }
}

extension ChannelMembership {
    /// True if the connection depends on `privilege` now: join always, publish privileges for a
    /// broadcaster whose options publish that.
    func uses(_ privilege: Privilege) -> Bool {
        switch privilege {
        case .join: true
        case .publishAudio: role == .broadcaster && options.publishAudio
        case .publishVideo: role == .broadcaster && options.publishVideo
        case .publishData: role == .broadcaster && options.publishData
        }
    }

    /// The earliest expiry after `now` among the privileges in use: what "token will expire"
    /// warns about.
    func nextExpiry(after now: Duration) -> Duration? {
        var earliest: Duration? = nil
        for privilege in Privilege.allCases where uses(privilege) {
            guard let deadline = grant.privileges[privilege]?.deadline, deadline > now else { continue }
            if earliest == nil || deadline < earliest! { earliest = deadline }
        }
        return earliest
    }

    /// True if a privilege expired without being handled, or a warning is due.
    func hasGrantWork(at now: Duration, warningLead: Duration) -> Bool {
        for (privilege, expiry) in grant.privileges {
            if let deadline = expiry.deadline, deadline <= now, !expiredPrivileges.contains(privilege) { return true }
        }
        if let deadline = nextExpiry(after: now), deadline - warningLead <= now, warnedDeadline != deadline { return true }
        return false
    }
}
