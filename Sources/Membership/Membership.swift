/// Cluster membership by gossip: SWIM with the Lifeguard refinements, as a pure state machine.
///
/// A value type with no I/O, no clock and no global randomness: the shell feeds it events —
/// received messages (``receive(_:now:)``), the passing of time (``tick(now:)``, called every 10–25
/// ms), commands (``join(seeds:now:)``, ``updateMetadata(_:now:)``, ``leave(now:)``) — each with the
/// current value of a monotonic clock, and carries out the ``MembershipDirective``s it returns
/// (send a message to an endpoint, report a member change). Random choices come from a generator
/// seeded at creation, so a simulation with a fixed seed is exactly reproducible.
///
/// What it does, after SWIM (Das et al. 2002), Lifeguard (Dadgar et al. 2018) and HashiCorp
/// memberlist:
/// - **Failure detection.** Every probe interval one member, taken round-robin from a shuffled
///   list, is pinged. Without an ack within the probe timeout, `indirectProbes` other members are
///   asked to ping it (ping-req) and answer with the ack or, failing that, a nack. Without any ack
///   by the end of the probe period, the member becomes *suspect*.
/// - **Suspicion and refutation.** A suspicion carries the suspect's incarnation; a suspect that
///   hears of it raises its incarnation and disseminates "alive", which beats the suspicion. With
///   no refutation before the suspicion timeout the suspect is declared *dead*. A member refutes
///   any claim about itself at its current incarnation or above — which is also how a restarted
///   member (incarnation 0) gets past its own tombstone.
/// - **Lifeguard.** The suspicion timeout starts long and shrinks as independent confirmations
///   arrive (``Suspicion``); a local health score slows a member that is itself struggling
///   (``LocalHealth``); nacks let a prober tell its own slowness from the target's failure; a
///   suspect target is told of the suspicion on the probe itself.
/// - **Dissemination.** Updates are piggy-backed on pings and acks and sent in gossip rounds to
///   `gossipFanout` random members, each about `retransmitMultiplier × ceil(log2(n + 1))` times
///   (``Dissemination``). Periodic push-pull with a random member exchanges whole tables
///   (anti-entropy); join is a push-pull with the seeds.
/// - **Tombstones.** Dead and left members are remembered for `tombstoneRetention`, so an
///   old-incarnation "alive" still circulating cannot bring them back, then forgotten.
///
/// **Forged incarnations.** Gossip carries claims about members from whoever relays them, so an
/// update may carry any incarnation, up to `UInt64.max`. Unchecked, one suspicion or leave at
/// `UInt64.max` would leave its victim unable to refute (no higher incarnation exists) and keep
/// the cluster holding its id dead at that value across every restart. So an incarnation is only
/// accepted where an honest member could have produced it (``Incarnation``, one place for the
/// arithmetic, which saturates and never traps). The rules rest on one fact of the deployment:
/// cluster links are authenticated and the shell drops a message whose `sender` is not the member
/// its connection authenticated as, so a hostile member can forge what a message says about
/// others but never that a message comes from another member.
/// - **A member speaking of itself is authoritative.** An "alive" about X in a message whose
///   sender is X (its refutation, its metadata, its push-pull row) is accepted at any higher
///   incarnation up to ``MembershipSettings/maxFirstIncarnation`` (2^62, beyond anything honest:
///   see below) — beyond the jump bound only if it keeps the cluster endpoint X last gave itself
///   (a run keeps its address) or revives a tombstone (a restart). Each member keeps, per other member, the highest incarnation that member told it
///   itself (or the one it first learned it at): its *vouched* incarnation.
/// - **Relayed claims are bounded.** Anything else about X — a suspicion, a death or a leave
///   (as a suspicion, see below) from anyone, an "alive" relayed by a third party — is accepted at most
///   ``MembershipSettings/maxIncarnationJump`` above X's vouched incarnation. The bound is taken
///   from what X said, not from the current view, so claims cannot ratchet a view up step by step:
///   every claim a member accepts is at most the jump bound above X's real incarnation, which X
///   accepts to refute. X's refutation (claim + 1) reaches every member first-hand — members
///   probe each other round-robin and exchange tables, and X piggy-backs its own news on its pings,
///   acks and gossip — so a member that dropped a relayed copy (it never heard the claim, and the
///   refutation looked like a jump) still takes it from X itself. A member that hears a suspicion
///   below its incarnation says "alive" again, first-hand, for the same reason.
/// - **An address changes only on the member's word.** A relayed "alive" about a known member
///   (live, or a tombstone it revives) may bring new metadata but keeps the cluster endpoint X
///   last gave us itself: otherwise plausible forged claims could point members' probes of X (and
///   X's of them) nowhere, so that no claim reaches X to be refuted and no refutation of X's
///   reaches them first-hand. X's own "alive" may move it (a restart at a new address).
/// - **Only a member can say it left.** A leave is final and a tombstone is never probed or
///   gossiped to, so a relayed leave counts only as a suspicion (X, still probed, hears of it and
///   refutes); the leaving member tells every live member itself, and a member that left still
///   answers pings with its leave. Otherwise forged leaves about one half of the cluster, told
///   to the other half, split it into two clusters that never speak again.
/// - **A member we do not know** is accepted at most at `maxFirstIncarnation`.
/// - **About ourselves**, a claim more than the jump bound above our incarnation is ignored (an
///   authenticated forger cannot get one accepted anywhere, see above), with one exception: a
///   member whose current run the cluster has not yet been seen to hold (a fresh start: no one has
///   yet told it "alive" at its own incarnation with its own metadata) may jump to a claim up to
///   half of `maxFirstIncarnation`, because that claim is most likely its previous run's record (a
///   long-lived member that restarted at 0 while the cluster remembers it at, say, 5 000 000). Its
///   refutation (that record + 1) is accepted first-hand by every member, so it gets past its own
///   tombstone at once; the other half is headroom for its later changes. A restarted member
///   facing a tombstone above that half (only a forger can put one there) does not adopt it: it
///   waits until the tombstone is forgotten (`tombstoneRetention`) and is then learned afresh at
///   its own low incarnation.
///
/// An honest member's incarnation thus grows by at most `maxIncarnationJump + 1` per forged claim
/// it refutes, each needing a round trip through it: reaching 2^61 would take 2^41 of them, so no
/// value any member holds comes near `UInt64.max`, where it could no longer refute anything.
/// Everything else is dropped and counted (``MembershipStatistics/implausibleUpdatesDropped``).
/// What remains possible for a member forging claims is what SWIM allows any member: a claim at a
/// plausible incarnation, which its live subject refutes within a round trip. Residual cases: a
/// member that hears of X first from a forger (X unknown to it, e.g. while it joins through the
/// forger) can be given a record of X far above X's own until that record dies and its tombstone
/// is forgotten; a leave that X announces while some member's vouched incarnation lags X's by more
/// than the jump bound is dropped there, which then sees X dead rather than left; and on a cluster
/// without authentication, where a message can claim any sender, a forged first-hand "alive" can
/// hold a member far above its own incarnation in one view (with forged metadata, and, should
/// that view then suspect it, dead there until the tombstone is forgotten).
public struct Membership: Sendable {
    /// The settings it runs with.
    public let settings: MembershipSettings

