import ShowroomWire

/// The channel plane of an edge, as a pure state machine: client sessions, their channel
/// connections (several per session, the `joinChannelEx` model), channels with their publishers
/// and subscribers, and the forwarding of media frames.
///
/// A value type with no I/O and no clock: the shell (the edge process, which owns the ZeroMQ
/// ROUTER) calls one entry point per received message or timer tick, passing the current value of
/// a monotonic clock, and carries out the ``EdgeDirective``s returned, in order: replies and events
/// to sessions, keyframe requests to publishers, GOP-cache flushes, session closes, log lines.
/// Tokens are verified by the shell, which passes the resulting ``ChannelGrant``; everything the
/// grant implies afterwards (privilege checks, "token will expire", revocation at expiry, renewal in
/// place) is enforced here.
///
/// Media frames take a separate, allocation-free path: ``forward(_:info:from:now:send:)`` calls the
/// shell's `send` callback once per subscriber that should get the frame, and learns from its
/// ``DeliveryOutcome`` which subscribers are congested. `Frame` is whatever the shell forwards and
/// keeps in GOP caches — ZeroMQ `Multipart` references in the edge, plain values in tests.
///
/// Semantics, after the seeds' SDKs:
/// - **Visibility.** Broadcasters are visible: the others get ``EdgeEvent/userJoined(channel:uid:)``
///   and ``EdgeEvent/userOffline(channel:uid:reason:)`` (quit, dropped, became audience) about
///   them, and a joiner gets user-joined for every broadcaster already there. Audience members are
///   never announced.
/// - **Publishing** needs the broadcaster role, the media option and the grant's publish privilege;
///   a track is published (``EdgeEvent/remoteTrackPublished(_:)``) as soon as all three hold, and
///   frames of anything else are refused with a distinct code and never forwarded.
/// - **Subscribing** follows the auto-subscribe options unless overridden per track
///   (``subscribe(_:requestID:track:now:)``); a subscribed track can be muted locally.
/// - **Reports.** What business servers must hear (channel created/destroyed, broadcaster and
///   audience joins and leaves with their reasons, role changes) comes out as
///   ``EdgeDirective/report(_:)``, in the order the plane saw it; audience members included.
/// - **Bans** from the room-coordinators (``applyBans(_:now:)``) close connections at once and
///   refuse joins, publishes and becoming broadcaster with `BANNED` until they end.
/// - **Liveness.** Any message is a heartbeat; a session silent for
///   ``EdgeSettings/heartbeatTimeout`` is dropped by ``tick(now:)``, and its visible users go
///   offline (dropped) in every channel it held.
public struct ChannelPlane<Frame> {
    /// The settings it runs with.
    public let settings: EdgeSettings
    /// Counters since creation.
    public internal(set) var statistics = EdgeStatistics()

    var sessions: [SessionID: ClientSession] = [:]
    var sessionsByClient: [String: SessionID] = [:]
    var channels: [String: Channel<Frame>] = [:]
    /// Bans in force, by channel, uid and address.
    private(set) var bans: [ChannelBan.Key: ChannelBan] = [:]
    /// How many bans in force name an address: only while some do does a ban check look at one.
    private(set) var addressBans = 0
    /// Stages of channels that run rooms, by channel name.
    var stages: [String: ChannelStage] = [:]
    /// Keeps `ban` for `key`, or forgets the ban held for it (nil).
    mutating func setBan(_ ban: ChannelBan?, for key: ChannelBan.Key) {
        let before = if let ban { bans.updateValue(ban, forKey: key) } else { bans.removeValue(forKey: key) }
        if !key.ip.isEmpty { addressBans += (ban == nil ? 0 : 1) - (before == nil ? 0 : 1) }
    }

    /// The earliest end among ``bans``, so the timer looks at them only when one is due.
    var nextBanExpiry: Duration?
    var lastConnectionID: UInt64 = 0
    var lastAssignedUID: UInt32 = 0
    /// Reused by the frame path, so forwarding allocates nothing.
    var transitionScratch = ContiguousArray<SubscriberTransition>()

    /// Uids the edge assigns (join with uid 0 and a wildcard-uid grant) start here, above the uids
    /// apps usually assign themselves.
    static var firstAssignedUID: UInt32 { 0x8000_0000 }

    /// Creates an empty plane.
    ///
    /// - Parameter settings: Limits, timers and cache bounds; the documented defaults if omitted.
    public init(settings: EdgeSettings = EdgeSettings()) {
        self.settings = settings
        transitionScratch.reserveCapacity(64)
    }

