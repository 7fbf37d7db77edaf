/// One member of the cluster as the local member sees it.
public struct Member: Sendable, Equatable {
    /// The member's node id.
    public var id: MemberID
    /// What the member last published about itself.
    public var metadata: MemberMetadata
    /// Its state in the local view.
    public var state: MemberState
    /// The highest incarnation seen for it; only the member itself raises it.
    public var incarnation: UInt64
    /// Clock value when we last heard from it directly or about a change of its state; `nil` if
    /// never (the local member: always its latest clock value).
    public var lastHeard: Duration?
    /// Clock value of its last state change in the local view (tombstones expire from it).
    public var stateChangedAt: Duration

    /// Creates a member record.
    ///
    /// - Parameters:
    ///   - id: The node id.
    ///   - metadata: What it publishes about itself.
    ///   - state: Its state.
    ///   - incarnation: Its incarnation.
    ///   - lastHeard: When we last heard from or about it.
    ///   - stateChangedAt: When its state last changed.
    public init(
        id: MemberID,
        metadata: MemberMetadata,
        state: MemberState,
        incarnation: UInt64,
        lastHeard: Duration?,
        stateChangedAt: Duration
    ) {
        self.id = id
        self.metadata = metadata
        self.state = state
        self.incarnation = incarnation
        self.lastHeard = lastHeard
        self.stateChangedAt = stateChangedAt
    }
}