    private let id: MemberID
    /// Everyone known, the local member included.
    private var table: [MemberID: Member]
    /// The keys of `table`, sorted: random choices iterate this (never a dictionary, whose order
    /// changes from run to run), which keeps simulations reproducible.
    private var sortedIDs: [MemberID]
    /// Alive and suspect members, the local one included while it has not left.
    private var liveCount = 1
    private var rng: SeededRandom
    private var health: LocalHealth
    private var queue = Dissemination()
    private var scheduler = ProbeScheduler()
    private var suspicions: [MemberID: Suspicion] = [:]
    private var probe: Probe?
    /// Pings sent on behalf of others (ping-req), by our sequence.
    private var relays: [UInt64: Relay] = [:]
    private var lastSequence: UInt64 = 0
    private var nextProbeAt: Duration
    private var nextGossipAt: Duration
    private var nextPushPullAt: Duration
    private var nextReconnectAt: Duration
    private var joining: Join?
    /// The local member has left (cached: checked on every tick).
    private var hasLeft = false
    /// Another member has told us "alive" at our own incarnation and metadata: the cluster holds
    /// this run, so a claim about us far above it can no longer be our previous run's record.
    private var runAcknowledged = false
    private var nextTombstoneExpiry: Duration?
    /// Per other member, the highest incarnation it told us itself (an "alive" whose sender is
    /// the member) and its cluster endpoint then, or those we first learned it at: the base of the
    /// jump bound for what others say about it. Never above an honest member's own incarnation, so whatever claim
    /// that bound admits, the member accepts to refute.
    private var vouched: [MemberID: Vouched] = [:]
    /// Counters since creation.
    public private(set) var statistics = MembershipStatistics()

    /// What a member last told us of itself (see `vouched`).
    private struct Vouched: Sendable {
        let incarnation: UInt64
        let clusterEndpoint: String
    }

    /// The probe in progress.
    private struct Probe: Sendable {
        let target: MemberID
        let sequence: UInt64
        /// Direct ack deadline; then the indirect probes go out.
        let timeoutAt: Duration
        /// End of the probe period: without an ack by then, the target is suspected.
        let endsAt: Duration
        var indirectSent = false
        var expectedNacks = 0
        var nacks = 0
    }

    /// A ping sent for another member's ping request.
    private struct Relay: Sendable {
        let requester: MemberAddress
        let requesterSequence: UInt64
        /// When to tell the requester the target did not answer; nil once sent or not wanted.
        var nackAt: Duration?
        let expiresAt: Duration
    }

    /// Seeds to retry until some member answers.
    private struct Join: Sendable {
        let seeds: [String]
        var nextAttemptAt: Duration
    }

    /// Where an update came from. Every change it causes is disseminated further whatever the
    /// origin: a simulated simultaneous join of 50 members converged in 0.75 s this way, but took
    /// 5 s (the next push-pull) when changes learned from push-pull tables were applied silently,
    /// because a newcomer's table comes from push-pull and its own view is too small to spread it.
    private enum Origin {
        /// Piggy-backed or broadcast news from `sender`.
        case gossip(sender: MemberID)
        /// A row of `sender`'s push-pull table: a death it reports only counts as a suspicion, and
        /// the suspicions it reports are attributed to `sender`.
        case pushPull(sender: MemberID)
    }

