import Foundation

/// Highest-random-weight (rendezvous) hashing of keys (channels, rooms) over nodes (edges,
/// coordinators).
///
/// Every process computes the same answer from the same node list, without talking to the others:
/// each node gets a weight `hash("nodeID|key")` and the heaviest node wins; the next heaviest is the
/// successor. Removing a node moves only the keys that were on it; adding one moves about 1/n of the
/// keys, all to the new node. The hash is FNV-1a 64 with a final avalanche mix, fixed across
/// processes and platforms (Swift's `Hasher` is seeded per process, so it cannot be used here).
public enum RendezvousHashing {
    /// The weight of `nodeID` for `key`.
    ///
    /// - Parameters:
    ///   - nodeID: A node id.
    ///   - key: A channel name or room id.
    /// - Returns: A stable 64-bit weight.
    public static func weight(nodeID: String, key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for byte in nodeID.utf8 { mix(byte) }
        mix(UInt8(ascii: "|"))
        for byte in key.utf8 { mix(byte) }
        // FNV-1a's low bits mix poorly for short keys that differ only at the end: finish with
        // the splitmix64 avalanche so weights of similar names are independent.
        hash ^= hash >> 30
        hash = hash &* 0xbf58_476d_1ce4_e5b9
        hash ^= hash >> 27
        hash = hash &* 0x94d0_49bb_1331_11eb
        hash ^= hash >> 31
        return hash
    }

    /// The nodes ordered by their weight for `key`, heaviest first (the owner, then its
    /// successor ...); ties (practically impossible) go to the smaller id, so the order never
    /// depends on the order of `nodes`.
    public static func ranked(key: String, among nodes: some Sequence<String>) -> [String] {
        nodes.map { (id: $0, weight: weight(nodeID: $0, key: key)) }
            .sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.id < $1.id }
            .map(\.id)
    }

    /// The node with the highest weight for `key`, or `nil` if `nodes` is empty.
    public static func owner(key: String, among nodes: some Sequence<String>) -> String? {
        var best: (id: String, weight: UInt64)?
        for id in nodes {
            let weight = weight(nodeID: id, key: key)
            if let current = best, current.weight > weight || (current.weight == weight && current.id < id) {
                continue
            }
            best = (id, weight)
        }
        return best?.id
    }

    /// Load-aware choice: the node maximising `-capacity / ln(u)`, where `u` in (0, 1) comes from
    /// the node's weight for `key` and `capacity = 1 / (1 + load)`. With equal loads this is the
    /// plain rendezvous choice; a node with more load wins proportionally fewer keys, and a key
    /// moves only when its node's standing changes (weighted rendezvous hashing).
    ///
    /// - Parameters:
    ///   - key: A channel name.
    ///   - nodes: Candidates with their load (for edges: channels hosted).
    /// - Returns: The chosen node id, or `nil` if `nodes` is empty.
    public static func owner(key: String, among nodes: some Sequence<(id: String, load: Int)>) -> String? {
        var best: (id: String, score: Double)?
        for node in nodes {
            // 53 high bits -> (0, 1): never 0 (log would be -inf) nor 1.
            let u = (Double(weight(nodeID: node.id, key: key) >> 11) + 0.5) / Double(1 << 53)
            let score = -(1.0 / Double(1 + max(0, node.load))) / log(u)
            if let current = best, current.score > score || (current.score == score && current.id < node.id) {
                continue
            }
            best = (node.id, score)
        }
        return best?.id
    }
}
