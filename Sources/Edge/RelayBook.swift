import ShowroomWire

/// A publisher of an origin edge, shown in a relayed channel here by a stand-in session.
public struct RelayedPublisher: Hashable, Sendable {
    /// The relayed channel.
    public var channel: String
    /// The publisher's uid.
    public var uid: UInt32

    /// The publisher `uid` of `channel`.
    public init(channel: String, uid: UInt32) {
        self.channel = channel
        self.uid = uid
    }
}

/// The edge a relayed channel is pulled from: the origin the coordinator's claim answer named
/// (`ClaimChannelResponse.relay_of_*`), linked to like a forward's destination edge.
public typealias RelayOrigin = ForwardEdge

/// What ``RelayBook`` asks the edge's shell to do.
public enum RelayDirective: Sendable, Equatable {
    /// The channel is hosted here as a relay of `origin` from now on (its summary changed).
    case hosted(channel: String, origin: RelayOrigin)
    /// Connect a link to `origin` and open its session as the relay link uid `uid`; if it cannot
    /// be connected, tell ``RelayBook/linkDown(endpoint:channel:now:)``.
    case openLink(origin: RelayOrigin, uid: UInt32)
    /// Join `channel` on `origin` as audience over the link to it, subscribing to every track;
    /// a refusal goes to ``RelayBook/channelLost(_:onLink:to:now:)``.
    case link(channel: String, origin: RelayOrigin)
    /// Leave `channel` on `origin`; once answered, tell ``RelayBook/leaveAnswered(onLink:to:)``.
    case unlink(channel: String, origin: RelayOrigin)
    /// Close the link with uid `uid` to `origin` (`EDGE_CLOSE_SESSION` first): no channel is
    /// pulled over it any more.
    case closeLink(origin: RelayOrigin, uid: UInt32)
    /// Ask the channel's owner coordinator again (`CHANNEL_CLAIM`): the link to the origin broke.
    case claim(channel: String)
    /// Send `RELAY_KEYFRAME_REQUEST` for `track` to `origin`.
    case requestKeyframe(TrackID, origin: RelayOrigin)
    /// Open the stand-in session `session` for `publisher` and join it to the channel as a
    /// broadcaster publishing nothing yet.
    case openStandIn(SessionID, publisher: RelayedPublisher)
    /// The stand-in session `session` publishes `track` (`published`) or stops publishing it, as
    /// its publisher on the origin did.
    case standInTrack(SessionID, TrackID, published: Bool)
    /// Close the stand-in session `session`: the publisher quit (`dropped` false: it left, or
    /// nobody took over a released channel's stand-in), or the origin was lost (`dropped`: it
    /// went offline for the viewers as a dropped connection does).
    case endStandIn(SessionID, dropped: Bool)
    /// The channel is no longer relayed here: its stand-ins stay for ``RelayBook/Settings/publisherGrace``
    /// (publishers joining here take them over), then end; its local channel goes once nobody
    /// is left.
    case release(channel: String)
    /// A line for the shell's logger.
    case log(EdgeLogEntry)
}

/// The channels an edge hosts as a relay, as a pure state machine on the edge's clock: one pull
/// per channel from its origin, started by the first local viewer and ended a grace period after
/// the last one leaves; keyframe requests passed upstream at most once per interval per track;
/// after the link breaks, claims every ``Settings/reclaimInterval`` (slower after
/// ``Settings/fastReclaims``) until an answer names an origin, and the publishers shown offline
/// only if the origin has not come back within ``Settings/publisherGrace``.
///
/// It keeps the links too: one per origin edge, with its uid and the channels pulled over it,
/// opened for the first channel and closed once the last one's leave is answered.
///
/// It also keeps the stand-ins: one session per publisher of the origin, opened when the origin
/// announces it and ended when it leaves, when the origin is lost, or a grace after the channel
/// stopped being relayed (an edge that became the channel's origin lets its arriving publishers
/// take over without their viewers seeing them go). And it decides which of the plane's channel
/// activities the coordinators hear: a relay reports its viewers, not the channel's creation and
/// end, which are the origin's.
///
/// Publishing in a relayed channel is refused (``refusal(of:)``): `CHANNEL_ELSEWHERE` naming the
/// origin, which the SDK follows.
public struct RelayBook: Sendable {
    /// The timers.
    public struct Settings: Sendable {
        /// How long a channel's link stays after its last local viewer left.
        public var releaseDelay: Duration = .seconds(5)
        /// Least time between two keyframe requests sent upstream for one track.
        public var keyframeInterval: Duration = .seconds(1)
        /// Time between claims while the origin is unreachable, for the first ``fastReclaims``.
        public var reclaimInterval: Duration = .milliseconds(250)
        /// Claims at ``reclaimInterval``; then one every ``slowReclaimInterval``.
        public var fastReclaims = 40
        /// Time between claims after the fast ones.
        public var slowReclaimInterval: Duration = .seconds(2)
        /// How long publishers stay shown after the link broke, waiting for the origin to come back.
        public var publisherGrace: Duration = .seconds(1)