    // MARK: - Creating

    /// Creates the local member, alive at incarnation 0, knowing nobody else yet.
    ///
    /// - Parameters:
    ///   - id: The local node id (stable across restarts).
    ///   - metadata: What the local member publishes about itself.
    ///   - settings: Timers and bounds; ``MembershipSettings/lan`` by default.
    ///   - now: The current value of the shell's monotonic clock.
    ///   - randomSeed: Seeds every random choice; use a fixed value in simulations.
    public init(
        id: MemberID,
        metadata: MemberMetadata,
        settings: MembershipSettings = .lan,
        now: Duration,
        randomSeed: UInt64
    ) {
        self.id = id
        self.settings = settings
        self.table = [id: Member(id: id, metadata: metadata, state: .alive, incarnation: 0, lastHeard: now, stateChangedAt: now)]
        self.sortedIDs = [id]
        self.rng = SeededRandom(seed: randomSeed)
        self.health = LocalHealth(maximum: settings.maxLocalHealth)
        // Random phases, so members started together do not probe and exchange in lockstep.
        self.nextProbeAt = now
        self.nextGossipAt = now
        self.nextPushPullAt = now
        self.nextReconnectAt = now
        nextProbeAt = now + settings.probeInterval * Double.random(in: 0.5...1, using: &rng)
        nextGossipAt = now + settings.gossipInterval
        nextPushPullAt = now + settings.pushPullInterval * Double.random(in: 0.5...1, using: &rng)
        nextReconnectAt = now + settings.reconnectInterval * Double.random(in: 0.5...1, using: &rng)
    }

    // MARK: - Reading

    /// Everyone known, the local member and tombstones included, sorted by id.
    public var members: [Member] {
        sortedIDs.map { table[$0]! }
    }

    /// The local member as the cluster should see it.
    public var localMember: Member {
        table[id]!
    }

    /// The member with `id`, if known.
    ///
    /// - Parameter id: A node id.
    /// - Returns: Its record, or `nil` if unknown (never heard of, or forgotten).
    public func member(_ id: MemberID) -> Member? {
        table[id]
    }

    /// Lifeguard's local health score: 0 when healthy, up to `maxLocalHealth`; probe interval and
    /// timeout are multiplied by (score + 1).
    public var localHealth: Int { health.score }

    /// Whether another member has told us "alive" at our own incarnation and metadata: from then
    /// on a claim about us far above our incarnation is refused as forged, never taken as our
    /// previous run's record.
    public var isRunAcknowledged: Bool { runAcknowledged }

    /// True while a join is unanswered (the seeds are retried by ``tick(now:)``).
    public var isJoining: Bool { joining != nil }

    /// Alive and suspect members, the local one included unless it left: the `n` of the formulas.
    public var liveMemberCount: Int { liveCount }

    /// The earliest time at which ``tick(now:)`` has something to do, for shells that schedule
    /// exactly instead of ticking periodically.
    public var nextDeadline: Duration? {
        var earliest: Duration? = nil
        func consider(_ time: Duration?) {
            guard let time else { return }
            if earliest == nil || time < earliest! { earliest = time }
        }
        if !queue.isEmpty { consider(nextGossipAt) }
        consider(joining?.nextAttemptAt)
        guard !hasLeft else { return earliest }
        consider(nextProbeAt)
        if let probe {
            consider(probe.indirectSent ? probe.endsAt : probe.timeoutAt)
        }
        for relay in relays.values {
            consider(relay.nackAt ?? relay.expiresAt)
        }
        for suspicion in suspicions.values {
            consider(suspicion.deadline)
        }
        consider(nextPushPullAt)
        consider(nextReconnectAt)
        consider(nextTombstoneExpiry)
        return earliest
    }


    private var localAddress: MemberAddress {
        MemberAddress(id: id, endpoint: table[id]!.metadata.clusterEndpoint)
    }

    // MARK: - Commands

    /// Joins the cluster through `seeds`: a push-pull (full state exchange) with each, retried every
    /// `joinRetryInterval` by ``tick(now:)`` until some member answers. The local endpoint is left
    /// out of the seeds; with no seed left the member starts a cluster of its own.
    ///
    /// - Parameters:
    ///   - seeds: Cluster endpoints (`tcp://host:port`) of members to join through.
    ///   - now: The current clock value.
    /// - Returns: The push-pulls to send.
    public mutating func join(seeds: [String], now: Duration) -> [MembershipDirective] {
        let own = table[id]!.metadata.clusterEndpoint
        var targets: [String] = []
        for seed in seeds where !seed.isEmpty && seed != own && !targets.contains(seed) {
            targets.append(seed)
        }
        guard !targets.isEmpty, !hasLeft else {
            joining = nil
            return []
        }
        joining = Join(seeds: targets, nextAttemptAt: now + settings.joinRetryInterval)
        var out: [MembershipDirective] = []
        sendJoin(to: targets, &out)
        return out
    }

