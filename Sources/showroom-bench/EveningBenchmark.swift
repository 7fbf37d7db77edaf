import ArgumentParser
import Foundation
import OperatorTools
import ShowroomTesting
import ShowroomWire

/// `showroom-bench evening`: a host's whole evening on a running local cluster — rooms with hosts
/// and viewers, and a schedule drawn from `--seed` of 1v1 calls, PKs in both media modes, co-host
/// seats, swipes with the video loader, chat, and operations (an edge drained and one SIGKILLed,
/// edges scaled up and down, a coordinator and a call-signal node SIGKILLed and started again,
/// through `deploy/cluster.sh`) — while observers check the invariants. It prints each
/// invariant with its checks and violations, the schedule's digest (the same seed, the same
/// schedule), and each process's memory and descriptors at the start, after the warm-up and at
/// the end (the soak's figures). Exits non-zero on any violation.
struct EveningBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evening",
        abstract: "A seeded evening of every interaction together, with invariants checked all along (restarts and kills processes!).")

    @Option(help: "The schedule's seed: the same seed replays the same schedule.")
    var seed: UInt64 = 1

    @Option(help: "How long steps keep starting, in minutes.")
    var minutes = 5.0

    @Option(help: "Live rooms, each with a host.")
    var rooms = 4

    @Option(help: "Viewers staying in each room.")
    var viewers = 3

    @Option(help: "Viewers swiping through the rooms with the video loader.")
    var swipers = 2

    @Option(help: "Edges the cluster runs with (scaled to this first).")
    var edges = 2

    @Flag(name: .customLong("no-operations"), help: "Take no process away (no drain, kill, scaling or restart).")
    var noOperations = false

    @Option(name: .customLong("webhook-port"),
            help: "Receive the cluster's webhooks on this port of 127.0.0.1 and check the event numbering (start the cluster with --webhook http://127.0.0.1:PORT/events --webhook-secret S).")
    var webhookPort: Int?

    @Option(name: .customLong("webhook-secret"), help: "The secret the cluster signs webhooks with.")
    var webhookSecret = ""

    @Option(name: .customLong("cluster-script"), help: "The launcher script (default: deploy/cluster.sh of the checkout this binary was built in).")
    var clusterScript: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var app: AppCredentials

    func validate() throws {
        guard minutes > 0, minutes <= 600 else { throw ValidationError("--minutes must be in (0, 600]") }
        guard (2...20).contains(rooms) else { throw ValidationError("--rooms must be 2–20") }
        guard (1...20).contains(viewers) else { throw ValidationError("--viewers must be 1–20") }
        guard (0...10).contains(swipers) else { throw ValidationError("--swipers must be 0–10") }
        guard (1...10).contains(edges) else { throw ValidationError("--edges must be 1–10") }
        if let webhookPort, !(1...65535).contains(webhookPort) { throw ValidationError("--webhook-port must be 1–65535") }
        _ = try app.resolved()
    }

    func run() async throws {
        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        // The checkout this binary was built in: the nearest folder above it with deploy/cluster.sh.
        var checkout = binaries
        while checkout.path != "/", !FileManager.default.fileExists(atPath: checkout.appendingPathComponent("deploy/cluster.sh").path) {
            checkout.deleteLastPathComponent()
        }
        let script = clusterScript ?? checkout.appendingPathComponent("deploy/cluster.sh").path
        guard FileManager.default.fileExists(atPath: script) else {
            throw ValidationError("no launcher script at \(script): give --cluster-script")
        }
        let runDirectory = app.runDirectory ?? ProcessInfo.processInfo.environment["SHOWROOM_RUN_DIR"]
            ?? URL(fileURLWithPath: script).deletingLastPathComponent().appendingPathComponent("../run/cluster").standardizedFileURL.path
        let cluster = LaunchedCluster(script: script, runDirectory: runDirectory, binaries: binaries.path)
        let seeds = try cluster.clientSeeds()
        guard !seeds.isEmpty else { throw ValidationError("no coordinator runs in \(runDirectory): start a cluster with deploy/cluster.sh up") }
        if try await cluster.memberIDs(role: "edge").count != edges {
            progress("scaling the cluster to \(edges) edges", json: json)
            try await cluster.scale(edges: edges)
        }
        var webhooks: WebhookReceiver?
        if let webhookPort { webhooks = try await WebhookReceiver.start(secret: webhookSecret, port: webhookPort) }
        let credentials = try app.resolved()
        let tokens = EveningTokens(rtc: { channel, uid, publisher in
            try credentials.token(channel: channel, uid: uid, role: publisher ? .publisher : .subscriber)
        }, login: { uid in try credentials.loginToken(uid: uid, expire: 86_400) })
        let schedule = EveningSchedule(EveningSettings(
            seed: seed, duration: .milliseconds(Int64(minutes * 60_000)), rooms: rooms, viewersPerRoom: viewers, swipers: swipers,
            operations: !noOperations))
        let json = self.json
        progress("evening seed \(seed): \(schedule.steps.count) steps, schedule digest \(schedule.digest)", json: json)
        let samples = SampleBook()
        let evening = Evening(schedule: schedule, cluster: cluster, seeds: seeds, tokens: tokens, webhooks: webhooks) { line in
            progress("  " + line, json: json)
        }
        let cpuBefore = CPUTime.process(getpid()) ?? 0
        let started = ContinuousClock.now
        try await evening.run { when, footprints in samples.add(when, footprints) }
        let elapsed = started.duration(to: .now)
        let benchCPU = (CPUTime.process(getpid()) ?? 0) - cpuBefore
        await webhooks?.stop()
        try report(evening, samples: samples, elapsed: elapsed, benchCPU: benchCPU, webhooks: webhooks != nil)
        if evening.book.violationTotal > 0 { throw ExitCode(1) }
    }

    private func report(_ evening: Evening, samples: SampleBook, elapsed: Duration, benchCPU: Double, webhooks: Bool) throws {
        let book = evening.book
        let schedule = evening.schedule
        let processes = samples.table()
        if json {
            var invariants: [String: Any] = [:]
            for invariant in InvariantBook.Invariant.allCases {
                invariants[invariant.rawValue] = ["checks": book.checks(invariant), "violations": book.violationCount(invariant)]
            }
            try printJSON([
                "benchmark": "evening", "seed": seed, "minutes": minutes, "rooms": rooms, "viewers": viewers, "swipers": swipers, "edges": edges,
                "schedule_digest": schedule.digest, "steps": schedule.steps.count, "step_counts": schedule.counts,
                "invariants": invariants, "violations": book.violationTotal,
                "violation_list": book.violations.map(\.description),
                "events_numbered_checked": webhooks,
                "elapsed_s": rounded(Double(elapsed.components.seconds)), "bench_cpu_s": rounded(benchCPU),
                "processes": processes.mapValues { row in
                    ["rss_kib": row.rss, "fds": row.fds, "rss_growth_after_warmup_percent": row.growth.map { rounded($0) } as Any,
                     "restarted": row.restarted, "kept": row.kept]
                },
            ])
        } else {
            print("evening seed \(seed), \(minutes) min, \(rooms) rooms × \(viewers) viewers, \(swipers) swipers, \(edges) edges")
            print("  schedule digest \(schedule.digest): \(schedule.steps.count) steps \(schedule.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
            for line in book.summary { print("  " + line) }
            if !webhooks { print("  (events_numbered not checked: give --webhook-port and start the cluster with --webhook)") }
            for violation in book.violations { print("  VIOLATION " + violation.description) }
            print(String(format: "  %.0f s, the bench's own synthetic clients used %.1f CPU s", Double(elapsed.components.seconds), benchCPU))
            print("  process         RSS MiB start / warm-up / end  (growth after warm-up)   fds start / warm-up / end")
            for (id, row) in processes.sorted(by: { $0.key < $1.key }) {
                let rss = row.rss.map { String(format: "%.1f", Double($0) / 1024) }.joined(separator: " / ")
                let growth = row.growth.map { String(format: "%+.1f %%", $0) } ?? (row.restarted ? "restarted" : "–")
                print("  \(id.padding(toLength: 15, withPad: " ", startingAt: 0)) \(rss.padding(toLength: 30, withPad: " ", startingAt: 0)) (\(growth))   \(row.fds.map(String.init).joined(separator: " / "))")
                let kept = row.kept.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.map { String(Int($0)) }.joined(separator: "/"))" }
                if !kept.isEmpty { print("      kept: " + kept.joined(separator: ", ")) }
            }
            print("  \(book.violationTotal == 0 ? "0 violations" : "\(book.violationTotal) VIOLATIONS (seed \(seed))")")
        }
    }
}

