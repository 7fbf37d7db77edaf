/// The alive members of one role, and who among them owns a key (a room id, a channel name).
///
/// Ownership is rendezvous hashing (``RendezvousHashing``) over the ring's members: every process
/// that sees the same members computes the same owner, successor and holders without asking
/// anyone, whatever order it learnt the members in. Removing a member moves only the keys it
/// owned; adding one moves about 1/n of the keys, all to it. Rings are equal when they hold the
/// same members of the same role, so a holder can tell whether ownership may have changed.
public struct OwnerRing: Sendable, Hashable, CustomStringConvertible {
    /// The role of the ring's members.
    public let role: NodeRole
    /// The members' node ids, sorted.
    public let members: [String]

    /// A ring of the given members.
    ///
    /// - Parameters:
    ///   - role: The members' role.
    ///   - memberIDs: Node ids of alive members of `role` (duplicates and empty ids are ignored).
    public init(_ role: NodeRole, memberIDs: some Sequence<String>) {
        self.role = role
        members = Set(memberIDs.filter { !$0.isEmpty }).sorted()
    }

    /// The ring of the alive members of `role` among `members`.
    ///
    /// - Parameters:
    ///   - role: The role.
    ///   - members: Any members, of any role and state.
    ///   - include: Which of the alive members of `role` to take as well (for example those
    ///     that announce a client endpoint); all by default.
    public init<Member: RoutableMember>(
        _ role: NodeRole, of members: some Sequence<Member>, where include: (Member) -> Bool = { _ in true }
    ) {
        self.init(role, memberIDs: members.filter { $0.isAlive(as: role) && include($0) }.map(\.nodeID))
    }

    /// Whether the ring has no member: it owns nothing.
    public var isEmpty: Bool { members.isEmpty }

    /// How many members the ring has.
    public var count: Int { members.count }

    /// Whether `id` is a member.
    public func contains(_ id: String) -> Bool {
        var low = 0, high = members.count
        while low < high {
            let middle = (low + high) / 2
            if members[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < members.count && members[low] == id
    }

    /// The member that owns `key`, or nil for an empty ring.
    public func owner(of key: String) -> String? {
        RendezvousHashing.owner(key: key, among: members)
    }

    /// The owner of `key` among the members other than `avoiding` (a member a client could not
    /// reach), or `avoiding` itself when it is the only member: where every process moves the
    /// key when its owner fails.
    public func owner(of key: String, avoiding: String?) -> String? {
        guard let avoiding, contains(avoiding), members.count > 1 else { return owner(of: key) }
        return RendezvousHashing.owner(key: key, among: members.lazy.filter { $0 != avoiding })
    }

    /// The load-aware choice for `key` (weighted rendezvous hashing): a member with more load wins
    /// proportionally fewer keys, and with equal loads this is ``owner(of:)``. Leaves out
    /// `avoiding` unless it is the only member.
    ///
    /// - Parameters:
    ///   - key: A channel name.
    ///   - loads: Each member's load (for edges: channels hosted); a member not in it counts 0.
    ///   - avoiding: A member a client could not reach, if any.
    /// - Returns: The chosen member, or nil for an empty ring.
    public func owner(of key: String, loads: [String: Int], avoiding: String? = nil) -> String? {
        let candidates = avoiding.map { avoided in members.filter { $0 != avoided } } ?? members
        let pool = candidates.isEmpty ? members : candidates
        return RendezvousHashing.owner(key: key, among: pool.map { (id: $0, load: loads[$0] ?? 0) })
    }

    /// The member next in line for `key` after its owner (the one that takes over when the owner
    /// goes), or nil with fewer than two members.
    public func successor(of key: String) -> String? {
        let first = holders(of: key, count: 2)
        return first.count == 2 ? first[1] : nil
    }

    /// The first `count` members in line for `key`: the owner, then its successor, and so on
    /// (fewer when the ring is smaller).
    public func holders(of key: String, count: Int) -> [String] {
        guard count > 0 else { return [] }
        return Array(RendezvousHashing.ranked(key: key, among: members).prefix(count))
    }

    /// The ring with `id` added (no change if it is a member already).
    public func inserting(_ id: String) -> OwnerRing {
        OwnerRing(role, memberIDs: members + [id])
    }

    /// The ring without `id`.
    public func removing(_ id: String) -> OwnerRing {
        OwnerRing(role, memberIDs: members.filter { $0 != id })
    }

    /// `role[id, id, ...]`.
    public var description: String { "\(role)\(members)" }
}
