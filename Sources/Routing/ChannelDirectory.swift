import ShowroomWire

/// A coordinator's view of where channels run, as a pure value type: what the edges report
/// (their channels, whether they drain), the placements every coordinator holds, and the relays
/// busy channels' audiences were sent to. It decides placements, claims and relay choices from
/// those and from the alive edges the caller passes in (with whether this coordinator's link to
/// each broke, and where clients connect to each), and builds the answers that send clients to an
/// edge; the shell carries out the decisions: it sends the answers, persists and replicates what
/// a decision recorded, probes an edge a client could not reach.
public struct ChannelDirectory: Sendable {
    /// An alive edge that serves clients, as a decision sees it.
    public struct Edge: Sendable, Equatable {
        /// The edge's node id.
        public var id: String
        /// How many channels it hosts (its published load).
        public var channels: Int
        /// Whether this coordinator's connection to it broke (the edge most likely died).
        public var linkBroken: Bool
        /// Where clients connect to it, for the answers that send them there.
        public var clientEndpoint: String
        /// Its CURVE public key for client links (Z85); empty if it does not encrypt them.
        public var clientCurvePublicKey: String
        /// Where browsers' sessions connect to it; empty if it takes none.
        public var webSocketEndpoint: String

        /// An edge `id` with `channels` hosted, reached by clients at the endpoints given.
        public init(id: String, channels: Int = 0, linkBroken: Bool = false, clientEndpoint: String = "",
                    clientCurvePublicKey: String = "", webSocketEndpoint: String = "") {
            self.id = id
            self.channels = channels
            self.linkBroken = linkBroken
            self.clientEndpoint = clientEndpoint
            self.clientCurvePublicKey = clientCurvePublicKey
            self.webSocketEndpoint = webSocketEndpoint
        }
    }

    /// What a placement request got.
    public enum Placement: Sendable, Equatable {
        /// The channel is hosted on `edge`; `recorded` is the placement this decision made (to
        /// persist and replicate before answering), nil when it stood already.
        case placed(edge: String, recorded: RoomChannelPlacement?)
        /// An audience member of a busy channel goes to relay `edge` (or the origin itself).
        case relay(edge: String)
    }

    /// What a claim got.
    public enum Claim: Sendable, Equatable {
        /// The claiming edge hosts the channel; `recorded` as for ``Placement/placed(edge:recorded:)``.
        case granted(recorded: RoomChannelPlacement?)
        /// Another edge hosts it: the claiming edge sends its client there.
        case elsewhere(edge: String, recorded: RoomChannelPlacement?)
        /// The claiming edge is a relay chosen for the channel's audience: it pulls from `origin`.
        case relay(origin: String)
    }

    /// The placements (every coordinator holds them all).
    public private(set) var placements: PlacementTable
    /// Where busy channels' audience members went (origin or relay edges).
    public private(set) var relays: RelayPlanner
    /// The latest channel list each edge reported, by edge id.
    public private(set) var reported: [String: [RoomChannelStatus]] = [:]
    /// When each edge's latest channel list arrived.
    public private(set) var reportedAtMs: [String: Int64] = [:]
    /// The edges reporting each channel as its origin, by channel name (from ``reported``).
    public private(set) var hostsByChannel: [String: Set<String>] = [:]
    /// The edges whose latest report says they drain: nothing is placed on them, and the channels
    /// they are the origin of move on their next placement.
    public private(set) var draining: Set<String> = []
    /// The run each edge last reported from (its activities' origin), by edge id; an edge that
    /// died is dropped.
    public private(set) var runs: [String: String] = [:]
    /// When each edge's run last reported.
    private var runHeardAtMs: [String: Int64] = [:]
    /// Runs gone for good, the latest ``retiredRunsKept`` in order: replaced by a later run of
    /// their edge, or their process died. A late report of one changes nothing.
    private var retired: [String] = []
    private var retiredSet: Set<String> = []