/// The footprints sampled during an evening, by process.
final class SampleBook: @unchecked Sendable {
    // @unchecked: written by the evening's sampler, read after it ended; behind `lock`.
    private let lock = NSLock()
    private var samples: [(when: String, footprints: [String: ProcessFootprint])] = []

    func add(_ when: String, _ footprints: [String: ProcessFootprint]) {
        lock.withLock { samples.append((when, footprints)) }
    }

    struct Row {
        var rss: [Int]
        var fds: [Int]
        /// Each size gauge's value at each sample.
        var kept: [String: [Double]]
        /// RSS growth from the warm-up to the end, for a process that ran throughout.
        var growth: Double?
        var restarted: Bool
    }

    /// Per process id: the samples in order (start, after warm-up, end); a process missing from
    /// one (started later, or restarted under a new pid) has no growth figure.
    func table() -> [String: Row] {
        let samples = lock.withLock { self.samples }
        let ids = Set(samples.flatMap { $0.footprints.keys })
        var rows: [String: Row] = [:]
        for id in ids {
            let seen = samples.compactMap { $0.footprints[id] }
            // Sampled every time, and the same process every time (a kill and restart is not).
            let complete = seen.count == samples.count && Set(seen.map(\.pid)).count == 1
            var growth: Double?
            if complete, samples.count >= 3, seen[1].rssKiB > 0 {
                growth = Double(seen[2].rssKiB - seen[1].rssKiB) * 100 / Double(seen[1].rssKiB)
            }
            let names = Set(seen.flatMap { $0.kept.keys })
            let kept = Dictionary(uniqueKeysWithValues: names.map { name in (name, seen.map { $0.kept[name] ?? 0 }) })
            rows[id] = Row(rss: seen.map(\.rssKiB), fds: seen.map(\.fds), kept: kept, growth: growth, restarted: !complete)
        }
        return rows
    }
}

