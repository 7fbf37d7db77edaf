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
