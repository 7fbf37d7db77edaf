import ShowroomWire

/// A cluster member as routing sees it: its node id, the role it plays and whether it is alive.
///
/// The membership's members (on the servers) and the `CLUSTER_STATUS` entries (in the SDK) both
/// adopt it, so that "the alive members of a role" is decided in one place, ``OwnerRing``, by
/// ``NodeRole`` rather than by comparing role names.
public protocol RoutableMember {
    /// The member's node id.
    var nodeID: String { get }
    /// The member's role, or nil for a role this build does not know (such a member owns nothing).
    var nodeRole: NodeRole? { get }
    /// Whether the member is alive: suspect, dead and left members own nothing.
    var isAlive: Bool { get }
}

extension RoutableMember {
    /// Whether the member is an alive member of `role`: one that may own keys of that role.
    public func isAlive(as role: NodeRole) -> Bool {
        isAlive && nodeRole == role
    }
}

/// A member as another member reports it in `CLUSTER_STATUS`: what the SDK routes by.
extension AdminMemberStatus: RoutableMember {
    /// The member's node id.
    public var nodeID: String { id }
    /// The member's role, from its name on the wire.
    public var nodeRole: NodeRole? { NodeRole(rawValue: role) }
    /// Whether the reporting member sees it alive.
    public var isAlive: Bool { state == .alive }
}