    /// How many gone runs are remembered: far more than edges restart while a report of an old
    /// run could still be on its way.
    public static let retiredRunsKept = 1_024
    /// The longest edge run name taken from a report.
    public static let maxRunBytes = 200
    /// How recent an edge's last report must be for a run of it never heard here to count as
    /// gone: every edge reports to every coordinator at least every second.
    public static let runHeardWithinMs: Int64 = 3_000

    /// An empty directory whose placements expire after `placementExpiryMs` without a report and
    /// whose channels get relays past `relayThreshold` viewers on an edge (0: never).
    public init(placementExpiryMs: Int64, relayThreshold: Int) {
        placements = PlacementTable(expiryMs: placementExpiryMs)
        relays = RelayPlanner(threshold: relayThreshold)
    }

    // MARK: - What the edges say

    /// An edge's report: whether it drains, and (when the report carries them) its channels.
    /// A draining report from an edge that is not alive (the last report of a drain that arrived
    /// after the edge left) is not taken: the same id may come back as a new process.
    /// - Returns: Whether the edge began to drain with this report.
    /// - Parameter run: The edge run that sent the report (empty: not said). A run other than the
    ///   edge's last one replaces it, which is then gone for good (``isGone(edge:run:nowMs:)``).
    ///   Only a run of this edge (`<edge>/…`, at most ``maxRunBytes``) is taken: an edge cannot
    ///   retire another's.
    @discardableResult
    public mutating func edgeReported(_ edge: String, run: String = "", draining isDraining: Bool, channels: [RoomChannelStatus]?,
                                      edgeAlive: Bool, nowMs: Int64) -> Bool {
        if run.hasPrefix("\(edge)/"), run.utf8.count <= Self.maxRunBytes, !retiredSet.contains(run) {
            if let old = runs[edge], old != run { retire(old) }
            runs[edge] = run
            runHeardAtMs[edge] = nowMs
        }
        var began = false
        if isDraining, edgeAlive {
            began = draining.insert(edge).inserted
        } else if !isDraining, channels != nil {
            draining.remove(edge)
        }
        if let channels {
            setChannels(of: edge, channels, nowMs: nowMs)
            placements.reported(channels: channels.map(\.name), nowMs: nowMs)
        }
        return began
    }

    /// The alive edges changed: channels placed on edges that are gone lose their placement (so
    /// the next request places them again) and those edges' reports and drains are forgotten.
    /// - Returns: The placements dropped (to delete from the store).
    public mutating func edgesChanged(alive: Set<String>) -> [RoomChannelPlacement] {
        let evicted = placements.evict(keepingOnly: alive)
        for edge in reported.keys.sorted() where !alive.contains(edge) { setChannels(of: edge, nil, nowMs: 0) }
        // An edge that is gone drains no more (a new process under its id starts afresh).
        draining.formIntersection(alive)
        return evicted
    }

    /// Edges whose process died (not alive, and this coordinator's connection to each broke; or
    /// left): their runs are gone for good. An edge only cut off by a partition is not among
    /// them: it may come back with its connections.
    public mutating func edgesDied(_ edges: Set<String>) {
        for edge in edges.sorted() {
            if let run = runs.removeValue(forKey: edge) { retire(run) }
            runHeardAtMs[edge] = nil
        }
    }

    /// Whether `edge`'s `run` is gone for good: the edge reported from a later run since, or its
    /// process died. Its connections are gone, and nobody will report them leaving. A run never
    /// heard here (known from another coordinator's record) is gone when the edge reports from
    /// another run now; not when its last report is old (this coordinator may be cut off from
    /// the edge's new run).
    public func isGone(edge: String, run: String, nowMs: Int64) -> Bool {
        if retiredSet.contains(run) { return true }
        guard let current = runs[edge], current != run, let heard = runHeardAtMs[edge] else { return false }
        return nowMs - heard <= Self.runHeardWithinMs
    }

    private mutating func retire(_ run: String) {
        guard retiredSet.insert(run).inserted else { return }
        retired.append(run)
        if retired.count > Self.retiredRunsKept { retiredSet.remove(retired.removeFirst()) }
    }

