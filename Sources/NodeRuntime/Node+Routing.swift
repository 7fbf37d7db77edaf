import Membership
import Routing

/// A gossip member routes by its announced role and its state.
extension Member: RoutableMember {
    /// The member's node id.
    public var nodeID: String { id.rawValue }
    /// The role the member announces, or nil for one this build does not know.
    public var nodeRole: NodeRole? { NodeRole(rawValue: metadata.role) }
    /// Whether the membership sees the member alive.
    public var isAlive: Bool { state == .alive }
}

extension NodeServices {
    /// The alive members of `role` this node knows (itself included when the role is its own),
    /// with their metadata, sorted by id. Loop thread only.
    public func alive(_ role: NodeRole) -> [Member] {
        membersOnLoop.filter { $0.isAlive(as: role) }.sorted { $0.nodeID < $1.nodeID }
    }

    /// The alive members of `role` as an ``OwnerRing``: who owns a key among them. Loop thread
    /// only.
    ///
    /// - Parameters:
    ///   - role: The role.
    ///   - include: Which of them to take (for example those that announce a client endpoint).
    public func ring(_ role: NodeRole, where include: (Member) -> Bool = { _ in true }) -> OwnerRing {
        OwnerRing(role, of: membersOnLoop, where: include)
    }
}

/// The ring of a role's alive members, made again only when the membership changed: a role that
/// asks who owns a key on every request does not rebuild it each time.
public struct RingCache {
    /// The role of the ring's members.
    public let role: NodeRole
    private var cached: (generation: UInt64, ring: OwnerRing)?

    /// A cache of the ring of `role`.
    public init(_ role: NodeRole) { self.role = role }

    /// The ring of the alive members of the role that `node` knows now. Loop thread only.
    public mutating func ring(of node: some NodeServices) -> OwnerRing {
        let generation = node.membershipGeneration
        if let cached, cached.generation == generation { return cached.ring }
        let ring = node.ring(role)
        cached = (generation, ring)
        return ring
    }
}
