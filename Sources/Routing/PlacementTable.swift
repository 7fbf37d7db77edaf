import Ownership
import ShowroomWire

/// Which edge hosts each channel: sticky while that edge is alive, so that everyone in a channel
/// keeps meeting on the same edge; a channel without a live edge is placed anew by load-aware
/// rendezvous hashing.
///
/// What the edges report hosting wins over the table: a channel an edge already hosts is placed
/// there (the table corrected if it said otherwise), so a channel is never split over two edges by
/// a placement. A placement that no edge reports within ``expiryMs`` (nobody ever joined, or
/// everybody left) is dropped, so requests that never lead to a join cannot fill the table.
///
/// A placement names one edge per channel. Relay chains (a channel's media forwarded from its
/// edge to further edges for a larger audience) would extend ``RoomChannelPlacement`` with the
/// relay edges in order and be chosen here, from the same ``OwnerRing`` of edges.
public struct PlacementTable: Sendable {
    /// The placements by channel.
    public private(set) var placements: [String: RoomChannelPlacement] = [:]
    /// How long a placement stands without any edge reporting its channel.
    public var expiryMs: Int64
    /// How many channels the table places at most; further new channels are refused
    /// (`UNAVAILABLE`) until placements expire.
    public var maxPlacements: Int
    /// When each placed channel was last placed or reported by an edge (or the table learnt of it).
    private var lastSeenMs: [String: Int64] = [:]

    /// The longest channel name placed, in UTF-8 bytes.

    /// Creates an empty table.
    ///
    /// - Parameters:
    ///   - expiryMs: How long a placement stands without any edge reporting its channel.
    ///   - maxPlacements: How many channels are placed at most.
    public init(expiryMs: Int64 = 60_000, maxPlacements: Int = 100_000) {
        self.expiryMs = expiryMs
        self.maxPlacements = maxPlacements
    }

    /// What a claim decided (``claim(channel:edge:alive:hosting:nowMs:)``).
    public enum ClaimDecision: Sendable, Equatable {
        /// The channel is placed on the claiming edge; `changed` when that placement is new.
        case granted(RoomChannelPlacement, changed: Bool)
        /// The channel is placed on another edge; `changed` when that placement is new (a
        /// correction after the edges' reports).
        case elsewhere(RoomChannelPlacement, changed: Bool)
    }

    /// Where `channel` is hosted, placing it if needed.
    ///
    /// The current placement stands while its edge is in `edges` and is not `avoiding` (edges
    /// join a channel only through a claim, so a placement that stands is where the channel is;
    /// an edge's report lags behind a move away from an unreachable edge and must not pull the
    /// channel back). Without one, an alive edge in `hosting` (not `avoiding`) wins, the smallest
    /// id first: a channel left without a placement is placed where it runs. Otherwise the channel
    /// goes to the first of `preferring` that is in `edges` and not `avoiding` (an edge its first
    /// joiner already has a session with), or else to the load-aware owner
    /// (``OwnerRing/owner(of:loads:avoiding:)``), leaving out `avoiding` unless it is the only
    /// edge, and the placement is recorded.
    ///
    /// - Parameters:
    ///   - channel: The channel name.
    ///   - edges: The alive edges that can host it.
    ///   - loads: The edges' loads (channels hosted); an edge not in it counts 0.
    ///   - avoiding: An edge a client could not reach, if any.
    ///   - hosting: The edges that report hosting the channel now.
    ///   - preferring: Edges the asking client already has sessions with, best first.
    ///   - nowMs: The time now (the new placement's `placedAtMs`).
    /// - Returns: The placement, and whether a new one was recorded.
    /// - Throws: `NO_EDGE_AVAILABLE` when no edge is alive; `INVALID_ARGUMENT` for an invalid
    ///   channel name; `UNAVAILABLE` when the table is full.
    public mutating func place(
        channel: String, edges: OwnerRing, loads: [String: Int], avoiding: String?, hosting: [String] = [],
        preferring: [String] = [], nowMs: Int64
    ) throws(ShowroomError) -> (placement: RoomChannelPlacement, changed: Bool) {
        try Names.validateChannel(channel)
        let current = placements[channel]
        if let current, current.edgeID != avoiding, edges.contains(current.edgeID) {
            return (current, false)
        }
        if let host = hosting.filter({ edges.contains($0) && $0 != avoiding }).min() {
            return try record(channel, on: host, current: current, nowMs: nowMs)
        }
        if let preferred = preferring.first(where: { edges.contains($0) && $0 != avoiding }) {
            return try record(channel, on: preferred, current: current, nowMs: nowMs)
        }
        guard let edgeID = edges.owner(of: channel, loads: loads, avoiding: avoiding) else {
            throw ShowroomError(.noEdgeAvailable, "no edge is alive to host channel \(channel); start an edge or retry shortly")
        }
        return try record(channel, on: edgeID, current: current, nowMs: nowMs)
    }