    /// Takes an edge's latest channel list, or its absence (the edge is gone).
    private mutating func setChannels(of edge: String, _ channels: [RoomChannelStatus]?, nowMs: Int64) {
        if channels == nil { draining.remove(edge) }
        for old in reported[edge] ?? [] {
            hostsByChannel[old.name]?.remove(edge)
            if hostsByChannel[old.name]?.isEmpty == true { hostsByChannel[old.name] = nil }
            if !old.originEdge.isEmpty { relays.reported(edge, relays: false, channel: old.name) }
        }
        reported[edge] = channels
        reportedAtMs[edge] = channels == nil ? nil : nowMs
        for channel in channels ?? [] {
            // A relay's copy of a channel is not where the channel is: its origin is.
            if channel.originEdge.isEmpty {
                hostsByChannel[channel.name, default: []].insert(edge)
            } else {
                relays.reported(edge, relays: true, channel: channel.name)
            }
        }
    }

    // MARK: - Questions

    /// The publishers of `channel` some edge reports recording, sorted.
    public func recordingUIDs(of channel: String) -> [UInt32] {
        var uids: Set<UInt32> = []
        for edge in hostsByChannel[channel] ?? [] {
            for status in reported[edge] ?? [] where status.name == channel { uids.formUnion(status.recording) }
        }
        return uids.sorted()
    }

    /// The edges that report hosting `channel` as its origin and do not drain, sorted.
    public func hosts(of channel: String) -> [String] {
        hostsByChannel[channel].map { Array($0.subtracting(draining)).sorted() } ?? []
    }

    /// The edge a channel's publishers are on: the first reporting host, else its placement.
    public func originEdge(of channel: String) -> String? {
        hostsByChannel[channel]?.sorted().first ?? placements.placements[channel]?.edgeID
    }

    /// Whether anything still names `channel` (an edge hosts it or a placement does): its event
    /// numbers must be kept.
    public func isInUse(_ channel: String) -> Bool {
        hostsByChannel[channel] != nil || placements.placements[channel] != nil
    }

    /// The edges whose latest report lists `channel`, as its origin or as a relay of it, by id.
    public func edges(reporting channel: String) -> [String] {
        reported.filter { $0.value.contains { $0.name == channel } }.keys.sorted()
    }

    /// Every channel the edges reported, one entry per edge that reported it.
    public var reportedChannels: [RoomChannelStatus] {
        reported.keys.sorted().flatMap { reported[$0] ?? [] }
    }

    /// Of `edges`, those a channel or an audience member may be placed on: not draining.
    public func placeable(_ edges: [Edge]) -> [Edge] {
        edges.filter { !draining.contains($0.id) }
    }

    /// Whether an edge's `channelCreated` or `channelDestroyed` of `channel` is the channel's own
    /// beginning or end, to be announced: not while another edge hosts the channel as its origin
    /// or the channel is placed on another edge (a move's two edges overlap, and a channel placed
    /// twice across a partition runs on two until one sends its clients to the other), for the
    /// channel goes on there. The placement counts too because edges report their channels only
    /// every so often: the other edge's latest report may not list the channel yet.
    public func announces(_ type: RoomChannelEventType, of channel: String, from edge: String) -> Bool {
        guard type == .channelCreated || type == .channelDestroyed else { return true }
        if let placed = placements.placements[channel]?.edgeID, placed != edge { return false }
        return hostsByChannel[channel]?.subtracting([edge]).isEmpty ?? true
    }

    // MARK: - Decisions

    /// A channel an edge hosts as its origin while the channel is placed on another edge.
    public struct Stray: Sendable, Equatable {
        /// The channel.
        public var channel: String
        /// The edge it is placed on, where the stray edge's clients are to go.
        public var placedOn: String

        /// Channel `channel`, placed on `placedOn`.
        public init(channel: String, placedOn: String) {
            self.channel = channel
            self.placedOn = placedOn
        }
    }