    /// Handles a message from another member.
    ///
    /// - Parameters:
    ///   - message: The decoded message.
    ///   - now: The current clock value.
    /// - Returns: Answers to send and member changes to report.
    public mutating func receive(_ message: GossipMessage, now: Duration) -> [MembershipDirective] {
        let sender = message.sender
        // Our own message come back (our endpoint among the seeds, say): nothing to learn.
        guard sender.id != id else { return [] }
        statistics.received[message.kind] += 1
        table[sender.id]?.lastHeard = now

        var out: [MembershipDirective] = []
        switch message {
        case .ping(let ping):
            merge(ping.updates, origin: .gossip(sender: sender.id), now: now, &out)
            // Meant for another process at this endpoint (a replaced node): stay silent.
            guard ping.target == id else { break }
            let ack = GossipMessage.Ack(sender: localAddress, sequence: ping.sequence, updates: piggyback(for: sender.id))
            send(.ack(ack), to: sender.endpoint, &out)

        case .pingRequest(let request):
            merge(request.updates, origin: .gossip(sender: sender.id), now: now, &out)
            guard request.target.id != id, !hasLeft else { break }
            let sequence = nextSequence()
            relays[sequence] = Relay(
                requester: request.sender,
                requesterSequence: request.sequence,
                nackAt: request.wantsNack ? now + settings.probeTimeout * settings.nackFraction : nil,
                // Long enough to relay a late ack while the requester's probe period may still run.
                expiresAt: now + settings.probeInterval)
            let ping = GossipMessage.Ping(
                sender: localAddress, sequence: sequence, target: request.target.id,
                updates: piggyback(for: request.target.id))
            send(.ping(ping), to: request.target.endpoint, &out)

        case .ack(let ack):
            merge(ack.updates, origin: .gossip(sender: sender.id), now: now, &out)
            if let current = probe, current.sequence == ack.sequence {
                // The target answered, directly or through an intermediary: healthy on both ends.
                probe = nil
                health.apply(-1)
            } else if let relay = relays.removeValue(forKey: ack.sequence) {
                let relayed = GossipMessage.Ack(
                    sender: localAddress, sequence: relay.requesterSequence, updates: piggyback(for: relay.requester.id))
                send(.ack(relayed), to: relay.requester.endpoint, &out)
            }

        case .nack(let nack):
            if probe?.sequence == nack.sequence {
                probe!.nacks += 1
                statistics.nacksReceived += 1
            }

        case .pushPull(let pushPull):
            merge(pushPull.members, origin: .pushPull(sender: sender.id), now: now, &out)
            // Whoever exchanged tables with us has let us in: stop retrying the seeds.
            joining = nil
            if !pushPull.isReply {
                let reply = GossipMessage.PushPull(sender: localAddress, isReply: true, members: snapshot())
                send(.pushPull(reply), to: sender.endpoint, &out)
            }

        case .broadcast(let broadcast):
            merge(broadcast.updates, origin: .gossip(sender: sender.id), now: now, &out)
        }
        return out
    }

    /// Runs every timer that is due: probes and their timeouts, indirect probes and nacks,
    /// suspicion timeouts, gossip and push-pull rounds, join retries, tombstone expiry. Call it
    /// often (every 10–25 ms); a call with nothing due is cheap and allocates nothing.
    ///
    /// - Parameter now: The current clock value.
    /// - Returns: Messages to send and member changes to report.
    public mutating func tick(now: Duration) -> [MembershipDirective] {
        var out: [MembershipDirective] = []
        if let join = joining, now >= join.nextAttemptAt {
            joining!.nextAttemptAt = now + settings.joinRetryInterval
            sendJoin(to: join.seeds, &out)
        }
        if hasLeft {
            // Leaving: only finish spreading the news.
            if now >= nextGossipAt { gossipRound(now: now, &out) }
            return out
        }
        if !relays.isEmpty { runRelays(now: now, &out) }
        if probe != nil { runProbe(now: now, &out) }
        if now >= nextProbeAt { startProbe(now: now, &out) }
        if !suspicions.isEmpty { runSuspicions(now: now, &out) }
        if now >= nextGossipAt { gossipRound(now: now, &out) }
        if now >= nextPushPullAt { pushPullRound(now: now, &out) }
        if now >= nextReconnectAt { reconnectRound(now: now, &out) }
        if let expiry = nextTombstoneExpiry, now >= expiry { forgetTombstones(now: now) }
        return out
    }

    /// Publishes new metadata (e.g. a load refresh): raises the local incarnation so the new
    /// value wins everywhere, and disseminates it. Metadata equal to the current one changes
    /// nothing (no new incarnation, nothing sent).
    ///
    /// - Parameters:
    ///   - metadata: The new metadata.
    ///   - now: The current clock value.
    /// - Returns: The local member's change, to report.
    public mutating func updateMetadata(_ metadata: MemberMetadata, now: Duration) -> [MembershipDirective] {
        guard !hasLeft, table[id]!.metadata != metadata else { return [] }
        var me = table[id]!
        me.metadata = metadata
        me.incarnation = Incarnation.successor(of: me.incarnation)
        me.lastHeard = now
        table[id] = me
        queue.enqueue(aliveUpdate(me))
        return [.memberChanged(MemberChange(member: me, previousState: .alive, metadataChanged: true))]
    }