    /// An edge asks to host `channel` because a client joins it there: granted unless the channel
    /// is placed on another alive edge, or (without a standing placement) another alive edge
    /// reports hosting it.
    ///
    /// - Parameters:
    ///   - channel: The channel name.
    ///   - edge: The claiming edge (alive: it is asking).
    ///   - alive: The alive edges' ids.
    ///   - hosting: The edges that report hosting the channel now.
    ///   - nowMs: The time now.
    /// - Returns: The decision, with the placement it leaves.
    /// - Throws: `INVALID_ARGUMENT` for an invalid channel name or an empty edge id;
    ///   `UNAVAILABLE` when the table is full.
    public mutating func claim(
        channel: String, edge: String, alive: Set<String>, hosting: [String], nowMs: Int64
    ) throws(ShowroomError) -> ClaimDecision {
        try Names.validateChannel(channel)
        guard !edge.isEmpty else { throw .invalidArgument("a channel claim names the claiming edge") }
        let current = placements[channel]
        let target: String
        if let current, current.edgeID == edge || alive.contains(current.edgeID) {
            target = current.edgeID
        } else if hosting.contains(edge) {
            target = edge
        } else if let host = hosting.filter({ alive.contains($0) }).min() {
            target = host
        } else {
            target = edge
        }
        let (placement, changed) = try record(channel, on: target, current: current, nowMs: nowMs)
        return target == edge ? .granted(placement, changed: changed) : .elsewhere(placement, changed: changed)
    }

    /// Places `channel` on `edgeID`, unless it is there already.
    private mutating func record(
        _ channel: String, on edgeID: String, current: RoomChannelPlacement?, nowMs: Int64
    ) throws(ShowroomError) -> (placement: RoomChannelPlacement, changed: Bool) {
        if let current, current.edgeID == edgeID { return (current, false) }
        guard current != nil || placements.count < maxPlacements else {
            throw .unavailable("\(placements.count) channels are placed, the most this cluster keeps; retry once unused placements expire (\(expiryMs / 1000) s)")
        }
        var placement = RoomChannelPlacement()
        placement.channel = channel
        placement.edgeID = edgeID
        // Later than the placement it replaces, so every replica takes it even under clock skew.
        let after = current.map { $0.placedAtMs == .max ? .max : $0.placedAtMs + 1 } ?? nowMs
        placement.placedAtMs = max(nowMs, after)
        placements[channel] = placement
        lastSeenMs[channel] = nowMs
        return (placement, true)
    }

    /// Edges reported hosting these channels now: their placements stay.
    public mutating func reported(channels: some Sequence<String>, nowMs: Int64) {
        for channel in channels where placements[channel] != nil { lastSeenMs[channel] = nowMs }
    }

    /// Removes the placements whose channel no edge reported within ``expiryMs``.
    ///
    /// - Parameters:
    ///   - nowMs: The time now.
    ///   - owned: Which channels this table's holder decides for (the others' owners expire them).
    /// - Returns: Tombstones of the placements removed (see ``merge(_:)``), by channel, to persist
    ///   and hand to the other replicas.
    public mutating func expire(nowMs: Int64, owned: (String) -> Bool = { _ in true }) -> [RoomChannelPlacement] {
        var removed: [RoomChannelPlacement] = []
        for (channel, placement) in placements where owned(channel) {
            let seen = max(placement.placedAtMs, lastSeenMs[channel] ?? placement.placedAtMs)
            // Arithmetic on our own values only (a peer's time may be anything).
            guard seen < nowMs - expiryMs else { continue }
            var tombstone = RoomChannelPlacement()
            tombstone.channel = channel
            tombstone.placedAtMs = max(nowMs, placement.placedAtMs)
            removed.append(tombstone)
        }
        for tombstone in removed { remove(channel: tombstone.channel) }
        return removed.sorted { $0.channel < $1.channel }
    }

    /// Removes the placements on edges that are not alive any more.
    ///
    /// - Parameter alive: The ids of the alive edges.
    /// - Returns: The placements removed, by channel: channels to place again.
    public mutating func evict(keepingOnly alive: Set<String>) -> [RoomChannelPlacement] {
        let gone = placements.values.filter { !alive.contains($0.edgeID) }.sorted { $0.channel < $1.channel }
        for placement in gone { remove(channel: placement.channel) }
        return gone
    }

    /// Takes in placements from another coordinator or the store: per channel the later
    /// `placedAtMs` wins; at the same time the smaller edge id, so that every replica agrees. A
    /// placement with an empty edge id is a tombstone: it removes an earlier or equal placement,
    /// and is not kept (the table holds placed channels only, at most ``maxPlacements``).
    ///
    /// - Parameters:
    ///   - incoming: The placements.
    ///   - nowMs: The time now: taken placements count as seen then (their edges' reports follow).
    /// - Returns: The placements (and tombstones) taken, by channel.
    public mutating func merge(_ incoming: [RoomChannelPlacement], nowMs: Int64? = nil) -> [RoomChannelPlacement] {
        var taken: [RoomChannelPlacement] = []
        for placement in incoming where !placement.channel.isEmpty {
            if placement.edgeID.isEmpty {
                guard let ours = placements[placement.channel], ours.placedAtMs <= placement.placedAtMs else { continue }
                remove(channel: placement.channel)
                taken.append(placement)
                continue
            }
            if let ours = placements[placement.channel] {
                let newer = placement.placedAtMs > ours.placedAtMs
                    || (placement.placedAtMs == ours.placedAtMs && placement.edgeID < ours.edgeID)
                guard newer else { continue }
            } else if placements.count >= maxPlacements {
                continue
            }
            placements[placement.channel] = placement
            lastSeenMs[placement.channel] = nowMs ?? placement.placedAtMs
            taken.append(placement)
        }
        return taken.sorted { $0.channel < $1.channel }
    }

    /// Forgets a channel's placement (the channel is gone).
    public mutating func remove(channel: String) {
        placements[channel] = nil
        lastSeenMs[channel] = nil
    }

    /// Channels placed per edge id, as the load to pass to ``place(channel:edges:loads:avoiding:hosting:nowMs:)``
    /// when the edges' own reports are not at hand.
    public var channelsPerEdge: [String: Int] {
        placements.values.reduce(into: [:]) { counts, placement in counts[placement.edgeID, default: 0] += 1 }
    }
}
