/// Counters kept by ``Membership`` since it was created, for metrics and benchmarks.
public struct MembershipStatistics: Sendable, Equatable {
    /// Messages by kind.
    public struct MessageCounts: Sendable, Equatable {
        /// Direct probes.
        public var ping: UInt64 = 0
        /// Indirect probe requests.
        public var pingRequest: UInt64 = 0
        /// Acks, direct and relayed.
        public var ack: UInt64 = 0
        /// Nacks from intermediaries.
        public var nack: UInt64 = 0
        /// Push-pull requests and replies (joins included).
        public var pushPull: UInt64 = 0
        /// Dissemination rounds (and leave announcements).
        public var broadcast: UInt64 = 0

        /// Creates zeroed counters.
        public init() {}

        /// All kinds together.
        public var total: UInt64 { ping + pingRequest + ack + nack + pushPull + broadcast }

        /// The counter for one kind.
        public subscript(kind: GossipMessage.Kind) -> UInt64 {
            get {
                switch kind {
                case .ping: ping
                case .pingRequest: pingRequest
                case .ack: ack
                case .nack: nack
                case .pushPull: pushPull
                case .broadcast: broadcast
                }
            }
            set {
                switch kind {
                case .ping: ping = newValue
                case .pingRequest: pingRequest = newValue
                case .ack: ack = newValue
                case .nack: nack = newValue
                case .pushPull: pushPull = newValue
                case .broadcast: broadcast = newValue
                }
            }
        }
    }

    /// Messages handed to the shell to send.
    public var sent = MessageCounts()
    /// Messages received (from other members).
    public var received = MessageCounts()
    /// Member updates sent, piggy-backed or broadcast (push-pull tables not included).
    public var updatesSent: UInt64 = 0
    /// Direct probes started.
    public var probes: UInt64 = 0
    /// Probes that got no ack, direct or indirect, within the probe period.
    public var failedProbes: UInt64 = 0
    /// Ping requests sent (indirect probes).
    public var indirectProbes: UInt64 = 0
    /// Nacks received for our own probes.
    public var nacksReceived: UInt64 = 0
    /// Suspicions this member raised after its own failed probe of an alive member.
    public var suspicionsRaised: UInt64 = 0
    /// Independent confirmations counted toward suspicions (shrinking their timeouts).
    public var suspicionConfirmations: UInt64 = 0
    /// Times this member refuted a suspicion or death of itself (or an outdated view of itself).
    public var refutations: UInt64 = 0
    /// Members this member declared dead when their suspicion timed out.
    public var deathsDeclared: UInt64 = 0
    /// Join attempts (rounds of push-pulls to the seeds).
    public var joinAttempts: UInt64 = 0
    /// Tombstones forgotten after the retention period.
    public var tombstonesForgotten: UInt64 = 0
    /// Updates dropped because their incarnation could not come from an honest member: a jump
    /// above ``MembershipSettings/maxIncarnationJump`` over what we know of the member (ourselves
    /// included), or a newcomer above ``MembershipSettings/maxFirstIncarnation``.
    public var implausibleUpdatesDropped: UInt64 = 0

    /// Creates zeroed counters.
    public init() {}
}