    /// Leaves gracefully: the local member becomes `left` and tells every live member at once
    /// (the process may exit right after); others keep it as `left`, never `dead`. Keep ticking
    /// for a few gossip intervals if you can, to repeat the news. Afterwards the member stops
    /// probing and suspecting; it still answers pings so nobody suspects it meanwhile.
    ///
    /// - Parameter now: The current clock value.
    /// - Returns: The messages announcing the leave and the local member's change.
    public mutating func leave(now: Duration) -> [MembershipDirective] {
        guard !hasLeft else { return [] }
        var me = table[id]!
        me.state = .left
        hasLeft = true
        me.stateChangedAt = now
        me.lastHeard = now
        table[id] = me
        liveCount -= 1
        probe = nil
        relays.removeAll()
        suspicions.removeAll()
        joining = nil
        let update = MemberUpdate(id: id, state: .left, incarnation: me.incarnation, metadata: me.metadata, from: id)
        queue.enqueue(update)
        var out: [MembershipDirective] = [.memberChanged(MemberChange(member: me, previousState: .alive))]
        for other in sortedIDs where other != id {
            guard let member = table[other], !member.state.isTombstone else { continue }
            let broadcast = GossipMessage.Broadcast(sender: localAddress, updates: [update])
            send(.broadcast(broadcast), to: member.metadata.clusterEndpoint, &out)
        }
        return out
    }

    // MARK: - Probing

    private mutating func startProbe(now: Duration, _ out: inout [MembershipDirective]) {
        nextProbeAt = now + health.scale(settings.probeInterval)
        let table = self.table
        guard let target = scheduler.next(using: &rng, where: { table[$0].map { !$0.state.isTombstone } ?? false }),
              let member = table[target]
        else { return }
        let sequence = nextSequence()
        probe = Probe(
            target: target, sequence: sequence,
            timeoutAt: now + health.scale(settings.probeTimeout),
            endsAt: nextProbeAt)
        statistics.probes += 1
        let ping = GossipMessage.Ping(sender: localAddress, sequence: sequence, target: target, updates: piggyback(for: target))
        send(.ping(ping), to: member.metadata.clusterEndpoint, &out)
    }

    private mutating func runProbe(now: Duration, _ out: inout [MembershipDirective]) {
        guard var current = probe else { return }
        guard let state = table[current.target]?.state, !state.isTombstone else {
            // It died or left meanwhile (we heard from others): nothing left to find out.
            probe = nil
            return
        }
        if !current.indirectSent, now >= current.timeoutAt, let target = table[current.target] {
            current.indirectSent = true
            let helpers = randomMembers(settings.indirectProbes, excluding: current.target) { $0.state == .alive }
            current.expectedNacks = helpers.count
            let targetAddress = MemberAddress(id: target.id, endpoint: target.metadata.clusterEndpoint)
            for helper in helpers {
                let request = GossipMessage.PingRequest(
                    sender: localAddress, sequence: current.sequence, target: targetAddress, wantsNack: true,
                    updates: piggyback(for: helper.id))
                send(.pingRequest(request), to: helper.metadata.clusterEndpoint, &out)
            }
            statistics.indirectProbes += UInt64(helpers.count)
        }
        guard now >= current.endsAt else {
            probe = current
            return
        }
        // No ack, direct or relayed, within the period.
        probe = nil
        statistics.failedProbes += 1
        // Missing nacks mean our own links or scheduling are suspect, not just the target's;
        // with nobody to ask, any failed probe counts against us (Lifeguard).
        health.apply(current.expectedNacks > 0 ? current.expectedNacks - current.nacks : 1)
        guard let target = table[current.target], !target.state.isTombstone else { return }
        if target.state == .alive { statistics.suspicionsRaised += 1 }
        let suspicion = MemberUpdate(id: target.id, state: .suspect, incarnation: target.incarnation, from: id)
        mergeSuspect(suspicion, from: id, now: now, &out)
    }

    private mutating func runRelays(now: Duration, _ out: inout [MembershipDirective]) {
        var due: [UInt64] = []
        for (sequence, relay) in relays where now >= relay.expiresAt || (relay.nackAt.map { now >= $0 } ?? false) {
            due.append(sequence)
        }
        guard !due.isEmpty else { return }
        due.sort()
        for sequence in due {
            guard var relay = relays[sequence] else { continue }
            if let nackAt = relay.nackAt, now >= nackAt {
                relay.nackAt = nil
                let nack = GossipMessage.Nack(sender: localAddress, sequence: relay.requesterSequence)
                send(.nack(nack), to: relay.requester.endpoint, &out)
            }
            relays[sequence] = now >= relay.expiresAt ? nil : relay
        }
    }

    private mutating func runSuspicions(now: Duration, _ out: inout [MembershipDirective]) {
        var expired: [MemberID] = []
        for (member, suspicion) in suspicions where now >= suspicion.deadline {
            expired.append(member)
        }
        guard !expired.isEmpty else { return }
        expired.sort()
        for member in expired {
            guard let record = table[member], record.state == .suspect else {
                suspicions[member] = nil
                continue
            }
            statistics.deathsDeclared += 1
            let death = MemberUpdate(id: member, state: .dead, incarnation: record.incarnation, from: id)
            mergeDeadOrLeft(death, now: now, &out)
        }
    }

    // MARK: - Rounds