    // MARK: - Reading

    /// Number of open sessions.
    public var sessionCount: Int { sessions.count }

    /// Number of bans in force (each ends at its time).
    public var banCount: Int { bans.count }

    /// Number of stages held (each removed when its room closes).
    public var stageCount: Int { stages.count }

    /// Number of channel connections over all channels.
    public var connectionCount: Int { channels.values.reduce(0) { $0 + $1.connections.count } }

    /// Number of channels with at least one connection.
    public var channelCount: Int { channels.count }

    /// Names of the channels with at least one connection, sorted.
    public var channelNames: [String] { channels.keys.sorted() }

    /// Every hosted channel with its broadcasters and connection count, sorted by name (what
    /// the edge reports to the room-coordinators). Relay links and a relay's stand-in publishers
    /// are left out: a relay reports its local viewers, an origin its own users.
    public var channelSummaries: [ChannelSummary] {
        channels.values.map { channel in
            let reported = Self.reported(channel)
            return ChannelSummary(
                name: channel.name, broadcasters: reported.filter { $0.role == .broadcaster }.map(\.uid),
                connections: reported.count)
        }.sorted { $0.name < $1.name }
    }

    /// The users of channel `name` as the edge reports them (relay links and a relay's stand-in
    /// publishers left out), in join order; empty when nobody is connected there.
    public func users(in name: String) -> [ConnectionSnapshot] {
        channels[name].map { Self.reported($0).map(Self.snapshot) } ?? []
    }

    private static func reported(_ channel: Channel<Frame>) -> [ChannelMembership] {
        channel.order.compactMap { channel.connections[$0] }.filter { !$0.unreported }
    }

    /// An open session.
    ///
    /// - Parameter id: A session.
    /// - Returns: Its state, or `nil` if it is not open.
    public func session(_ id: SessionID) -> SessionSnapshot? {
        guard let session = sessions[id] else { return nil }
        return SessionSnapshot(
            id: id, clientID: session.clientID, sdkVersion: session.sdkVersion, openedAt: session.openedAt,
            lastHeard: session.lastHeard, channels: session.channels, volumeIndication: session.volume)
    }

    /// A channel with its connections and tracks.
    ///
    /// - Parameter name: The channel name.
    /// - Returns: Its state, or `nil` if nobody is connected to it.
    public func channel(_ name: String) -> ChannelSnapshot? {
        guard let channel = channels[name] else { return nil }
        let connections = channel.order.compactMap { channel.connections[$0].map(Self.snapshot) }
        let tracks = channel.trackKeys.map { key -> TrackSnapshot in
            let forwarder = channel.tracks[key]!
            var subscribers: [SessionID] = []
            var muted: [SessionID] = []
            var waiting: [SessionID] = []
            forwarder.forEachSubscriber { session, state, isMuted in
                subscribers.append(session)
                if isMuted { muted.append(session) }
                if case .awaitingKeyframe = state { waiting.append(session) }
            }
            return TrackSnapshot(
                track: key.id(in: name), publisher: forwarder.publisher, subscribers: subscribers, muted: muted,
                awaitingKeyframe: waiting, cachedFrames: forwarder.cache?.count ?? 0, cachedBytes: forwarder.cache?.byteCount ?? 0)
        }
        return ChannelSnapshot(name: name, createdAt: channel.createdAt, connections: connections, tracks: tracks)
    }

    /// Whether `session` publishes `track` now (its frames of that track are forwarded): what the
    /// edge checks before forwarding a frame into other channels too.
    /// Whether `session` is another edge's forward link (a client session an edge opened here).
    public func isForwardLink(_ session: SessionID) -> Bool { sessions[session]?.isForwardLink ?? false }

    public func publishes(_ session: SessionID, _ track: TrackID) -> Bool {
        guard let c = channels.index(forKey: track.channel),
            let t = channels.values[c].tracks.index(forKey: TrackKey(uid: track.uid, kind: track.kind))
        else { return false }
        return channels.values[c].tracks.values[t].publisher == session
    }

    /// One session's connection to one channel.
    ///
    /// - Parameters:
    ///   - session: The session.
    ///   - channel: The channel name.
    /// - Returns: The connection, or `nil` if the session is not connected to the channel.
    public func connection(_ session: SessionID, channel: String) -> ConnectionSnapshot? {
        channels[channel]?.connections[session].map(Self.snapshot)
    }

