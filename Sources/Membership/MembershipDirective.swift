/// What the ``Membership`` state machine asks its shell to do.
public enum MembershipDirective: Sendable, Equatable {
    /// Send `message` to a member's cluster endpoint (`tcp://host:port`). Endpoints rather than
    /// ids, because seeds have no known id yet. Loss is tolerated: never retry.
    case send(GossipMessage, to: String)
    /// The local view of a member changed: for logs, metrics and the status tool.
    case memberChanged(MemberChange)
}