    private mutating func gossipRound(now: Duration, _ out: inout [MembershipDirective]) {
        nextGossipAt = now + settings.gossipInterval
        guard !queue.isEmpty else { return }
        for target in randomMembers(settings.gossipFanout, excluding: nil, where: { !$0.state.isTombstone }) {
            var updates: [MemberUpdate] = []
            queue.select(
                into: &updates, limit: retransmitLimit,
                maxCount: settings.maxUpdatesPerMessage, maxBytes: settings.maxUpdateBytesPerMessage)
            guard !updates.isEmpty else { break }
            send(.broadcast(.init(sender: localAddress, updates: updates)), to: target.metadata.clusterEndpoint, &out)
        }
    }

    private mutating func pushPullRound(now: Duration, _ out: inout [MembershipDirective]) {
        nextPushPullAt = now + settings.pushPullPeriod(members: liveCount)
        guard let target = randomMembers(1, excluding: nil, where: { $0.state == .alive }).first else { return }
        let request = GossipMessage.PushPull(sender: localAddress, isReply: false, members: snapshot())
        send(.pushPull(request), to: target.metadata.clusterEndpoint, &out)
    }

    /// A push-pull with a remembered dead member: if it is in fact alive (a healed partition),
    /// the tables it gets and sends make both sides refute and find each other again.
    private mutating func reconnectRound(now: Duration, _ out: inout [MembershipDirective]) {
        guard settings.reconnectInterval > .zero else {
            nextReconnectAt = .seconds(Int64.max)
            return
        }
        nextReconnectAt = now + settings.reconnectInterval
        guard let target = randomMembers(1, excluding: nil, where: { $0.state == .dead }).first else { return }
        let request = GossipMessage.PushPull(sender: localAddress, isReply: false, members: snapshot())
        send(.pushPull(request), to: target.metadata.clusterEndpoint, &out)
    }

    private mutating func sendJoin(to seeds: [String], _ out: inout [MembershipDirective]) {
        statistics.joinAttempts += 1
        let members = snapshot()
        for seed in seeds {
            send(.pushPull(.init(sender: localAddress, isReply: false, isJoin: true, members: members)), to: seed, &out)
        }
    }

    private mutating func forgetTombstones(now: Duration) {
        var next: Duration? = nil
        var forgotten: [MemberID] = []
        for member in sortedIDs where member != id {
            guard let record = table[member], record.state.isTombstone else { continue }
            let expiry = record.stateChangedAt + settings.tombstoneRetention
            if expiry <= now {
                forgotten.append(member)
            } else if next == nil || expiry < next! {
                next = expiry
            }
        }
        for member in forgotten {
            table[member] = nil
            vouched[member] = nil
            sortedIDs.removeAll { $0 == member }
            scheduler.remove(member)
            queue.remove(member)
            statistics.tombstonesForgotten += 1
        }
        nextTombstoneExpiry = next
    }

    // MARK: - Merging what others say

    private mutating func merge(_ updates: [MemberUpdate], origin: Origin, now: Duration, _ out: inout [MembershipDirective]) {
        for update in updates {
            merge(update, origin: origin, now: now, &out)
        }
    }

    private mutating func merge(_ update: MemberUpdate, origin: Origin, now: Duration, _ out: inout [MembershipDirective]) {
        if update.id == id {
            mergeAboutSelf(update, now: now, &out)
            return
        }
        let sender: MemberID = switch origin {
        case .gossip(let sender), .pushPull(let sender): sender
        }
        // The member speaking of itself (its refutation, its metadata, its push-pull row) is
        // authoritative up to the ceiling; everyone else is held to the jump bound over what the
        // member itself last told us, so relayed claims cannot ratchet a view out of its reach.
        let firstHand = sender == update.id && update.state == .alive
        let plausible = if let anchor = vouched[update.id], let known = table[update.id] {
            Incarnation.isWithinJump(update.incarnation, of: anchor.incarnation, bound: settings.maxIncarnationJump)
                || (firstHand && update.incarnation <= settings.maxFirstIncarnation
                    // Beyond the bound only at the address it vouched for (a run keeps its
                    // address), so a message forging the sender on an unauthenticated cluster
                    // cannot move a live member's record somewhere its probes fail; a tombstone
                    // may move (a restarted member, possibly at a new address, coming back).
                    && (update.metadata?.clusterEndpoint == anchor.clusterEndpoint || known.state.isTombstone))
        } else {
            update.incarnation <= settings.maxFirstIncarnation
        }
        guard plausible else {
            statistics.implausibleUpdatesDropped += 1
            return
        }
        if firstHand, let metadata = update.metadata, let anchor = vouched[update.id], update.incarnation > anchor.incarnation {
            vouched[update.id] = Vouched(incarnation: update.incarnation, clusterEndpoint: metadata.clusterEndpoint)
        }
        switch update.state {
        case .alive:
            mergeAlive(update, firstHand: firstHand, now: now, &out)
        case .suspect:
            switch origin {
            case .gossip(let sender): mergeSuspect(update, from: update.from ?? sender, now: now, &out)
            case .pushPull(let sender): mergeSuspect(update, from: sender, now: now, &out)
            }
        case .dead:
            if case .pushPull(let sender) = origin {
                // A whole table may be stale: a death it reports is only a suspicion here, which
                // the member can still refute (memberlist does the same).
                var suspicion = update
                suspicion.state = .suspect
                mergeSuspect(suspicion, from: sender, now: now, &out)
            } else {
                mergeDeadOrLeft(update, now: now, &out)
            }
        case .left where sender == update.id:
            mergeDeadOrLeft(update, now: now, &out)
        case .left:
            // Only the member itself can say it left (it tells every live member directly; see
            // ``leave(now:)``). Relayed, a leave is only a suspicion: a tombstone is never probed
            // and never gossiped to, so forged leaves about the members of one side, told to the
            // other, would split the cluster into halves that never speak again, whereas a
            // suspect is still probed, hears of the suspicion and refutes it — or, having really
            // left, answers with its own leave (``piggyback(for:)``).
            var suspicion = update
            suspicion.state = .suspect
            mergeSuspect(suspicion, from: sender, now: now, &out)
        }
    }

