import Foundation
import NodeRuntime

/// One run of a whole cluster for one seed: the knobs drawn (and overridden), the workload and
/// the faults interleaved on the simulated network, then every fault healed and the cluster left
/// to settle, then the checks. Same seed, same build: the same event log, byte for byte.
/// A rule of the cluster broken on purpose, to see the checks catch it.
public enum BrokenRule: String, CaseIterable, Sendable {
    /// The coordinators answer a write before their successors hold it
    /// (``DeliberateFaults/answerBeforeReplicated``): an owner's death can lose what a client was
    /// told is done.
    case answerBeforeHeld = "answer-before-held"
    /// The coordinators write on either side of a partition
    /// (``DeliberateFaults/writeWithoutMajority``).
    case writeWithoutMajority = "write-without-majority"

    /// The faults the coordinators are built with.
    public var faults: DeliberateFaults {
        switch self {
        case .answerBeforeHeld: .answerBeforeReplicated
        case .writeWithoutMajority: .writeWithoutMajority
        }
    }
}

public struct Simulation {
    /// What a run did and found.
    public struct Outcome: Sendable {
        public let seed: UInt64
        public let knobs: SimulationKnobs
        public let overrides: SimulationOverrides
        /// Events in the log.
        public let events: Int
        /// Simulated time the run covered, in milliseconds.
        public let simulatedMs: Int64
        /// SHA-256 of the event log.
        public let digest: String
        public let violations: [Violation]
        /// Client operations answered with success, with an error, and not answered.
        public let answered: (ok: Int, failed: Int, unknown: Int)
        /// The log's last lines (what led to a failure).
        public let tail: [String]
        /// Every line of the log, when asked for.
        public let lines: [String]?

        /// `seed= events= simtime= digest=`.
        public var summary: String {
            "seed=\(seed) events=\(events) simtime=\(Double(simulatedMs) / 1000)s digest=\(digest)"
        }

        /// The same outcome with only the violations `include` keeps.
        public func keeping(_ include: (Violation) -> Bool) -> Outcome {
            Outcome(seed: seed, knobs: knobs, overrides: overrides, events: events, simulatedMs: simulatedMs,
                    digest: digest, violations: violations.filter(include), answered: answered, tail: tail, lines: lines)
        }

        /// How to run this seed again, cut down by `overrides`.
        public var replay: String {
            "showroom-bench simulate --from \(seed) --seeds 1" + (overrides.isEmpty ? "" : " " + overrides.flags)
        }
    }

    /// The time every run starts at (milliseconds since the Unix epoch): fixed, so that nothing
    /// depends on when a run happens.
    public static let startMs: Int64 = 1_800_000_000_000
    /// A run that takes more events than this stopped making progress.
    public static let maxEvents = 5_000_000

    public let seed: UInt64
    public var overrides = SimulationOverrides()
    /// A rule the coordinators break on purpose: shows that the checks catch a broken rule.
    public var brokenRule: BrokenRule?
    /// Knobs to run with instead of the seed's draw: a test's narrow schedule (the replay line
    /// does not carry them).
    var fixedKnobs: SimulationKnobs?
    /// Keeps every line of the log in the outcome.
    public var keepLines = false

    public init(seed: UInt64) {
        self.seed = seed
    }

    /// A smaller schedule of this seed that still breaks `rule` (by default `outcome`'s first):
    /// each fault class switched off where the failure stays without it, then the client
    /// operations halved while it stays. At most about 20 runs. Returns the failing outcome of
    /// the smallest schedule found (`outcome` itself when nothing smaller fails).
    public func shrink(_ outcome: Outcome, rule: String? = nil) throws -> Outcome {
        guard let rule = rule ?? outcome.violations.first?.rule else { return outcome }
        var smallest = outcome
        func attempt(_ overrides: SimulationOverrides) throws -> Bool {
            var smaller = self
            smaller.overrides = overrides
            smaller.keepLines = false
            let tried = try smaller.run()
            guard tried.violations.contains(where: { $0.rule == rule }) else { return false }
            smallest = tried
            return true
        }
        let switches: [WritableKeyPath<SimulationOverrides, Bool>] = [
            \.noPartitions, \.noKills, \.noDiskLoss, \.noQuickRestarts, \.cleanNetwork,
        ]
        for flag in switches where !smallest.overrides[keyPath: flag] {
            var overrides = smallest.overrides
            overrides[keyPath: flag] = true
            _ = try attempt(overrides)
        }
        var steps = smallest.knobs.steps
        while steps > 1 {
            var overrides = smallest.overrides
            overrides.steps = steps / 2
            guard try attempt(overrides) else { break }
            steps /= 2
        }
        return smallest
    }

