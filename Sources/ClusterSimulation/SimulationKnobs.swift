/// Everything a run varies, drawn per seed from wide ranges (swarm testing: one seed loses many
/// messages and never partitions, another partitions often on a clean network), and logged before
/// the run starts. Overrides cut a failing run down by hand: fewer steps, fewer faults.
public struct SimulationKnobs: Sendable, Equatable, CustomStringConvertible {
    /// Coordinators in the cluster.
    public var coordinators: Int
    /// Call-signal nodes in the cluster.
    public var callSignals: Int
    /// Edges (the real edge shell), whose clients are the run's SDK engines.
    public var edges: Int
    /// One-way delay of a message: at least this ...
    public var delayMinMs: Int
    /// ... plus an exponential wait with this mean.
    public var delayMeanMs: Int
    /// Messages lost, per thousand.
    public var lossPerMille: Int
    /// Messages delivered twice, per thousand.
    public var duplicatePerMille: Int
    /// Messages that overtake those sent before them on their path, per thousand.
    public var reorderPerMille: Int
    /// Messages a directed path holds in flight; one more is dropped (a full queue).
    public var pathCapacity: Int
    /// How long a member's failure or return takes to be noticed by the others.
    public var detectionMinMs: Int
    public var detectionMaxMs: Int
    /// Clock skew: each node's wall clock is off by up to this, either way.
    public var clockSkewMaxMs: Int
    /// Client operations in the fault phase.
    public var steps: Int
    /// Mean wait between two client operations.
    public var operationMeanMs: Int
    /// Mean wait between two faults (0: no faults).
    public var faultMeanMs: Int
    /// How long a partition or a dead process lasts, at most.
    public var faultMaxDurationMs: Int
    /// Of the faults, the share (per thousand) that are partitions; the rest are process kills.
    public var partitionPerMille: Int
    /// Of the kills, the share (per thousand) whose process comes back before the others noticed
    /// it die; the others wait until every member saw it dead.
    public var quickRestartPerMille: Int
    /// Of the kills, the share (per thousand) that lose the process's disk too: it comes back
    /// empty, as a replaced machine does. Only while nothing else is wrong.
    public var diskLossPerMille: Int
    /// How long the liveness phase runs, everything healed, before the checks.
    public var livenessMs: Int

    /// The knobs of `rng`'s seed.
    public static func draw(_ rng: inout SimulationRNG) -> SimulationKnobs {
        SimulationKnobs(
            coordinators: rng.int(in: 3...5),
            callSignals: rng.int(in: 2...3),
            edges: rng.int(in: 1...3),
            delayMinMs: rng.int(in: 0...10),
            delayMeanMs: rng.int(in: 1...40),
            lossPerMille: rng.pick([0, 0, 5, 20, 50, 100]),
            duplicatePerMille: rng.pick([0, 0, 5, 20]),
            reorderPerMille: rng.pick([0, 10, 100, 300]),
            pathCapacity: rng.int(in: 64...1024),
            detectionMinMs: rng.int(in: 200...1000),
            detectionMaxMs: rng.int(in: 1000...4000),
            clockSkewMaxMs: rng.pick([0, 50, 500, 3000]),
            steps: rng.int(in: 100...300),
            operationMeanMs: rng.int(in: 10...150),
            faultMeanMs: rng.pick([0, 1000, 3000, 8000]),
            faultMaxDurationMs: rng.int(in: 500...8000),
            partitionPerMille: rng.int(in: 0...1000),
            quickRestartPerMille: rng.pick([0, 0, 200]),
            diskLossPerMille: rng.pick([0, 100, 300]),
            livenessMs: 30_000
        )
    }

    public var description: String {
        "coordinators=\(coordinators) callsignals=\(callSignals) edges=\(edges) delay=\(delayMinMs)+exp(\(delayMeanMs))ms "
            + "loss=\(lossPerMille)‰ dup=\(duplicatePerMille)‰ reorder=\(reorderPerMille)‰ capacity=\(pathCapacity) "
            + "detection=\(detectionMinMs)-\(detectionMaxMs)ms skew=±\(clockSkewMaxMs)ms steps=\(steps) "
            + "op=exp(\(operationMeanMs))ms faults=exp(\(faultMeanMs))ms≤\(faultMaxDurationMs)ms "
            + "partitions=\(partitionPerMille)‰ quickrestarts=\(quickRestartPerMille)‰ diskloss=\(diskLossPerMille)‰ liveness=\(livenessMs)ms"
    }
}

/// What a replay changes in a seed's drawn knobs, to cut a failing run down.
public struct SimulationOverrides: Sendable, Equatable {
    /// Client operations in the fault phase.
    public var steps: Int?
    /// No faults at all (the network's loss, duplication and reordering too).
    public var noFaults = false
    /// No message loss, duplication or reordering; process and partition faults stay.
    public var cleanNetwork = false
    /// No partitions.
    public var noPartitions = false
    /// No process kills.
    public var noKills = false
    /// Every killed process stays dead until every member noticed.
    public var noQuickRestarts = false
    /// No process loses its disk.
    public var noDiskLoss = false

    public init(steps: Int? = nil, noFaults: Bool = false, cleanNetwork: Bool = false, noPartitions: Bool = false,
                noKills: Bool = false, noQuickRestarts: Bool = false, noDiskLoss: Bool = false) {
        self.steps = steps
        self.noFaults = noFaults
        self.cleanNetwork = cleanNetwork
        self.noPartitions = noPartitions
        self.noKills = noKills
        self.noQuickRestarts = noQuickRestarts
        self.noDiskLoss = noDiskLoss
    }

    /// Whether nothing is overridden.
    public var isEmpty: Bool { self == SimulationOverrides() }

    /// The flags that give these overrides on the command line.
    public var flags: String {
        var flags: [String] = []
        if let steps { flags.append("--steps \(steps)") }
        if noFaults { flags.append("--no-faults") }
        if cleanNetwork { flags.append("--clean-network") }
        if noPartitions { flags.append("--no-partitions") }
        if noKills { flags.append("--no-kills") }
        if noQuickRestarts { flags.append("--no-quick-restarts") }
        if noDiskLoss { flags.append("--no-disk-loss") }
        return flags.joined(separator: " ")
    }

    func applied(to knobs: SimulationKnobs) -> SimulationKnobs {
        var knobs = knobs
        if let steps { knobs.steps = steps }
        if noFaults || cleanNetwork {
            knobs.lossPerMille = 0
            knobs.duplicatePerMille = 0
            knobs.reorderPerMille = 0
            knobs.pathCapacity = 1_000_000
        }
        if noFaults { knobs.faultMeanMs = 0 }
        if noPartitions { knobs.partitionPerMille = 0 }
        if noKills { knobs.partitionPerMille = 1000 }
        if noQuickRestarts { knobs.quickRestartPerMille = 0 }
        if noDiskLoss { knobs.diskLossPerMille = 0 }
        if noPartitions && noKills { knobs.faultMeanMs = 0 }
        return knobs
    }
}