    /// The channels `edge` reports hosting as their origin that `owned` says this coordinator
    /// decides for, while they are placed on another of `edges` that takes clients (placeable, its
    /// link here whole). Two sides of a partition can each place a channel, each on an edge of
    /// its own; once it heals the placements merge to one, and the edge left with the other
    /// sends its clients to it, so that the channel's viewers and publishers meet on one edge
    /// again. A draining edge is left alone: its clients are moving already.
    public func strays(on edge: String, edges: [Edge], owned: (String) -> Bool) -> [Stray] {
        guard !draining.contains(edge), let channels = reported[edge] else { return [] }
        let takers = Set(placeable(edges).filter { !$0.linkBroken }.map(\.id))
        return channels.compactMap { status -> Stray? in
            guard status.originEdge.isEmpty, owned(status.name),
                  let placed = placements.placements[status.name]?.edgeID, placed != edge, takers.contains(placed)
            else { return nil }
            return Stray(channel: status.name, placedOn: placed)
        }.sorted { $0.channel < $1.channel }
    }

    /// Places the channels this coordinator decides for that two or more edges host while none is
    /// placed: their placement was dropped while their edges were out of reach (taken for dead),
    /// and each side of the partition let its own joiners in. Each goes to the hosting edge with
    /// the most publishers (the smallest id on a tie; one that takes clients), so the show stays
    /// where its hosts are: the other edges then find it a stray (``strays(on:edges:owned:)``) and
    /// send their clients there.
    ///
    /// - Parameters:
    ///   - channels: The channels to look at (those of the report just taken); all reported if nil.
    /// - Returns: The placements made, by channel, to persist and hand to the other coordinators.
    public mutating func placeSplitChannels(among channels: [String]? = nil, edges: [Edge], owned: (String) -> Bool,
                                            nowMs: Int64) -> [RoomChannelPlacement] {
        let takers = Set(placeable(edges).filter { !$0.linkBroken }.map(\.id))
        var made: [RoomChannelPlacement] = []
        // Runs on every report: the few unplaced channels are picked out before anything is sorted.
        let unplaced = (channels ?? Array(hostsByChannel.keys)).filter { placements.placements[$0] == nil && owned($0) }
        for channel in Set(unplaced).sorted() {
            let hosts = hosts(of: channel).filter(takers.contains)
            guard hosts.count > 1 else { continue }
            let reported = self.reported
            let publishers = { (edge: String) in reported[edge]?.first { $0.name == channel }?.publishers.count ?? 0 }
            guard let chosen = hosts.min(by: { (-publishers($0), $0) < (-publishers($1), $1) }),
                  let (placement, changed) = try? placements.place(
                      channel: channel, edges: OwnerRing(.edge, memberIDs: hosts), loads: [:], avoiding: nil,
                      hosting: [chosen], nowMs: nowMs),
                  changed
            else { continue }
            made.append(placement)
        }
        return made
    }

    /// Where an audience member of `channel` goes while the channel's origin is busy: the origin
    /// itself or a relay. Nil when relays are off, the channel has no placement, or its origin is
    /// `unreachable` or not among `edges` (then the channel is placed as for a broadcaster).
    public mutating func relay(for channel: String, avoiding unreachable: String?, edges: [Edge],
                               nowMs: Int64) -> String? {
        guard relays.threshold > 0, let origin = placements.placements[channel]?.edgeID, origin != unreachable else {
            return nil
        }
        // A relay a client could not reach (or whose link broke here) is no candidate.
        let candidates = placeable(edges).filter { $0.id != unreachable && !$0.linkBroken }
        guard candidates.contains(where: { $0.id == origin }) else { return nil }
        var viewers: [String: Int] = [:]
        for (edge, channels) in reported {
            if let status = channels.first(where: { $0.name == channel }) { viewers[edge] = Int(status.subscribers) }
        }
        let ring = OwnerRing(.edge, memberIDs: candidates.map(\.id))
        return relays.edge(for: channel, origin: origin, reported: viewers, reportedAtMs: reportedAtMs,
                           candidates: ring.holders(of: channel, count: candidates.count), nowMs: nowMs)
    }

