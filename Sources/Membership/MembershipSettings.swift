#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The knobs of SWIM and Lifeguard. The defaults (``lan``) are tuned for a LAN or loopback cluster
/// of about 20 processes on a busy 2-core machine, aiming at: every member learns a join within
/// 1 s, every member marks a SIGKILLed member dead within 3 s (p50) and 5 s (max), no false deaths
/// when idle. The figures below are the expected ones at n = 20 with a healthy local member.
///
/// Detection time ≈ wait for the first probe of the victim (≈ probeInterval, since each of the
/// n − 1 others probes it once per pass of n − 1 periods) + one probe period + the minimum
/// suspicion timeout (the expected confirmations arrive meanwhile, one prober per period) + a
/// gossip round: 0.25 + 0.25 + 1.3 + 0.1 ≈ 1.9 s at n = 20, ≈ 2.4 s at n = 50.
///
/// Measured in the simulator (`MembershipTests`, fake clock, ~1 ms links): a crashed member is
/// dead for all after 1.6–2.2 s at n = 20 and 2.4–2.65 s at n = 50; a join is known by all after
/// 0.3 s (p50, n = 50); no false death in an idle minute with 2% loss; a member whose every
/// message is 1 s late is suspected again and again but never declared dead.
public struct MembershipSettings: Sendable, Equatable {
    /// Period of the failure detector: one member is probed per period. 250 ms keeps detection
    /// under 3 s at n = 20 while costing only ~4 pings and ~4 acks per member per second.
    /// Scaled by (local health + 1) while the local member is struggling (Lifeguard).
    public var probeInterval: Duration
    /// How long to wait for a direct ack before asking others to probe (indirect probes).
    /// 125 ms is 100× a loopback round trip yet leaves half of the probe period for the
    /// indirect probes; a 2-core machine running 20 processes does stall for tens of
    /// milliseconds. Scaled by (local health + 1).
    public var probeTimeout: Duration
    /// How many members are asked to probe a target that missed its direct ack (SWIM's k).
    public var indirectProbes: Int
    /// An intermediary sends its nack when this fraction of `probeTimeout` has passed without an
    /// ack from the target (Lifeguard uses 80%), so the nack reaches the prober before its probe
    /// period ends.
    public var nackFraction: Double
    /// Scales the minimum suspicion timeout, `suspicionMultiplier × max(1, log10 n) ×
    /// probeInterval` (1.3 s at n = 20), and sets the confirmations that shrink the timeout to
    /// that minimum: `suspicionMultiplier − 2`. 4 gives a suspected member more than five probe
    /// periods to hear of it and refute.
    public var suspicionMultiplier: Int
    /// The suspicion timeout starts at `suspicionMaxTimeoutMultiplier ×` the minimum (7.8 s at
    /// n = 20) and shrinks logarithmically toward the minimum as independent confirmations
    /// arrive (Lifeguard). A lone suspicion (a member with a bad link) therefore needs a long
    /// time to kill, while a real failure, confirmed by every prober, is fast.
    public var suspicionMaxTimeoutMultiplier: Int
    /// Upper bound of the local health multiplier (Lifeguard's LHM): probe interval and timeout
    /// are multiplied by (score + 1), so at most 9× when the local member is overwhelmed.
    public var maxLocalHealth: Int
    /// Period of the dissemination rounds. 100 ms with a fanout of 3 spreads an update to 20
    /// members in ~3 rounds (each round roughly quadruples the informed set).
    public var gossipInterval: Duration
    /// Members sent a dissemination round each gossip interval (only when there is something to
    /// say).
    public var gossipFanout: Int
    /// Each update is sent about `retransmitMultiplier × ceil(log2(n + 1))` times (15 at n = 20,
    /// 18 at n = 50) by every member that learned it, which makes the chance that some member
    /// misses it negligible even with some loss.
    public var retransmitMultiplier: Int
    /// Most updates piggy-backed on or broadcast in one message.
    public var maxUpdatesPerMessage: Int
    /// Most bytes of updates in one message (estimated): about 16 alive updates with full
    /// metadata, so a message stays within a couple of TCP segments and load stays bounded.
    public var maxUpdateBytesPerMessage: Int
    /// Period of the push-pull anti-entropy with one random member at up to
    /// ``pushPullScaleThreshold`` members. Anti-entropy only repairs what gossip missed, so it
    /// can be slow; it is the costliest message (the whole table).
    public var pushPullInterval: Duration
    /// Above this many members the push-pull interval grows in proportion to n, so the bytes per
    /// member per second spent on anti-entropy (table size × rate) stay flat as the cluster grows.
    public var pushPullScaleThreshold: Int
    /// Period of a push-pull with a random *dead* (not left) member still remembered, so two
    /// sides of a healed partition find each other again. `.zero` disables it.
    public var reconnectInterval: Duration
    /// Until some member answers a join, the seeds are tried again after this long.
    public var joinRetryInterval: Duration
    /// How long dead and left members are remembered (tombstones), so an old-incarnation
    /// "alive" still circulating cannot bring them back; afterwards they are forgotten.
    public var tombstoneRetention: Duration
    /// The most an update may raise what we know of a member's incarnation. A member raises its
    /// own by one per refutation or metadata change and every member hears of it within seconds,
    /// so a bigger jump is forged (or a member's bug) and the update is dropped and counted
    /// (``MembershipStatistics/implausibleUpdatesDropped``). 2^20 is more changes than a busy edge
    /// makes in hours. A restarted member may take one such jump about itself, to get past its
    /// previous run's record (see ``Membership``).
    public var maxIncarnationJump: UInt64
    /// The highest incarnation accepted for a member we know nothing of (a newcomer, or one
    /// whose tombstone was forgotten); a restarted member adopts its previous run's record only
    /// up to half of it, keeping the other half as headroom. No honest member comes near 2^61 (a
    /// million changes a second for 70,000 years), and since every later step is bounded by
    /// ``maxIncarnationJump``, a forged value can never push a member to `UInt64.max`, where it
    /// could no longer refute anything.
    public var maxFirstIncarnation: UInt64