        /// The defaults.
        public init() {}
    }

    enum State: Sendable, Equatable {
        /// No viewer yet, no link: forgotten at `until` if none comes.
        case unlinked(until: Duration)
        /// Pulling from the origin for local viewers.
        case linked
        /// Pulling, but the last viewer left: unlinked at `until`.
        case releasing(until: Duration)
        /// The link broke: claims until an answer names an origin.
        case down(nextClaim: Duration, claims: Int)
    }

    struct Entry: Sendable {
        var origin: RelayOrigin
        var state: State
        var viewers = 0
        /// The origin's publishers, as stand-ins here.
        var publishers: Set<UInt32> = []
        /// Publishers not heard of since the link broke, and when it broke.
        var stale: Set<UInt32> = []
        var staleSince: Duration = .zero
        var lastKeyframeRequest: [TrackID: Duration] = [:]
    }

    /// A link to an origin edge: its session's uid and the channels joined (or being joined)
    /// over it.
    struct Link: Sendable {
        var origin: RelayOrigin
        var uid: UInt32
        var channels: Set<String> = []
    }

    /// Stand-in session ids: a length byte no routing id has, so never a client's.
    public static let standInIDBase: UInt64 = 0xFF00_0000_0000_0000

    /// The timers it runs with.
    public let settings: Settings
    private var entries: [String: Entry] = [:]
    /// The stand-ins, both ways.
    private var standIns: [RelayedPublisher: SessionID] = [:]
    private var standInPublishers: [SessionID: RelayedPublisher] = [:]
    /// Stand-ins of channels no longer relayed here, and when they end.
    private var orphans: [RelayedPublisher: Duration] = [:]
    private var lastStandIn: UInt64 = 0
    /// Relayed channels whose creation was not reported: their end is not either (the origin's
    /// channel lives on).
    private var silentChannels: Set<String> = []
    /// The uid offset of the last relay link.
    private var lastLinkUID: UInt32
    /// The links, by their origin's client endpoint.
    private var links: [String: Link] = [:]

    /// Creates an empty book.
    ///
    /// - Parameters:
    ///   - settings: The timers.
    ///   - firstLinkUID: Where this edge's relay link uids start (see ``nextLinkUID()``): links
    ///     from several relays join the same origin channel, where one uid holds one connection,
    ///     so each edge starts at a random place (two relays that both counted from 1 replaced
    ///     each other's links).
    public init(settings: Settings = Settings(), firstLinkUID: UInt32 = 0) {
        self.settings = settings
        lastLinkUID = firstLinkUID % (UInt32.max - RelayLinkIdentity.firstUID)
    }

    // MARK: - Reading

    /// Whether no channel is hosted as a relay.
    public var isEmpty: Bool { entries.isEmpty }

    /// Whether nothing is relayed, shown or awaited: no channel, stand-in or unreported channel.
    public var isIdle: Bool { entries.isEmpty && standIns.isEmpty && silentChannels.isEmpty }

    /// Whether `session` is a stand-in (it has no client: what the plane tells it is known here).
    public func isStandIn(_ session: SessionID) -> Bool { standInPublishers[session] != nil }

    /// The stand-in of `publisher`, if it has one.
    public func standIn(of publisher: RelayedPublisher) -> SessionID? { standIns[publisher] }