    private mutating func mergeAlive(_ update: MemberUpdate, firstHand: Bool, now: Duration, _ out: inout [MembershipDirective]) {
        guard var metadata = update.metadata else { return }
        // A known member's address changes only on its own word: a relayed "alive" — about a
        // live member or reviving a tombstone — keeps the address the member itself last gave
        // us. Otherwise plausible forged claims could point our probes of X (and X's of us)
        // nowhere, so that X's refutations, beyond the jump bound once relayed, never reach us
        // first-hand. A member restarted at a new address corrects it with its first "alive"
        // to us (its pings, its push-pulls).
        if !firstHand, let known = table[update.id] {
            metadata.clusterEndpoint = vouched[update.id]?.clusterEndpoint ?? known.metadata.clusterEndpoint
        }
        guard var member = table[update.id] else {
            // A new member.
            let member = Member(
                id: update.id, metadata: metadata, state: .alive, incarnation: update.incarnation,
                lastHeard: now, stateChangedAt: now)
            table[update.id] = member
            vouched[update.id] = Vouched(incarnation: update.incarnation, clusterEndpoint: metadata.clusterEndpoint)
            sortedIDs.insert(update.id, at: insertionIndex(of: update.id))
            scheduler.insert(update.id, using: &rng)
            liveCount += 1
            queue.enqueue(update)
            out.append(.memberChanged(MemberChange(member: member, previousState: nil)))
            return
        }
        // Only a higher incarnation beats what we know; for a tombstone this is the only way back.
        guard update.incarnation > member.incarnation else { return }
        let previous = member.state
        let metadataChanged = member.metadata != metadata
        member.incarnation = update.incarnation
        member.metadata = metadata
        member.state = .alive
        member.lastHeard = now
        if previous != .alive { member.stateChangedAt = now }
        table[update.id] = member
        if previous == .suspect { suspicions[update.id] = nil }
        if previous.isTombstone { liveCount += 1 }
        queue.enqueue(update)
        if previous != .alive || metadataChanged {
            out.append(.memberChanged(MemberChange(member: member, previousState: previous, metadataChanged: metadataChanged)))
        }
    }

    private mutating func mergeSuspect(
        _ update: MemberUpdate, from: MemberID, now: Duration, _ out: inout [MembershipDirective]
    ) {
        guard var member = table[update.id], update.incarnation >= member.incarnation else { return }
        var gossip = update
        gossip.metadata = nil
        gossip.from = from
        switch member.state {
        case .dead, .left:
            return
        case .suspect where update.incarnation == member.incarnation:
            // Another member suspects it too: an independent confirmation shortens the timeout.
            guard suspicions[update.id]?.confirm(from: from) == true else { return }
            statistics.suspicionConfirmations += 1
            // Pass it on so the others can count this suspector as well.
            queue.enqueue(gossip)
        case .alive, .suspect:
            // New suspicion (or one at a newer incarnation: the old suspicion was refuted).
            let previous = member.state
            member.state = .suspect
            member.incarnation = update.incarnation
            member.stateChangedAt = now
            member.lastHeard = now
            table[update.id] = member
            let minimum = settings.minSuspicionTimeout(members: liveCount)
            var expected = settings.suspicionMultiplier - 2
            if liveCount - 2 < expected { expected = 0 }  // too few members to ever confirm
            suspicions[update.id] = Suspicion(
                from: from, startedAt: now, minTimeout: minimum,
                maxTimeout: minimum * settings.suspicionMaxTimeoutMultiplier,
                expectedConfirmations: expected)
            queue.enqueue(gossip)
            if previous != .suspect {
                out.append(.memberChanged(MemberChange(member: member, previousState: previous)))
            }
        }
    }

    private mutating func mergeDeadOrLeft(_ update: MemberUpdate, now: Duration, _ out: inout [MembershipDirective]) {
        guard var member = table[update.id], update.incarnation >= member.incarnation else { return }
        // Left is final; dead may still turn into left (a leave racing a failure detection).
        guard member.state != .left, !(member.state == .dead && update.state == .dead) else { return }
        let previous = member.state
        member.state = update.state
        member.incarnation = update.incarnation
        member.stateChangedAt = now
        member.lastHeard = now
        table[update.id] = member
        suspicions[update.id] = nil
        if !previous.isTombstone { liveCount -= 1 }
        let expiry = now + settings.tombstoneRetention
        if nextTombstoneExpiry == nil || expiry < nextTombstoneExpiry! { nextTombstoneExpiry = expiry }
        var gossip = update
        gossip.metadata = nil
        queue.enqueue(gossip)
        out.append(.memberChanged(MemberChange(member: member, previousState: previous)))
    }

