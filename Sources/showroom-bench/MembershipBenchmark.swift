import ArgumentParser
import Foundation
import ShowroomTesting
import NodeRuntime
import Routing
import ShowroomWire

/// `showroom-bench membership`: starts N real processes on loopback and measures the gossip:
/// how fast a join reaches everyone, how fast a SIGKILL is detected by everyone, false suspicions
/// and deaths while idle, and gossip bytes per member.
struct MembershipBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "membership",
        abstract: "Join spread, failure detection and gossip cost of N real processes on loopback.")

    @Option(help: "Processes in the cluster.")
    var nodes = 20

    @Option(help: "Join-then-SIGKILL trials.")
    var trials = 5

    @Option(help: "Seconds of idle watching for false suspicions and deaths.")
    var idleSeconds = 60.0

    @Flag(help: "Authenticated, encrypted cluster links: a keyring made for the run (CURVE with a ZAP handler), as cluster.sh runs; without it the links are plain.")
    var curve = false

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard (2...100).contains(nodes) else { throw ValidationError("--nodes must be 2–100") }
        guard (1...50).contains(trials) else { throw ValidationError("--trials must be 1–50") }
        guard idleSeconds >= 0 && idleSeconds <= 600 else { throw ValidationError("--idle-seconds must be 0–600") }
    }

    func run() throws {
        // With --curve every process gets the keys of a keyring made for this run.
        let keyring = FileManager.default.temporaryDirectory.appendingPathComponent("bench-keyring-\(UUID().uuidString.prefix(8))").path
        var security: [String] = []
        var credentials: ClusterCredentials?
        if curve {
            try ClusterKeyring.generate(directory: keyring, ids: (0..<nodes).map { "bench-\($0)" } + (0..<trials).map { "bench-join-\($0)" } + ["operator"])
            security = ["--keyring", keyring]
            credentials = try ClusterCredentials.load(keyringDirectory: keyring, id: "operator")
        }
        defer { try? FileManager.default.removeItem(atPath: keyring) }
        let probe = try ClusterProbe(credentials: credentials)
        var processes: [NodeProcess] = []
        defer {
            for node in processes { node.process.kill(signal: SIGTERM) }
            for node in processes where node.process.waitForExit(timeout: .seconds(5)) == nil { node.process.kill(signal: SIGKILL) }
        }
        log("starting \(nodes) processes")
        for i in 0..<nodes {
            let seeds = processes.prefix(3).flatMap { ["--seed", $0.endpoint] }
            processes.append(try NodeProcess(Self.role(i), nodeID: "bench-\(i)", extraArguments: seeds + security))
        }
        let endpoints = processes.map(\.endpoint)
        let converged = try probe.waitUntil(endpoints, timeout: .seconds(60), "all \(nodes) see all alive") { $0.aliveIDs.count == nodes }
        log("converged \(converged) after the last start")

        // Idle: no churn, so every suspicion or death is false.
        var falseSuspicions = 0, falseDeaths = 0
        var bytesPerSecond: [Double] = []
        if idleSeconds > 0 {
            log("watching the idle cluster for \(idleSeconds) s")
            let before = processes.map { $0.process.stdoutLines.count }
            let trafficBefore = endpoints.map { probe.status(of: $0)?.reporterTraffic }
            Thread.sleep(forTimeInterval: idleSeconds)  // the measurement window itself
            let trafficAfter = endpoints.map { probe.status(of: $0)?.reporterTraffic }
            for (node, start) in zip(processes, before) {
                for line in node.process.stdoutLines.dropFirst(start) where line.hasPrefix("event member ") {
                    let fields = NodeProcess.fields(of: line)
                    if fields["state"] == "suspect" { falseSuspicions += 1 }
                    if fields["state"] == "dead" { falseDeaths += 1 }
                }
            }
            for (a, b) in zip(trafficBefore, trafficAfter) {
                guard let a, let b, b.elapsedMs > a.elapsedMs else { continue }
                bytesPerSecond.append(Double(b.bytesSent - a.bytesSent) * 1000 / Double(b.elapsedMs - a.elapsedMs))
            }
        }

        if bytesPerSecond.isEmpty {
            // No idle window: the cost over the whole run so far.
            for endpoint in endpoints {
                guard let traffic = probe.status(of: endpoint)?.reporterTraffic, traffic.elapsedMs > 0 else { continue }
                bytesPerSecond.append(Double(traffic.bytesSent) * 1000 / Double(traffic.elapsedMs))
            }
        }

        var joinAll: [Double] = [], detectAll: [Double] = [], suspectFirst: [Double] = []
        for trial in 0..<trials {
            let id = "bench-join-\(trial)"
            let seeds = processes.shuffled().prefix(3).flatMap { ["--seed", $0.endpoint] }
            let joiner = try NodeProcess(.edge, nodeID: id, extraArguments: seeds + security)
            let readyAt = try milliseconds(joiner.process.stdoutLines.first { $0.hasPrefix("ready ") })
            let joined = try processes.map { try eventTime($0, member: id, state: "alive") }
            joinAll.append(joined.max()! - readyAt)
            try probe.waitUntil([joiner.endpoint], "the joiner sees everyone") { $0.aliveIDs.count == nodes + 1 }

            let killedAt = Date().timeIntervalSince1970 * 1000
            joiner.process.kill(signal: SIGKILL)
            let dead = try processes.map { try eventTime($0, member: id, state: "dead") }
            detectAll.append(dead.max()! - killedAt)
            let suspected = processes.compactMap { try? eventTime($0, member: id, state: "suspect", timeout: .zero) }
            if let first = suspected.min() { suspectFirst.append(first - killedAt) }
            log(String(format: "trial %d: join reached all in %.0f ms; SIGKILL seen dead by all in %.0f ms", trial + 1, joinAll.last!, detectAll.last!))
        }

        let join = LatencyHistogram(milliseconds: joinAll)
        let detect = LatencyHistogram(milliseconds: detectAll)
        let suspect = LatencyHistogram(milliseconds: suspectFirst)
        let result: [String: Any] = [
            "benchmark": "membership", "cluster_links": curve ? "curve" : "plain", "nodes": nodes, "trials": trials, "idle_seconds": idleSeconds,
            "join_all_ms_p50": join.percentileMs(0.5).rounded(), "join_all_ms_max": join.maxMs.rounded(),
            "detect_all_ms_p50": detect.percentileMs(0.5).rounded(), "detect_all_ms_max": detect.maxMs.rounded(),
            // Not seen at all (no trial's victim was suspected before declared dead): null, not 0.
            "suspect_first_ms_p50": figure(suspect.percentileMsIfAny(0.5), 0),
            "false_suspicions": falseSuspicions, "false_deaths": falseDeaths,
            "bytes_per_s_per_member": figure(bytesPerSecond.isEmpty ? nil : bytesPerSecond.reduce(0, +) / Double(bytesPerSecond.count), 0),
        ]
        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("membership: \(nodes) processes, \(trials) trials, \(idleSeconds) s idle, cluster links \(curve ? "CURVE" : "plain")")
            print(String(format: "  join known by all        p50 %6.0f ms   max %6.0f ms", join.percentileMs(0.5), join.maxMs))
            print(String(format: "  SIGKILL dead at all      p50 %6.0f ms   max %6.0f ms", detect.percentileMs(0.5), detect.maxMs))
            print(suspect.count > 0 ? String(format: "  first suspicion          p50 %6.0f ms", suspect.percentileMs(0.5))
                                    : "  first suspicion          not seen in any trial")
            print("  idle: \(falseSuspicions) false suspicions, \(falseDeaths) false deaths")
            print((result["bytes_per_s_per_member"] as? Double).map { String(format: "  gossip                   %6.0f bytes/s per member", $0) }
                  ?? "  gossip                   not measured (no member reported its traffic)")
        }
    }

    /// Roles spread like a real cluster: mostly edges, a coordinator and a call-signal per ten.
    static func role(_ i: Int) -> NodeRole {
        switch i % 10 {
        case 0: .coordinator
        case 1: .callsignal
        default: .edge
        }
    }

    /// When `node` reported `member` entering `state` (wall-clock ms), waiting for it up to `timeout`.
    private func eventTime(_ node: NodeProcess, member: String, state: String, timeout: Duration = .seconds(30)) throws -> Double {
        let line = try node.process.waitForLine(timeout: timeout) { line in
            line.hasPrefix("event member ") && line.contains(" member=\(member) ") && line.contains(" state=\(state) ")
        }
        return try milliseconds(line)
    }

    private func log(_ text: String) {
        if !json { print(text) } else { FileHandle.standardError.write(Data((text + "\n").utf8)) }
    }
}

/// The `at_ms=` wall-clock time of a ready or event line.
private func milliseconds(_ line: String?) throws -> Double {
    guard let line, let text = NodeProcess.fields(of: line)["at_ms"], let value = Double(text) else {
        throw ShowroomTestingError("no at_ms= in \(line ?? "(no line)")")
    }
    return value
}