    /// The uid of a new relay link: the next of this edge's range.
    public mutating func nextLinkUID() -> UInt32 {
        lastLinkUID = lastLinkUID == UInt32.max - RelayLinkIdentity.firstUID ? 0 : lastLinkUID + 1
        return RelayLinkIdentity.firstUID + lastLinkUID
    }

    /// Whether `channel` is hosted as a relay.
    public func isRelayed(_ channel: String) -> Bool { entries[channel] != nil }

    /// Whether `channel` is pulled over the link to `endpoint`: what arrives on the link for
    /// another channel is not this edge's.
    public func pulls(_ channel: String, from endpoint: String) -> Bool {
        links[endpoint]?.channels.contains(channel) ?? false
    }

    /// The stand-in a frame of `uid` in `channel`, received on the link to `endpoint`, is
    /// forwarded as; nil if the channel is not pulled over that link or the publisher has none.
    public func standIn(ofFrameIn channel: String, uid: UInt32, from endpoint: String) -> SessionID? {
        guard pulls(channel, from: endpoint) else { return nil }
        return standIns[RelayedPublisher(channel: channel, uid: uid)]
    }

    /// The origin `channel` is relayed from.
    public func origin(of channel: String) -> RelayOrigin? { entries[channel]?.origin }

    /// Whether the link of `channel` broke and a claim's answer is awaited.
    public func isDown(_ channel: String) -> Bool {
        if case .down = entries[channel]?.state { true } else { false }
    }

    /// Local viewers of `channel`.
    public func viewers(of channel: String) -> Int { entries[channel]?.viewers ?? 0 }

    /// The relayed channels, sorted.
    public var channels: [String] { entries.keys.sorted() }

    /// Why `request` may not run on this edge: becoming a broadcaster (a join, a role switch or
    /// an options update) in a relayed channel is `CHANNEL_ELSEWHERE` with a redirect to the
    /// origin. Nil for anything else.
    ///
    /// A relay link (`fromRelayLink`) joining a channel this edge relays itself is refused too:
    /// relays pull from the origin only.
    public func refusal(of request: EdgeRequest, fromRelayLink: Bool = false) -> ShowroomError? {
        if fromRelayLink, case .join(let name, _, _, _, _) = request, entries[name] != nil {
            return .unavailable("channel '\(name)' is relayed on this edge, not hosted; a relay pulls from the origin edge only")
        }
        let channel: String
        switch request {
        case .join(let name, _, _, .broadcaster, _): channel = name
        case .setRole(let name, .broadcaster): channel = name
        case .updateOptions(let name, let update) where update.role == .broadcaster: channel = name
        default: return nil
        }
        guard let origin = entries[channel]?.origin else { return nil }
        var redirect = WireRedirect()
        redirect.edgeID = origin.id
        redirect.clientEndpoint = origin.endpoint
        redirect.clientCurvePublicKey = origin.curvePublicKey
        return .channelElsewhere(
            "channel '\(channel)' is relayed here from edge \(origin.id) (\(origin.endpoint)); broadcast there", redirect: redirect)
    }

    // MARK: - Events

    /// The channel's owner coordinator answered a claim for `channel` (`hostedHere`: the plane
    /// hosts the channel already). The first `relay_of_*` answer makes the channel relayed; after
    /// the link broke, an answer naming an origin links again, one admitting the channel here ends
    /// relaying (its publishers will join here), a refusal waits for the next claim. An answer
    /// placing the channel here while its link runs ends relaying too: the old origin died and a
    /// publisher joins here.
    public mutating func claimAnswered(_ channel: String, _ outcome: ClaimOutcome, hostedHere: Bool, now: Duration) -> [RelayDirective] {
        if case .placed = outcome, isRelayed(channel), !isDown(channel) { return stopRelaying(channel, now: now) }
        if isDown(channel) {
            switch outcome {
            case .relay(let origin): return hosting(channel, origin: origin, now: now)
            case .admit, .placed: return stopRelaying(channel, now: now)
            case .refuse: return []
            }
        }
        // A channel that became hosted here meanwhile (its publishers joined) stays an origin.
        guard case .relay(let origin) = outcome, isRelayed(channel) || !hostedHere else { return [] }
        return hosting(channel, origin: origin, now: now)
    }

