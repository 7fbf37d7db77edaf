import ArgumentParser
import ClusterSimulation
import Foundation

/// `showroom-bench simulate`: runs the whole cluster in one process on a simulated network and
/// clock, one run per seed, faults drawn from the seed; prints each failing seed with its knobs
/// and how to replay it, one digest over every run, the violations, and simulated seconds per wall
/// second.
extension BrokenRule: ExpressibleByArgument {}

struct SimulateBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Deterministic whole-cluster simulation: seeds with faults, checks after healing, one digest.")

    @Option(help: "Seeds to run.")
    var seeds = 100

    @Option(help: "The first seed.")
    var from: UInt64 = 1

    @Option(help: "Client operations per run (overrides the seed's draw).")
    var steps: Int?

    @Flag(help: "No faults at all: no partitions, kills, loss, duplication or reordering.")
    var noFaults = false

    @Flag(help: "No message loss, duplication or reordering.")
    var cleanNetwork = false

    @Flag(help: "No partitions.")
    var noPartitions = false

    @Flag(help: "No process kills.")
    var noKills = false

    @Flag(help: "Every killed process stays dead until every member noticed.")
    var noQuickRestarts = false

    @Flag(help: "No process loses its disk.")
    var noDiskLoss = false

    @Option(help: "Break a rule on purpose, to see the checks catch it: answer-before-held (a write answered before the successor holds it) or write-without-majority (both sides of a partition write). Only what the honest run of the seed does not find counts.")
    var brokenRule: BrokenRule?

    @Flag(help: "Print every event of each run (use with one seed).")
    var printLog = false

    @Flag(help: "Print one JSON object.")
    var json = false

    /// How many failing seeds are cut down to a minimal schedule (each takes up to about 20 runs).
    static let shrunkSeeds = 10

    func validate() throws {
        guard (1...1_000_000).contains(seeds) else { throw ValidationError("--seeds must be 1–1000000") }
        if let steps, !(0...100_000).contains(steps) { throw ValidationError("--steps must be 0–100000") }
    }

    func run() throws {
        Self.ensureDeterministicHashing()
        let overrides = SimulationOverrides(steps: steps, noFaults: noFaults, cleanNetwork: cleanNetwork,
                                            noPartitions: noPartitions, noKills: noKills, noQuickRestarts: noQuickRestarts,
                                            noDiskLoss: noDiskLoss)
        let wallStart = ContinuousClock.now
        var digests: [String] = []
        var failing: [UInt64] = []
        var violations = 0
        var simulatedMs: Int64 = 0
        var events = 0
        // Cutting failures down is not simulation time of the seeds: it is left out of the rate.
        var shrinking = Duration.zero
        for seed in from..<(from + UInt64(seeds)) {
            var simulation = Simulation(seed: seed)
            simulation.overrides = overrides
            simulation.brokenRule = brokenRule
            simulation.keepLines = printLog
            var outcome = try simulation.run()
            for line in outcome.lines ?? [] { print(line, terminator: "") }
            if brokenRule != nil {
                // Only what the broken rule adds counts: the same seed runs honestly too, and the
                // violations both runs found are the cluster's own, not the rule's.
                var honest = simulation
                honest.brokenRule = nil
                honest.keepLines = false
                let found = Set(try honest.run().violations.map(\.description))
                outcome = outcome.keeping { !found.contains($0.description) }
            }
            digests.append(outcome.digest)
            simulatedMs += outcome.simulatedMs
            events += outcome.events
            if seeds <= 20 || !outcome.violations.isEmpty { progress(outcome.summary, json: json) }
            guard !outcome.violations.isEmpty else { continue }
            failing.append(seed)
            violations += outcome.violations.count
            progress("FAIL seed=\(seed) \(outcome.knobs)", json: json)
            for violation in outcome.violations.prefix(10) { progress("  \(violation)", json: json) }
            progress("  replay: \(outcome.replay)\(brokenRule.map { " --broken-rule \($0.rawValue)" } ?? "")", json: json)
            if failing.count <= Self.shrunkSeeds {
                let shrinkStart = ContinuousClock.now
                let minimal = try simulation.shrink(outcome)
                shrinking += ContinuousClock.now - shrinkStart
                progress("  minimal: \(minimal.replay)\(brokenRule.map { " --broken-rule \($0.rawValue)" } ?? "") (\(minimal.events) events, "
                         + "\(minimal.knobs.steps) operations): \(minimal.violations.first.map(\.description) ?? "")", json: json)
            }
        }
        let wall = ContinuousClock.now - wallStart - shrinking
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let simulatedSeconds = Double(simulatedMs) / 1000
        let digest = SimulationEventLog.combined(digests)
        if json {
            try printJSON([
                "seeds": seeds, "from": from, "failingSeeds": failing, "violations": violations, "digest": digest,
                "firstSeedDigest": digests.first ?? "", "events": events,
                "simulatedSeconds": rounded(simulatedSeconds), "wallSeconds": rounded(wallSeconds, 2),
                "simulatedPerWallSecond": rounded(simulatedSeconds / max(wallSeconds, 1e-9)),
                "brokenRule": brokenRule?.rawValue ?? "", "overrides": overrides.flags,
            ])
        } else {
            print("seeds=\(seeds) from=\(from) failing=\(failing.count) violations=\(violations) events=\(events)")
            if let first = failing.first { print("first failing seed: \(first) (after \(first - from + 1) seeds)") }
            print("digest=\(digest)")
            print(String(format: "simulated %.1f s in %.2f s wall: %.0f simulated seconds per wall second",
                         simulatedSeconds, wallSeconds, simulatedSeconds / max(wallSeconds, 1e-9)))
        }
        if !failing.isEmpty && brokenRule == nil { throw ExitCode(1) }
    }

    /// Sets and Dictionaries iterate in an order Swift randomizes per process unless
    /// SWIFT_DETERMINISTIC_HASHING is set before the process starts: without it, the command runs
    /// itself again with it set, so that a seed gives the same log in every run.
    static func ensureDeterministicHashing() {
        guard getenv("SWIFT_DETERMINISTIC_HASHING") == nil, let executable = Bundle.main.executablePath else { return }
        setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
        let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(executable, arguments)
        // Only reached if the exec failed: run on, with a warning.
        FileHandle.standardError.write(Data("could not re-run with SWIFT_DETERMINISTIC_HASHING=1; runs may differ\n".utf8))
    }
}