    /// Creates settings; every parameter defaults to the ``lan`` value.
    public init(
        probeInterval: Duration = .milliseconds(250),
        probeTimeout: Duration = .milliseconds(125),
        indirectProbes: Int = 3,
        nackFraction: Double = 0.8,
        suspicionMultiplier: Int = 4,
        suspicionMaxTimeoutMultiplier: Int = 6,
        maxLocalHealth: Int = 8,
        gossipInterval: Duration = .milliseconds(100),
        gossipFanout: Int = 3,
        retransmitMultiplier: Int = 3,
        maxUpdatesPerMessage: Int = 32,
        maxUpdateBytesPerMessage: Int = 2048,
        pushPullInterval: Duration = .seconds(5),
        pushPullScaleThreshold: Int = 16,
        reconnectInterval: Duration = .seconds(10),
        joinRetryInterval: Duration = .seconds(1),
        tombstoneRetention: Duration = .seconds(60),
        maxIncarnationJump: UInt64 = 1 << 20,
        maxFirstIncarnation: UInt64 = 1 << 62
    ) {
        self.probeInterval = probeInterval
        self.probeTimeout = probeTimeout
        self.indirectProbes = indirectProbes
        self.nackFraction = nackFraction
        self.suspicionMultiplier = suspicionMultiplier
        self.suspicionMaxTimeoutMultiplier = suspicionMaxTimeoutMultiplier
        self.maxLocalHealth = maxLocalHealth
        self.gossipInterval = gossipInterval
        self.gossipFanout = gossipFanout
        self.retransmitMultiplier = retransmitMultiplier
        self.maxUpdatesPerMessage = maxUpdatesPerMessage
        self.maxUpdateBytesPerMessage = maxUpdateBytesPerMessage
        self.pushPullInterval = pushPullInterval
        self.pushPullScaleThreshold = pushPullScaleThreshold
        self.reconnectInterval = reconnectInterval
        self.joinRetryInterval = joinRetryInterval
        self.tombstoneRetention = tombstoneRetention
        self.maxIncarnationJump = maxIncarnationJump
        self.maxFirstIncarnation = maxFirstIncarnation
    }

    /// The defaults: a LAN or loopback cluster of about 20 processes (see the type's overview).
    public static var lan: MembershipSettings { MembershipSettings() }

    /// Minimum suspicion timeout for a cluster of `n` live members:
    /// `suspicionMultiplier × max(1, log10 n) × probeInterval`.
    func minSuspicionTimeout(members n: Int) -> Duration {
        let scale = Swift.max(1.0, log10(Double(Swift.max(1, n))))
        return probeInterval * (Double(suspicionMultiplier) * scale)
    }

    /// How many times each member sends an update: `retransmitMultiplier × ceil(log2(n + 1))`.
    func retransmitLimit(members n: Int) -> Int {
        retransmitMultiplier * Int(log2(Double(n + 1)).rounded(.up))
    }

    /// The push-pull period for `n` members (grows in proportion above the threshold).
    func pushPullPeriod(members n: Int) -> Duration {
        guard n > pushPullScaleThreshold, pushPullScaleThreshold > 0 else { return pushPullInterval }
        return pushPullInterval * (Double(n) / Double(pushPullScaleThreshold))
    }
}