    /// ``host(_:origin:now:)``, announced first (``RelayDirective/hosted(channel:origin:)``).
    public mutating func hosting(_ channel: String, origin: RelayOrigin, now: Duration) -> [RelayDirective] {
        [.hosted(channel: channel, origin: origin)] + host(channel, origin: origin, now: now)
    }

    /// A claim's answer named `origin` for `channel`: host it as a relay (the joins held for the
    /// claim follow), or, after the link broke, pull from that origin now.
    public mutating func host(_ channel: String, origin: RelayOrigin, now: Duration) -> [RelayDirective] {
        guard var entry = entries[channel] else {
            entries[channel] = Entry(origin: origin, state: .unlinked(until: now + settings.releaseDelay))
            return []
        }
        guard case .down = entry.state else {
            // Answers for joins while the link runs: the origin stays the one pulled from.
            return []
        }
        entry.origin = origin
        entry.lastKeyframeRequest = [:]
        entry.state = .linked
        entries[channel] = entry
        return pull(channel, from: origin)
    }

    /// Joins `channel` on `origin` over its link, opened first if there is none.
    private mutating func pull(_ channel: String, from origin: RelayOrigin) -> [RelayDirective] {
        var out: [RelayDirective] = []
        if links[origin.endpoint] == nil {
            let uid = nextLinkUID()
            links[origin.endpoint] = Link(origin: origin, uid: uid)
            out.append(.openLink(origin: origin, uid: uid))
        }
        links[origin.endpoint]?.channels.insert(channel)
        out.append(.link(channel: channel, origin: origin))
        return out
    }

    /// Leaves `channel` on `origin` if it is pulled over the link to it.
    private mutating func unpull(_ channel: String, from origin: RelayOrigin) -> [RelayDirective] {
        guard links[origin.endpoint]?.channels.remove(channel) != nil else { return [] }
        return [.unlink(channel: channel, origin: origin)]
    }

    /// Closes the link to `endpoint` if no channel is pulled over it.
    private mutating func closeIfUnused(_ endpoint: String) -> [RelayDirective] {
        guard let link = links[endpoint], link.channels.isEmpty else { return [] }
        links[endpoint] = nil
        return [.closeLink(origin: link.origin, uid: link.uid)]
    }

    /// The origin at `endpoint` answered the leave of a channel on the link with `uid` (answers
    /// of a link that broke meanwhile change nothing): the link closes if no channel is pulled
    /// over it any more.
    public mutating func leaveAnswered(onLink uid: UInt32, to endpoint: String) -> [RelayDirective] {
        guard links[endpoint]?.uid == uid else { return [] }
        return closeIfUnused(endpoint)
    }

    /// The origin at `endpoint` refused `channel`'s join on the link with `uid`, or ended its
    /// connection there: the channel claims again (``linkDown(endpoint:channel:now:)``) and the
    /// link closes if it pulls nothing else. Nothing if the channel is not pulled over that link.
    public mutating func channelLost(_ channel: String, onLink uid: UInt32, to endpoint: String, now: Duration) -> [RelayDirective] {
        guard links[endpoint]?.uid == uid, links[endpoint]?.channels.remove(channel) != nil else { return [] }
        return linkDown(endpoint: endpoint, channel: channel, now: now) + closeIfUnused(endpoint)
    }

    /// A claim's answer said this edge hosts `channel` itself (or it is hosted elsewhere, not as
    /// a relay): it is no longer relayed; its stand-ins go after the grace.
    public mutating func stopRelaying(_ channel: String, now: Duration) -> [RelayDirective] {
        guard let entry = entries.removeValue(forKey: channel) else { return [] }
        var out: [RelayDirective] = []
        if case .linked = entry.state { out += unpull(channel, from: entry.origin) }
        if case .releasing = entry.state { out += unpull(channel, from: entry.origin) }
        out.append(release(channel, now: now))
        return out
    }

    /// `channel` is no longer relayed: its stand-ins are orphans until the grace ends.
    private mutating func release(_ channel: String, now: Duration) -> RelayDirective {
        for publisher in standIns.keys where publisher.channel == channel {
            orphans[publisher] = now + settings.publisherGrace
        }
        return .release(channel: channel)
    }