/// A local cluster run by `deploy/cluster.sh` in a run directory: what an evening does to it goes
/// through the script (kill, restart, scale-edges, status), drains by SIGTERM to the pid the
/// script recorded.
struct LaunchedCluster: EveningCluster {
    let script: String
    let runDirectory: String
    let binaries: String

    /// The coordinators' client endpoints (their ready lines), for the SDK.
    func clientSeeds() throws -> [String] {
        try runningProcessIDs().keys.filter { $0.hasPrefix("coordinator-") }.sorted().compactMap { id in
            let out = (try? String(contentsOfFile: "\(runDirectory)/\(id).out", encoding: .utf8)) ?? ""
            return out.split(separator: "\n").first { $0.hasPrefix("ready ") }?
                .split(separator: " ").first { $0.hasPrefix("client=") }.map { String($0.dropFirst(7)) }
        }
    }

    private func script(_ arguments: [String]) async throws -> String {
        let (script, runDirectory, binaries) = (self.script, self.runDirectory, self.binaries)
        return try await onThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [script] + arguments + ["--run-dir", runDirectory, "--bin-dir", binaries]
            // What the script says on standard error goes to a file, quoted when it fails.
            let errors = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-sh-\(UUID().uuidString).err")
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: errors) }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: errors)
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                throw ShowroomError.unavailable("cluster.sh \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                    + said.split(separator: "\n").suffix(5).joined(separator: " | "))
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    func memberIDs(role: String) async throws -> [String] {
        let document = try JSONSerialization.jsonObject(with: Data(try await statusJSON().utf8)) as? [String: Any] ?? [:]
        return (document["members"] as? [[String: Any]] ?? []).filter { $0["role"] as? String == role && $0["state"] as? String == "alive" }
            .compactMap { $0["id"] as? String }.sorted()
    }

    func drainNode(_ id: String) async throws {
        guard let pid = try runningProcessIDs()[id] else { throw ShowroomError.invalidArgument("\(id) does not run in \(runDirectory)") }
        kill(pid, SIGTERM)
        try await eventually("\(id) (pid \(pid)) exits after its drain", timeout: .seconds(40)) { !processIsAlive(pid) }
    }

    func killNode(_ id: String) async throws {
        guard let pid = try runningProcessIDs()[id] else { throw ShowroomError.invalidArgument("\(id) does not run in \(runDirectory)") }
        _ = try await script(["kill", id])
        try await eventually("\(id) (pid \(pid)) is gone", timeout: .seconds(10)) { !processIsAlive(pid) }
    }

    func startNode(_ id: String) async throws { _ = try await script(["restart", id]) }

    func scale(edges count: Int) async throws { _ = try await script(["scale-edges", "\(count)"]) }

    func statusJSON() async throws -> String { try await script(["status", "--json"]) }

    func processIDs() async throws -> [String: Int32] { try runningProcessIDs() }

    /// The running nodes' pids, from the script's pid files.
    private func runningProcessIDs() throws -> [String: Int32] {
        let files = try FileManager.default.contentsOfDirectory(atPath: runDirectory).filter { $0.hasSuffix(".pid") }
        var pids: [String: Int32] = [:]
        for file in files {
            guard let text = try? String(contentsOfFile: "\(runDirectory)/\(file)", encoding: .utf8),
                  let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), processIsAlive(pid) else { continue }
            pids[String(file.dropLast(4))] = pid
        }
        return pids
    }
}