    /// Where `channel` is hosted, placing it if needed (``PlacementTable/place(channel:edges:loads:avoiding:hosting:preferring:nowMs:)``),
    /// among the placeable `edges`. A channel leaving its origin (`avoiding` it, or the origin
    /// drains) goes to one of its relays first: its viewers are there.
    /// - Throws: `NO_EDGE_AVAILABLE` when no edge can host it; as ``PlacementTable`` does.
    public mutating func place(_ channel: String, edges: [Edge], avoiding: String?, preferring: [String] = [],
                               nowMs: Int64) throws(ShowroomError) -> Placement {
        let usable = placeable(edges)
        let loads = Dictionary(usable.map { ($0.id, $0.channels) }) { first, _ in first }
        let leaving = avoiding ?? placements.placements[channel].flatMap { draining.contains($0.edgeID) ? $0.edgeID : nil }
        let relayHosts = leaving == nil ? [] : (relays.relays[channel] ?? []).filter { relay in
            usable.contains { $0.id == relay && !$0.linkBroken }
        }.sorted()
        let (placement, changed) = try placements.place(
            channel: channel, edges: OwnerRing(.edge, memberIDs: usable.map(\.id)), loads: loads, avoiding: avoiding,
            hosting: hosts(of: channel) + relayHosts, preferring: preferring, nowMs: nowMs)
        return .placed(edge: placement.edgeID, recorded: changed ? placement : nil)
    }

    /// Edge `edge` asks to host `channel` because a client joins it there. A relay chosen for the
    /// channel pulls from the origin, unless the origin's link broke (it died): then the relay,
    /// which has the channel's viewers and its GOP, becomes the origin. Otherwise as
    /// ``PlacementTable/claim(channel:edge:alive:hosting:nowMs:)`` decides, among the edges whose
    /// link did not break.
    public mutating func claim(_ channel: String, by edge: String, edges: [Edge], nowMs: Int64) throws(ShowroomError) -> Claim {
        let usable = placeable(edges)
        let isRelay = relays.isRelay(edge, of: channel)
        if isRelay, let origin = placements.placements[channel]?.edgeID, origin != edge,
           usable.contains(where: { $0.id == origin && !$0.linkBroken }) {
            return .relay(origin: origin)
        }
        let reachable = Set(usable.filter { !$0.linkBroken }.map(\.id))
        switch try placements.claim(channel: channel, edge: edge, alive: reachable,
                                    hosting: hosts(of: channel) + (isRelay ? [edge] : []), nowMs: nowMs) {
        case .granted(let placement, let changed):
            return .granted(recorded: changed ? placement : nil)
        case .elsewhere(let placement, let changed):
            return .elsewhere(edge: placement.edgeID, recorded: changed ? placement : nil)
        }
    }

    // MARK: - Answers

    /// Where clients connect to `edge`, as a placement request is answered, among the alive
    /// `edges` as they are when it is answered (after the placement it made was replicated).
    /// - Throws: `NO_EDGE_AVAILABLE` when `edge` is not among them any more.
    public static func placementAnswer(edge: String, among edges: [Edge]) throws(ShowroomError) -> RoomPlaceChannelResponse {
        guard let chosen = edges.first(where: { $0.id == edge }) else {
            throw ShowroomError(.noEdgeAvailable, "edge \(edge) is not alive; retry in a moment")
        }
        var answer = RoomPlaceChannelResponse()
        answer.edgeID = edge
        answer.clientEndpoint = chosen.clientEndpoint
        answer.clientCurvePublicKey = chosen.clientCurvePublicKey
        answer.webSocketEndpoint = chosen.webSocketEndpoint
        return answer
    }