    /// A local viewer joined `channel`: the first one starts the pull.
    public mutating func viewerJoined(_ channel: String) -> [RelayDirective] {
        guard var entry = entries[channel] else { return [] }
        entry.viewers += 1
        let pulling: Bool
        switch entry.state {
        case .unlinked: pulling = true
        case .releasing: pulling = false
        case .linked, .down:
            entries[channel] = entry
            return []
        }
        entry.state = .linked
        entries[channel] = entry
        return pulling ? pull(channel, from: entry.origin) : []
    }

    /// A local viewer left `channel`: after the last one, the link goes after ``Settings/releaseDelay``.
    public mutating func viewerLeft(_ channel: String, now: Duration) {
        guard var entry = entries[channel], entry.viewers > 0 else { return }
        entry.viewers -= 1
        if entry.viewers == 0, case .linked = entry.state {
            entry.state = .releasing(until: now + settings.releaseDelay)
        }
        entries[channel] = entry
    }

    /// The origin announced a publisher in `channel` (user joined): it is a stand-in here,
    /// opened now unless it has one (announced again after the link came back, or an orphan).
    public mutating func publisherJoined(_ channel: String, uid: UInt32) -> [RelayDirective] {
        entries[channel]?.publishers.insert(uid)
        entries[channel]?.stale.remove(uid)
        let publisher = RelayedPublisher(channel: channel, uid: uid)
        orphans[publisher] = nil
        guard standIns[publisher] == nil else { return [] }
        lastStandIn += 1
        let id = SessionID(Self.standInIDBase | lastStandIn)
        standIns[publisher] = id
        standInPublishers[id] = publisher
        return [.openStandIn(id, publisher: publisher)]
    }

    /// The origin said a publisher of `channel` went offline: its stand-in quits.
    public mutating func publisherLeft(_ channel: String, uid: UInt32) -> [RelayDirective] {
        endStandIn(RelayedPublisher(channel: channel, uid: uid), dropped: false)
    }

    /// What the origin at `endpoint` said over the link with the uid `linkUID`: a publisher of a
    /// channel pulled over it joined (its stand-in opens) or went offline (it quits), published
    /// or unpublished a track (its stand-in does too), or the origin ended the channel's
    /// connection there (the channel claims again, ``channelLost(_:onLink:to:now:)``). What it
    /// says of channels not pulled over that link, and anything else, changes nothing; the end
    /// of the link's session is the link's (``linkDown(endpoint:channel:now:)``).
    public mutating func linkEvent(_ event: EdgeEvent, onLink linkUID: UInt32, from endpoint: String, now: Duration) -> [RelayDirective] {
        switch event {
        case .userJoined(let channel, let uid) where pulls(channel, from: endpoint):
            return publisherJoined(channel, uid: uid)
        case .userOffline(let channel, let uid, _) where pulls(channel, from: endpoint):
            return publisherLeft(channel, uid: uid)
        case .remoteTrackPublished(let track) where pulls(track.channel, from: endpoint):
            return standInTrack(track, published: true)
        case .remoteTrackUnpublished(let track) where pulls(track.channel, from: endpoint):
            return standInTrack(track, published: false)
        case .connectionClosed(let channel, let reason) where pulls(channel, from: endpoint):
            let origin = links[endpoint].map { "\($0.origin)" } ?? endpoint
            return [.log(EdgeLogEntry(.warning, "relay of channel \(channel): edge \(origin) closed the link's connection: \(reason)"))]
                + channelLost(channel, onLink: linkUID, to: endpoint, now: now)
        default:
            return []
        }
    }

    /// A publisher's track on the origin, for its stand-in here; nothing if it has none.
    private func standInTrack(_ track: TrackID, published: Bool) -> [RelayDirective] {
        guard let id = standIns[RelayedPublisher(channel: track.channel, uid: track.uid)] else { return [] }
        return [.standInTrack(id, track, published: published)]
    }

    private mutating func endStandIn(_ publisher: RelayedPublisher, dropped: Bool) -> [RelayDirective] {
        entries[publisher.channel]?.publishers.remove(publisher.uid)
        entries[publisher.channel]?.stale.remove(publisher.uid)
        orphans[publisher] = nil
        guard let id = standIns.removeValue(forKey: publisher) else { return [] }
        standInPublishers[id] = nil
        return [.endStandIn(id, dropped: dropped)]
    }

