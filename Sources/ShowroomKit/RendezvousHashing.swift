/// Highest-random-weight (rendezvous) hashing of channels over edges.
///
/// Every client computes the same answer from the same edge list, without talking to each other:
/// each edge gets a weight `hash("edgeID|channel")` and the heaviest edge wins. Removing an edge
/// moves only the channels that were on it; adding one moves about 1/n of the channels, all to
/// the new edge. The hash is FNV-1a 64 with a final avalanche mix, fixed across processes and
/// platforms (Swift's `Hasher` is seeded per process, so it cannot be used here).
public enum RendezvousHashing {
    /// The weight of `edgeID` for `channel`.
    ///
    /// - Parameters:
    ///   - edgeID: An edge's node id.
    ///   - channel: A channel name.
    /// - Returns: A stable 64-bit weight.
    public static func weight(edgeID: String, channel: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for byte in edgeID.utf8 { mix(byte) }
        mix(UInt8(ascii: "|"))
        for byte in channel.utf8 { mix(byte) }
        // FNV-1a's low bits mix poorly for short keys that differ only at the end: finish with
        // the splitmix64 avalanche so weights of similar names are independent.
        hash ^= hash >> 30
        hash = hash &* 0xbf58_476d_1ce4_e5b9
        hash ^= hash >> 27
        hash = hash &* 0x94d0_49bb_1331_11eb
        hash ^= hash >> 31
        return hash
    }

    /// The edge with the highest weight for `channel`; ties (practically impossible) go to the
    /// smaller id, so the answer never depends on the order of `edges`.
    ///
    /// - Parameters:
    ///   - channel: A channel name.
    ///   - edges: The candidate edges.
    /// - Returns: The chosen edge, or `nil` if `edges` is empty.
    public static func choose(channel: String, among edges: some Sequence<EdgeAddress>) -> EdgeAddress? {
        var best: (edge: EdgeAddress, weight: UInt64)?
        for edge in edges {
            let weight = weight(edgeID: edge.id, channel: channel)
            if let current = best, current.weight > weight || (current.weight == weight && current.edge.id < edge.id) {
                continue
            }
            best = (edge, weight)
        }
        return best?.edge
    }
}