    static func snapshot(_ connection: ChannelMembership) -> ConnectionSnapshot {
        ConnectionSnapshot(
            id: connection.id, session: connection.session, channel: connection.channel, uid: connection.uid,
            role: connection.role, options: connection.options, grant: connection.grant,
            publishing: connection.publishing.kinds, joinedAt: connection.joinedAt)
    }

    // MARK: - Helpers shared by the entry points

    /// Answers a request successfully (nothing for a one-way request).
    func reply(_ body: EdgeReplyBody, _ kind: EdgeRequestKind, requestID: UInt64, to session: SessionID, _ out: inout [EdgeDirective]) {
        guard requestID != 0 else { return }
        out.append(.reply(EdgeReply(requestID: requestID, kind: kind, result: .success(body)), to: session))
    }

    /// Refuses a request: a failed reply, or for a one-way request a (rate-limited) error event.
    mutating func fail(
        _ error: ShowroomError, _ kind: EdgeRequestKind, requestID: UInt64, to session: SessionID,
        channel: String = "", now: Duration, _ out: inout [EdgeDirective]
    ) {
        if requestID != 0 {
            out.append(.reply(EdgeReply(requestID: requestID, kind: kind, result: .failure(error)), to: session))
        } else {
            reportRefusal(error, to: session, channel: channel, track: nil, now: now, &out)
        }
    }

    /// Sends an error event about a refused one-way message, at most once per
    /// `refusalReportInterval` for the same code and channel.
    mutating func reportRefusal(
        _ error: ShowroomError, to session: SessionID, channel: String, track: TrackKind?, now: Duration,
        _ out: inout [EdgeDirective]
    ) {
        if let last = sessions[session]?.lastRefusal, last.code == error.code, last.channel == channel,
            now - last.at < settings.refusalReportInterval
        {
            return
        }
        sessions[session]?.lastRefusal = ClientSession.Refusal(code: error.code, channel: channel, at: now)
        out.append(.send(.error(error, channel: channel, track: track), to: session))
    }

    /// Records that a session was heard from.
    mutating func touch(_ session: SessionID, now: Duration) {
        sessions[session]?.lastHeard = now
    }

    /// Takes a channel out of the table for mutation (no copy-on-write); give it back with
    /// ``store(_:now:_:)``.
    mutating func take(_ name: String) -> Channel<Frame>? {
        channels.removeValue(forKey: name)
    }

    /// What is wrong with the plane's books, empty when they agree: every session's channel list
    /// names channels that hold it, every connection belongs to an open session that lists its
    /// channel, no channel is empty, uids map to their connections, broadcasters are counted
    /// right. Tests and fuzzers check it after every step: a connection that vanishes from one
    /// side only is the bug class where a client stays silently broken.
    public var inconsistencies: [String] {
        var found: [String] = []
        for (id, session) in sessions {
            if Set(session.channels).count != session.channels.count { found.append("session \(id) lists a channel twice") }
            for name in session.channels where channels[name]?.connections[id] == nil {
                found.append("session \(id) lists channel \(name), which does not hold it")
            }
        }
        for (name, channel) in channels {
            if channel.connections.isEmpty { found.append("channel \(name) is empty but kept") }
            if channel.name != name { found.append("channel \(channel.name) is filed as \(name)") }
            var broadcasters = 0
            for (id, connection) in channel.connections {
                if connection.role == .broadcaster { broadcasters += 1 }
                if sessions[id]?.channels.contains(name) != true {
                    found.append("channel \(name) holds session \(id), which is not open or does not list it")
                }
                if channel.sessionByUID[connection.uid] != id { found.append("uid \(connection.uid) in \(name) is not mapped to its session \(id)") }
                if !channel.order.contains(id) { found.append("session \(id) is missing from the order of \(name)") }
            }
            if channel.order.count != channel.connections.count { found.append("the order of \(name) has \(channel.order.count) entries for \(channel.connections.count) connections") }
            if broadcasters != channel.broadcasters { found.append("channel \(name) counts \(channel.broadcasters) broadcasters, holds \(broadcasters)") }
        }
        return found.sorted()
    }

    /// Puts a channel back, or forgets it if nobody is left in it (reporting its end if its
    /// creation was reported).
    mutating func store(_ channel: Channel<Frame>, now: Duration, _ out: inout [EdgeDirective]) {
        if !channel.connections.isEmpty {
            channels[channel.name] = channel
        } else if channel.reported {
            out.append(.log(EdgeLogEntry(.info, "channel \(channel.name) closed: nobody left")))
            out.append(.report(ChannelActivity(.channelDestroyed, channel: channel.name, at: now)))
        }
    }
}

extension ChannelPlane: Sendable where Frame: Sendable {}
