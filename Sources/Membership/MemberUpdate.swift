/// What one member says about another (or about itself): the unit of dissemination, piggy-backed
/// on probes and broadcast in gossip rounds, and the row of a push-pull state exchange.
public struct MemberUpdate: Sendable, Equatable {
    /// The member the update is about.
    public var id: MemberID
    /// Its state according to the sender.
    public var state: MemberState
    /// Its incarnation according to the sender.
    public var incarnation: UInt64
    /// Its metadata; always present for ``MemberState/alive`` and in push-pull, otherwise
    /// optional (suspicions and deaths do not need it, which keeps them small).
    public var metadata: MemberMetadata?
    /// Who raised the suspicion or declared the death (the member itself for a leave); distinct
    /// values are independent confirmations of a suspicion. `nil` for alive.
    public var from: MemberID?

    /// Creates an update.
    ///
    /// - Parameters:
    ///   - id: The member it is about.
    ///   - state: Its state.
    ///   - incarnation: Its incarnation.
    ///   - metadata: Its metadata (required for alive).
    ///   - from: Who suspected it or declared it dead.
    public init(
        id: MemberID,
        state: MemberState,
        incarnation: UInt64,
        metadata: MemberMetadata? = nil,
        from: MemberID? = nil
    ) {
        self.id = id
        self.state = state
        self.incarnation = incarnation
        self.metadata = metadata
        self.from = from
    }

    /// About how many bytes the update takes in an encoded message: the protobuf size of its
    /// strings plus a fixed allowance for tags, lengths and numbers. Used to bound messages
    /// without encoding them.
    var estimatedSize: Int {
        var size = 16 + id.rawValue.utf8.count + (from?.rawValue.utf8.count ?? 0)
        if let metadata {
            size += 24 + metadata.role.utf8.count + metadata.clusterEndpoint.utf8.count
                + metadata.clientEndpoint.utf8.count + metadata.adminEndpoint.utf8.count
                + metadata.version.utf8.count + metadata.eventsEndpoint.utf8.count + metadata.clientCurvePublicKey.utf8.count
                + metadata.webSocketEndpoint.utf8.count
        }
        return size
    }
}