    /// Runs the seed.
    public func run() throws -> Outcome {
        let root = SimulationRNG(seed: seed)
        var knobsRNG = root.child("knobs")
        let drawn = SimulationKnobs.draw(&knobsRNG)
        let knobs = overrides.applied(to: fixedKnobs ?? drawn)
        let scheduler = SimulationScheduler(startMs: Self.startMs)
        var log = SimulationEventLog(keepLines: keepLines)
        log.record(scheduler.now, "seed=\(seed) \(knobs)\(brokenRule.map { " broken-rule=\($0.rawValue)" } ?? "")")
        let network = SimulatedNetwork(scheduler: scheduler, log: log, rng: root.child("network"), knobs: knobs)
        let cluster = try SimulatedCluster(network: network, knobs: knobs, rng: root.child("nodes"),
                                           faults: brokenRule?.faults ?? [])
        let workload = RoomWorkload(rng: root.child("workload"), cluster: cluster)
        let links = SimulatedClientLinks(scheduler: scheduler, rng: root.child("client links"), knobs: knobs)
        let engines = EngineWorkload(cluster: cluster, links: links)
        workload.engines = engines
        var edgesKilled: [(edge: String, channels: [String])] = []
        cluster.onEdgeKilled = { edge, channels in
            edgesKilled.append((edge, channels))
            links.edgeDied(edge)
        }
        let faults = Faults(rng: root.child("faults"), cluster: cluster, knobs: knobs)
        var violations: [Violation] = []

        // Faults and the workload, interleaved.
        var clients = root.child("clients")
        var at = scheduler.now + 2_000
        for _ in 0..<knobs.steps {
            at += 1 + clients.exponential(meanMs: knobs.operationMeanMs)
            scheduler.schedule(at: at) { workload.step() }
        }
        let calls = CallWorkload(rng: root.child("calls"), cluster: cluster)
        let interactions = InteractionWorkload(rng: root.child("interactions"), cluster: cluster)
        scheduleCallsAndInteractions(calls, interactions, rng: root.child("call and interaction clients"),
                                     steps: knobs.steps, from: scheduler.now + 1_000, until: at, on: scheduler)
        let faultPhaseEnd = at + RoomWorkload.clientTimeoutMs
        var next = scheduler.now + 2_000
        while knobs.faultMeanMs > 0 {
            next += 1 + faults.interval()
            guard next < faultPhaseEnd else { break }
            scheduler.schedule(at: next) { faults.inject() }
        }
        if !scheduler.run(until: faultPhaseEnd, maxEvents: Self.maxEvents) {
            violations.append(Violation(rule: "no progress", detail: "more than \(Self.maxEvents) events in the fault phase"))
        }

        // Liveness: everything healed, a clean network, time to settle.
        network.knobs.lossPerMille = 0
        network.knobs.duplicatePerMille = 0
        network.knobs.reorderPerMille = 0
        network.heal()
        for id in cluster.coordinatorIDs + cluster.callSignalIDs + cluster.edgeIDs where !network.isAlive(id) {
            try cluster.restart(id, diskLost: false)
        }
        network.record("liveness")
        if violations.isEmpty,
           !scheduler.run(until: scheduler.now + Int64(knobs.livenessMs), maxEvents: Self.maxEvents) {
            violations.append(Violation(rule: "no progress", detail: "more than \(Self.maxEvents) events while settling"))
        }
        violations += Invariants.rooms(workload, cluster)
        violations += Invariants.channelEvents(cluster.published)
        violations += Invariants.chatNotices(cluster.publishedChat)
        violations += Invariants.calls(.init(cluster, uids: calls.uids), nodes: cluster.callSignalIDs, uids: calls.uids,
                                       clients: calls.views)
        let held = Invariants.roomsAtHolders(interactions.createdRoomIDs, cluster)
        violations += Invariants.interactions(rooms: held.rooms, successors: held.successors, nowMs: scheduler.now,
                                              skewMs: 2 * Int64(knobs.clockSkewMaxMs) + 1_000)
        violations += EngineInvariants.check(EngineInvariants.Snapshot(
            cluster: cluster, engines: engines, channelsOfKilledEdges: Set(edgesKilled.flatMap(\.channels))))
        for violation in violations { network.record("violation \(violation)") }
        let log2 = network.log
        return Outcome(seed: seed, knobs: knobs, overrides: overrides, events: log2.count,
                       simulatedMs: scheduler.now - Self.startMs, digest: log2.digest, violations: violations,
                       answered: workload.answered, tail: log2.tail, lines: log2.lines)
    }
}