    /// Where `request`'s client goes, when no edge it could not reach had to be probed: an
    /// audience member of a busy channel to a relay or the origin (``relay(for:avoiding:edges:nowMs:)``),
    /// anyone else where the channel is placed, placing it if needed
    /// (``place(_:edges:avoiding:preferring:nowMs:)``, preferring the edges the request names).
    public mutating func placement(for request: RoomPlaceChannelRequest, edges: [Edge], nowMs: Int64) throws(ShowroomError) -> Placement {
        if request.audience, let relay = relay(for: request.channel, avoiding: request.unreachableEdge, edges: edges, nowMs: nowMs) {
            return .relay(edge: relay)
        }
        return try place(request.channel, edges: edges, avoiding: nil, preferring: request.preferredEdges, nowMs: nowMs)
    }

    /// A claim (``claim(_:by:edges:nowMs:)``) as answered: granted, granted as a relay of the
    /// origin, or naming the edge the channel is placed on, with where clients connect to it;
    /// `recorded` is the placement the claim made, to persist and hand to the other coordinators
    /// before answering.
    /// - Throws: `UNAVAILABLE` when the edge the answer names is not among `edges`; as
    ///   ``claim(_:by:edges:nowMs:)``.
    public mutating func claim(_ request: RoomClaimChannelRequest, edges: [Edge],
                               nowMs: Int64) throws(ShowroomError) -> (answer: RoomClaimChannelResponse, recorded: RoomChannelPlacement?) {
        var answer = RoomClaimChannelResponse()
        switch try claim(request.channel, by: request.edgeID, edges: edges, nowMs: nowMs) {
        case .relay(let origin):
            guard let originEdge = edges.first(where: { $0.id == origin }) else {
                throw .unavailable("channel \(request.channel)'s origin edge \(origin) is not alive; retry in a moment")
            }
            answer.granted = true
            answer.edgeID = request.edgeID
            answer.relayOfEdgeID = origin
            answer.relayOfEndpoint = originEdge.clientEndpoint
            answer.relayOfCurvePublicKey = originEdge.clientCurvePublicKey
            return (answer, nil)
        case .granted(let recorded):
            answer.granted = true
            answer.edgeID = request.edgeID
            return (answer, recorded)
        case .elsewhere(let other, let recorded):
            guard let edge = edges.first(where: { $0.id == other }) else {
                throw .unavailable("channel \(request.channel) is placed on edge \(other), which is not reachable now; retry in a moment")
            }
            answer.edgeID = other
            answer.clientEndpoint = edge.clientEndpoint
            answer.clientCurvePublicKey = edge.clientCurvePublicKey
            return (answer, recorded)
        }
    }

    /// The strays `edge` hosts (``strays(on:edges:owned:)``), each with where clients connect to
    /// the edge it is placed on: the answer to the edge's report of its channels.
    public func elsewhere(on edge: String, edges: [Edge], owned: (String) -> Bool) -> [RoomChannelElsewhere] {
        let strays = strays(on: edge, edges: edges, owned: owned)
        guard !strays.isEmpty else { return [] }
        let byID = Dictionary(edges.map { ($0.id, $0) }) { first, _ in first }
        return strays.compactMap { stray in
            byID[stray.placedOn].map { placed in
                RoomChannelElsewhere.with {
                    $0.channel = stray.channel
                    $0.placedOn.edgeID = stray.placedOn
                    $0.placedOn.clientEndpoint = placed.clientEndpoint
                    $0.placedOn.clientCurvePublicKey = placed.clientCurvePublicKey
                }
            }
        }
    }

    // MARK: - Time and replicas

    /// Drops the placements `owned` says are this coordinator's that no edge reported for the
    /// placement expiry, and forgets relay choices past their charge time.
    /// - Returns: The placements dropped, as tombstones to replicate.
    public mutating func expire(nowMs: Int64, owned: (String) -> Bool) -> [RoomChannelPlacement] {
        relays.expire(nowMs: nowMs)
        return placements.expire(nowMs: nowMs, owned: owned)
    }

    /// Placements from another coordinator (or the store): each kept when it is newer.
    /// - Returns: The placements taken (an empty edge id is a removal).
    public mutating func merge(_ incoming: [RoomChannelPlacement], nowMs: Int64?) -> [RoomChannelPlacement] {
        placements.merge(incoming, nowMs: nowMs)
    }
}