    /// Someone says something about us. Anything that could make others think less of us than
    /// our current state — a suspicion, a death or a leave at our incarnation or above, an
    /// "alive" above our incarnation or with other metadata — is refuted, unless its incarnation
    /// is implausible (see the type's overview: only a fresh run may jump, to its previous run's
    /// record).
    private mutating func mergeAboutSelf(_ update: MemberUpdate, now: Duration, _ out: inout [MembershipDirective]) {
        guard !hasLeft else { return }  // leaving: let them
        let me = table[id]!
        if update.state == .alive, update.incarnation == me.incarnation, update.metadata == me.metadata {
            runAcknowledged = true
            return
        }
        let refute: Bool = switch update.state {
        case .alive:
            update.incarnation > me.incarnation
                || (update.incarnation == me.incarnation && update.metadata.map { $0 != me.metadata } ?? false)
        case .suspect, .dead, .left:
            update.incarnation >= me.incarnation
        }
        guard refute else {
            // A suspicion or death below our incarnation: its sender missed our newer "alive"
            // (possibly refused as a jump it never saw the cause of); say it again, unchanged.
            if update.state != .alive, update.incarnation < me.incarnation, queue.queued(about: id) == nil {
                queue.enqueue(aliveUpdate(me))
            }
            return
        }
        // The bound others apply to relayed claims: whoever accepted the claim accepts our
        // refutation (claim + 1), and everyone accepts it from us first-hand.
        if !Incarnation.isWithinJump(update.incarnation, of: me.incarnation, bound: settings.maxIncarnationJump) {
            guard !runAcknowledged, update.incarnation <= settings.maxFirstIncarnation / 2 else {
                statistics.implausibleUpdatesDropped += 1
                return
            }
        }
        var refuted = me
        refuted.incarnation = Incarnation.successor(of: Swift.max(me.incarnation, update.incarnation))
        refuted.lastHeard = now
        table[id] = refuted
        statistics.refutations += 1
        // Having to refute hints that we were too slow to answer (Lifeguard).
        health.apply(1)
        queue.enqueue(aliveUpdate(refuted))
    }

    // MARK: - Helpers

    private var retransmitLimit: Int {
        settings.retransmitLimit(members: liveCount)
    }

    /// Updates to piggy-back on a message to `target`. A target we think suspect, dead or left
    /// first hears that (Lifeguard's "buddy system"), so it can refute at once.
    private mutating func piggyback(for target: MemberID) -> [MemberUpdate] {
        var updates: [MemberUpdate] = []
        if hasLeft {
            // A member that left still answers pings: the prober (which may only have heard of
            // the leave second-hand, a mere suspicion) learns it first-hand.
            let me = table[id]!
            updates.append(MemberUpdate(id: id, state: .left, incarnation: me.incarnation, metadata: me.metadata, from: id))
        }
        var skipping: MemberID? = nil
        if let member = table[target], member.state != .alive {
            updates.append(MemberUpdate(id: target, state: member.state, incarnation: member.incarnation, from: id))
            skipping = target
        }
        queue.select(
            into: &updates, limit: retransmitLimit,
            maxCount: settings.maxUpdatesPerMessage, maxBytes: settings.maxUpdateBytesPerMessage,
            skipping: skipping)
        return updates
    }

    /// The full table for push-pull, metadata on every row.
    private func snapshot() -> [MemberUpdate] {
        sortedIDs.map { key in
            let member = table[key]!
            return MemberUpdate(id: key, state: member.state, incarnation: member.incarnation, metadata: member.metadata)
        }
    }

    private func aliveUpdate(_ member: Member) -> MemberUpdate {
        MemberUpdate(id: member.id, state: .alive, incarnation: member.incarnation, metadata: member.metadata)
    }

    private mutating func send(_ message: GossipMessage, to endpoint: String, _ out: inout [MembershipDirective]) {
        statistics.sent[message.kind] += 1
        switch message {
        case .pushPull: break
        default: statistics.updatesSent += UInt64(message.updates.count)
        }
        out.append(.send(message, to: endpoint))
    }

    private mutating func nextSequence() -> UInt64 {
        lastSequence &+= 1
        return lastSequence
    }

    /// Up to `count` distinct random members other than the local one and `excluding` for which
    /// `isEligible` holds (reservoir sampling over the sorted ids, so the choice is reproducible).
    private mutating func randomMembers(
        _ count: Int, excluding: MemberID?, where isEligible: (Member) -> Bool
    ) -> [Member] {
        guard count > 0 else { return [] }
        var chosen: [Member] = []
        var seen = 0
        for key in sortedIDs where key != id && key != excluding {
            guard let member = table[key], isEligible(member) else { continue }
            seen += 1
            if chosen.count < count {
                chosen.append(member)
            } else {
                let slot = Int.random(in: 0..<seen, using: &rng)
                if slot < count { chosen[slot] = member }
            }
        }
        return chosen
    }

    private func insertionIndex(of key: MemberID) -> Int {
        var low = 0
        var high = sortedIDs.count
        while low < high {
            let middle = (low + high) / 2
            if sortedIDs[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