    /// Counts the local viewers of relayed channels from the plane's activities (stand-ins are
    /// never reported, so every audience join is a viewer's), and decides whether an activity is
    /// reported to the coordinators: not a relayed channel's creation, nor the end of one whose
    /// creation was not reported.
    public mutating func report(_ activity: ChannelActivity, now: Duration) -> (reported: Bool, directives: [RelayDirective]) {
        let channel = activity.channel
        switch activity.kind {
        case .audienceJoined: return (true, viewerJoined(channel))
        case .audienceLeft: viewerLeft(channel, now: now)
        case .channelCreated where isRelayed(channel):
            silentChannels.insert(channel)
            return (false, [])
        case .channelDestroyed:
            return (silentChannels.remove(channel) == nil, [])
        default: break
        }
        return (true, [])
    }

    /// The link to the edge at `endpoint` broke, or could not be connected (or, with `only`, the
    /// origin ended that channel's connection on it): those channels claim again at once, and
    /// keep their publishers for ``Settings/publisherGrace``. A broken link is forgotten: the
    /// next pull from that edge opens a new one.
    public mutating func linkDown(endpoint: String, channel only: String? = nil, now: Duration) -> [RelayDirective] {
        if let only { links[endpoint]?.channels.remove(only) } else { links[endpoint] = nil }
        var out: [RelayDirective] = []
        for channel in entries.keys.sorted() where only == nil || only == channel {
            guard var entry = entries[channel], entry.origin.endpoint == endpoint else { continue }
            switch entry.state {
            case .linked, .releasing: break
            case .unlinked, .down: continue
            }
            entry.state = .down(nextClaim: now + settings.reclaimInterval, claims: 1)
            entry.stale = entry.publishers
            entry.staleSince = now
            entries[channel] = entry
            out.append(.claim(channel: channel))
        }
        return out
    }

    /// The relay's plane wants a keyframe of a stand-in's track: passed upstream unless one was
    /// sent for it within ``Settings/keyframeInterval`` (the plane asks again while still wanted).
    public mutating func keyframeWanted(_ track: TrackID, now: Duration) -> [RelayDirective] {
        guard var entry = entries[track.channel] else { return [] }
        switch entry.state {
        case .linked, .releasing: break
        case .unlinked, .down: return []
        }
        if let last = entry.lastKeyframeRequest[track], now - last < settings.keyframeInterval { return [] }
        entry.lastKeyframeRequest[track] = now
        entries[track.channel] = entry
        return [.requestKeyframe(track, origin: entry.origin)]
    }

    /// Lets time pass: releases, claims, publishers past their grace.
    public mutating func tick(now: Duration) -> [RelayDirective] {
        var out: [RelayDirective] = []
        for channel in entries.keys.sorted() {
            guard var entry = entries[channel] else { continue }
            if !entry.stale.isEmpty, now - entry.staleSince >= settings.publisherGrace {
                let stale = entry.stale.sorted()
                entry.publishers.subtract(entry.stale)
                entry.stale = []
                entries[channel] = entry
                for uid in stale { out += endStandIn(RelayedPublisher(channel: channel, uid: uid), dropped: true) }
            }
            switch entry.state {
            case .unlinked(let until) where until <= now:
                entries[channel] = nil
                out.append(release(channel, now: now))
                continue
            case .releasing(let until) where until <= now:
                entries[channel] = nil
                out += unpull(channel, from: entry.origin) + [release(channel, now: now)]
                continue
            case .down where entry.viewers == 0:
                entries[channel] = nil
                out.append(release(channel, now: now))
                continue
            case .down(let nextClaim, let claims) where nextClaim <= now:
                let interval = claims + 1 < settings.fastReclaims ? settings.reclaimInterval : settings.slowReclaimInterval
                entry.state = .down(nextClaim: now + interval, claims: claims + 1)
                out.append(.claim(channel: channel))
            default:
                break
            }
            entries[channel] = entry
        }
        // Stand-ins of a released channel that no publisher took over go (quit).
        for (publisher, until) in orphans.sorted(by: { ($0.key.channel, $0.key.uid) < ($1.key.channel, $1.key.uid) })
        where until <= now {
            out += endStandIn(publisher, dropped: false)
        }
        return out
    }
}
