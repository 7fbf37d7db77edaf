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

/// A value derived from the members a node knows (a role's ``OwnerRing``, their endpoints), made
/// again only when the membership changed: a role that asks who owns a key on every request does
/// not rebuild it each time.
public struct MembershipView<Value> {
    private let make: (any NodeServices) -> Value
    private var cached: (generation: UInt64, value: Value)?

    /// A view made by `make` from the node.
    public init(_ make: @escaping (any NodeServices) -> Value) { self.make = make }

    /// The value for the members `node` knows now. Loop thread only.
    public mutating func value(of node: any NodeServices) -> Value {
        let generation = node.membershipGeneration
        if let cached, cached.generation == generation { return cached.value }
        let value = make(node)
        cached = (generation, value)
        return value
    }
}

extension MembershipView where Value == OwnerRing {
    /// The ring of `role`'s alive members.
    public static func ring(_ role: NodeRole) -> MembershipView { MembershipView { $0.ring(role) } }
}
