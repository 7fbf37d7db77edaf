import ShowroomWire

/// Which edge hosts each channel: sticky while that edge is alive, so that everyone in a channel
/// keeps meeting on the same edge; a channel without a live edge is placed anew by load-aware
/// rendezvous hashing.
public struct PlacementTable: Sendable {
    /// The placements by channel.
    public private(set) var placements: [String: RoomChannelPlacement] = [:]

    /// Creates an empty table.
    public init() {}

    /// Where `channel` is hosted, placing it if needed.
    ///
    /// The current placement stands while its edge is in `alive` and is not `avoiding`. Otherwise
    /// the channel goes to `RendezvousHashing.owner(key:among:)` over the alive edges with their
    /// loads, leaving out `avoiding` unless it is the only one, and the placement is recorded.
    ///
    /// - Parameters:
    ///   - channel: The channel name.
    ///   - alive: The alive edges with their load (channels hosted).
    ///   - avoiding: An edge a client could not reach, if any.
    ///   - nowMs: The time now (the new placement's `placedAtMs`).
    /// - Returns: The placement, and whether a new one was recorded.
    /// - Throws: `NO_EDGE_AVAILABLE` when no edge is alive; `INVALID_ARGUMENT` for an empty channel.
    public mutating func place(
        channel: String, alive: [(id: String, load: Int)], avoiding: String?, nowMs: Int64
    ) throws(ShowroomError) -> (placement: RoomChannelPlacement, changed: Bool) {
        guard !channel.isEmpty else { throw .invalidArgument("channel is empty; name the channel to place") }
        guard !alive.isEmpty else {
            throw .noEdgeAvailable("no edge is alive to host channel \(channel); start an edge or retry shortly")
        }
        let current = placements[channel]
        if let current, current.edgeID != avoiding, alive.contains(where: { $0.id == current.edgeID }) {
            return (current, false)
        }
        let others = alive.filter { $0.id != avoiding }
        let candidates = others.isEmpty ? alive : others
        guard let edgeID = RendezvousHashing.owner(key: channel, among: candidates) else {
            throw .noEdgeAvailable("no edge is alive to host channel \(channel); start an edge or retry shortly")
        }
        // The only edge left is the one we have: keep the placement as it was.
        if let current, current.edgeID == edgeID { return (current, false) }
        var placement = RoomChannelPlacement()
        placement.channel = channel
        placement.edgeID = edgeID
        placement.placedAtMs = nowMs
        placements[channel] = placement
        return (placement, true)
    }

    /// Removes the placements on edges that are not alive any more.
    ///
    /// - Parameter alive: The ids of the alive edges.
    /// - Returns: The placements removed, by channel: channels to place again.
    public mutating func evict(keepingOnly alive: Set<String>) -> [RoomChannelPlacement] {
        let gone = placements.values.filter { !alive.contains($0.edgeID) }.sorted { $0.channel < $1.channel }
        for placement in gone { placements[placement.channel] = nil }
        return gone
    }

    /// Takes in placements from another coordinator or the store: per channel the later
    /// `placedAtMs` wins; at the same time the smaller edge id, so that every replica agrees.
    ///
    /// - Returns: The placements taken, by channel.
    public mutating func merge(_ incoming: [RoomChannelPlacement]) -> [RoomChannelPlacement] {
        var taken: [RoomChannelPlacement] = []
        for placement in incoming where !placement.channel.isEmpty {
            if let ours = placements[placement.channel] {
                let newer = placement.placedAtMs > ours.placedAtMs
                    || (placement.placedAtMs == ours.placedAtMs && placement.edgeID < ours.edgeID)
                guard newer else { continue }
            }
            placements[placement.channel] = placement
            taken.append(placement)
        }
        return taken.sorted { $0.channel < $1.channel }
    }

    /// Forgets a channel's placement (the channel is gone).
    public mutating func remove(channel: String) {
        placements[channel] = nil
    }

    /// Channels placed per edge id, as the load to pass to ``place(channel:alive:avoiding:nowMs:)``
    /// when the edges' own reports are not at hand.
    public var channelsPerEdge: [String: Int] {
        placements.values.reduce(into: [:]) { counts, placement in counts[placement.edgeID, default: 0] += 1 }
    }
}