/// The faults of a run, drawn from the faults generator: partitions (one node cut off, the cluster
/// split, or one side's messages lost one way) that heal, and processes killed and started again
/// (rarely with their disk lost, only while nothing else is wrong). One failure at a time: each
/// heals, and the members can notice, before the next.
final class Faults {
    private var rng: SimulationRNG
    private let cluster: SimulatedCluster
    private let knobs: SimulationKnobs
    /// A disk is lost only this long after the last fault ended.
    static let settleMs: Int64 = 10_000

    init(rng: SimulationRNG, cluster: SimulatedCluster, knobs: SimulationKnobs) {
        self.rng = rng
        self.cluster = cluster
        self.knobs = knobs
    }

    func interval() -> Int64 { rng.exponential(meanMs: knobs.faultMeanMs) }

    func inject() {
        let network = cluster.network
        let servers = cluster.coordinatorIDs + cluster.callSignalIDs + cluster.edgeIDs
        // One failure at a time: a new one only once the last has healed and every member could
        // have noticed. Owner and successor survive any one failure; two at once (a partition
        // that cut an owner's successor off, then the owner's death) can lose a write
        // acknowledged while only its owner held it, which no two-copy scheme prevents.
        guard !network.partitioned, servers.allSatisfy({ network.isAlive($0) }),
              network.now - cluster.lastFaultEndedMs >= Int64(knobs.detectionMaxMs) + 500 else { return }
        var duration = Int64(rng.int(in: 300...max(300, knobs.faultMaxDurationMs)))
        if rng.chance(perMille: knobs.partitionPerMille) {
            let everyone = network.order
            switch rng.int(in: 0...2) {
            case 0: network.partition([rng.pick(everyone)], asymmetric: false)
            case 1:
                let side = everyone.filter { _ in rng.chance(perMille: 500) }
                guard !side.isEmpty, side.count < everyone.count else { return }
                network.partition(side, asymmetric: false)
            default: network.partition([rng.pick(everyone)], asymmetric: true)
            }
            cluster.faultEnded(after: duration) { network.heal() }
        } else {
            let victim = rng.pick(servers)
            let settled = !network.partitioned && network.now - cluster.lastFaultEndedMs >= Self.settleMs
            let diskLost = settled && cluster.coordinatorIDs.contains(victim) && rng.chance(perMille: knobs.diskLossPerMille)
            if !rng.chance(perMille: knobs.quickRestartPerMille) {
                // Dead until every member noticed, as a membership protocol would see a crash.
                duration = max(duration, Int64(knobs.detectionMaxMs) + 500)
            }
            network.record("fault kill \(victim)\(diskLost ? " disk lost" : "") for \(duration)ms")
            cluster.kill(victim)
            cluster.faultEnded(after: duration) { [cluster] in
                guard !network.isAlive(victim) else { return }
                try? cluster.restart(victim, diskLost: diskLost)
            }
        }
    }
}

extension Simulation {
    /// Starts the call and interaction workloads at `from` (users log in, rooms are created) and
    /// spreads `steps` of their steps, drawn between the two, over the client phase until `until`.
    /// Their own generator: the room workload's operations keep their times.
    func scheduleCallsAndInteractions(_ calls: CallWorkload, _ interactions: InteractionWorkload, rng: SimulationRNG,
                                      steps: Int, from: Int64, until: Int64, on scheduler: SimulationScheduler) {
        var rng = rng
        scheduler.schedule(at: from) {
            calls.start()
            interactions.start()
        }
        let span = Int(max(0, until - from - 1_000))
        for _ in 0..<steps {
            let at = from + 1_000 + Int64(rng.int(in: 0...span))
            let call = rng.chance(perMille: 500)
            scheduler.schedule(at: at) { call ? calls.step() : interactions.step() }
        }
    }
}
