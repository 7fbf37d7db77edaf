import AdminEndpoint
import ArgumentParser
import Foundation
import OperatorTools
import ShowroomKit
import ShowroomTesting

/// `showroom-bench api`: the server API as a business server uses it, over HTTP with a customer
/// key — reads (a room, a channel's users, with viewers joined through the SDK) and writes (room
/// creation, a ban rule) from
/// concurrent clients, beside `/healthz` on the same server in the same run, so the ratio shows
/// what the API's handling costs over Hummingbird itself.
struct APIBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "The server API over HTTP: requests per second and p50 / p99 for reads and writes, beside /healthz.")

    @Option(name: .customLong("seed"), help: "A coordinator's server API (http://host:port, `api=` on its ready line).")
    var seed: String

    @Option(help: "The customer key as id:secret; default: the run directory's api-key ($SHOWROOM_RUN_DIR or --run-dir).")
    var key: String?

    @OptionGroup var app: AppCredentials

    @Option(help: "Viewers in the room's channel (through the SDK, with the app's tokens) for the user list to list.")
    var viewers = 20

    @Option(help: "Requests per read operation (and for /healthz).")
    var reads = 20_000

    @Option(help: "Requests per write operation.")
    var writes = 2_000

    @Option(help: "Concurrent clients.")
    var concurrency = 8

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard seed.hasPrefix("http://") || seed.hasPrefix("https://") else {
            throw ValidationError("--seed is a coordinator's server API address, http://host:port (api= on its ready line)")
        }
        guard (1...1_000_000).contains(reads) else { throw ValidationError("--reads must be 1–1000000") }
        guard (1...100_000).contains(writes) else { throw ValidationError("--writes must be 1–100000") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1–256") }
        guard (0...200).contains(viewers) else { throw ValidationError("--viewers must be 0–200") }
    }


    /// One operation's figures.
    struct Figures {
        var name: String
        var perSecond: Double
        var latency: LatencyHistogram
        var failures: Int
        /// CPU the cluster's processes on this machine used per request, in µs, by executable
        /// (coordinators, edges): what a request costs the servers, whoever else shares the cores.
        var serverMicroseconds: [String: Double]
        /// The share of the machine's CPU time the hypervisor gave to other guests meanwhile.
        var stealPercent: Double?
    }

    /// The CPU seconds of the cluster's processes on this machine, by executable name
    /// (benchmarks left out).
    private static func serverCPU() -> [String: Double] {
        var byName: [String: Double] = [:]
        for process in CPUTime.processes(named: "showroom-").values where process.name != "showroom-bench" {
            byName[process.name, default: 0] += process.seconds
        }
        return byName
    }

    func run() async throws {
        let client = ServerAPIClient(base: seed, key: try customerKey(key, runDirectory: app.runDirectory), connections: concurrency, eventLoops: 1)
        defer { Task { await client.shutdown() } }
        let run = UInt32.random(in: 0 ... .max)
        // What the reads read: a room, created as a business server would.
        let created = try await client.send("POST", "/v1/rooms", json: ["room_id": "bench-api-\(run)", "name": "API bench", "owner_uid": 90_001])
        guard created.status == 201 else { throw NothingMeasured("creating the room to read failed: \(created.status) \(created.text)") }
        // Its audience, as apps join (the coordinators' client endpoints, from the API's cluster view).
        let channel = "bench-api-\(run)"
        let members = (try await client.send("GET", "/v1/cluster").object()["members"] as? [[String: Any]]) ?? []
        let seeds = members.filter { $0["role"] as? String == "coordinator" }.compactMap { $0["client_endpoint"] as? String }
        var engines: [ShowroomEngine] = []
        if viewers > 0 {
            progress("\(viewers) viewers join \(channel)", json: json)
            let loop = try EngineLoop(name: "bench-api-viewers")
            for i in 0..<viewers {
                let uid = UInt32(300_000 + i)
                let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop)
                try await engine.joinChannel(token: try app.token(channel: channel, uid: uid, role: .subscriber),
                                             channel: channel, uid: uid, options: .audience)
                engines.append(engine)
            }
            // The edges report their channels every second: wait until the list has everyone.
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline {
                let listed = try await client.send("GET", "/v1/channels/\(channel)/users")
                if (try? listed.object()["users"] as? [Any])?.count == viewers { break }
                try await Task.sleep(for: .milliseconds(100))  // a poll with a deadline, not a wait standing in for an event
            }
        }
        let cpuBefore = ProcFS.cpuSeconds(statAt: "/proc/self/stat") ?? 0
        var results: [Figures] = []
        func measure(_ name: String, _ count: Int, expect: Int, _ request: @escaping @Sendable (Int) async throws -> APIResponse) async throws {
            progress("\(name): \(count) requests from \(concurrency) clients", json: json)
            let (serversBefore, machineBefore) = (Self.serverCPU(), CPUTime.machine())
            let outcome = try await measureConcurrently(callers: concurrency, count: count) { i in
                let response = try await request(i)
                guard response.status == expect else { throw NothingMeasured("\(name): \(response.status) \(response.text)") }
            }
            let (serversAfter, machineAfter) = (Self.serverCPU(), CPUTime.machine())
            let latency = LatencyHistogram(milliseconds: outcome.times)
            try latency.requireSamples(name, "all \(outcome.failures) requests failed")
            var server: [String: Double] = [:]
            for (executable, after) in serversAfter {
                server[executable.replacingOccurrences(of: "showroom-", with: "")] = max(0, after - (serversBefore[executable] ?? after)) * 1e6 / Double(count)
            }
            results.append(Figures(name: name, perSecond: outcome.perSecond, latency: latency, failures: outcome.failures,
                                   serverMicroseconds: server, stealPercent: CPUTime.stealPercent(from: machineBefore, to: machineAfter)))
        }
        try await measure("healthz", reads, expect: 200) { _ in try await client.send("GET", "/healthz") }
        try await measure("room_get", reads, expect: 200) { _ in try await client.send("GET", "/v1/rooms/bench-api-\(run)") }
        try await measure("user_list", reads, expect: 200) { _ in try await client.send("GET", "/v1/channels/\(channel)/users") }
        try await measure("room_create", writes, expect: 201) { i in
            try await client.send("POST", "/v1/rooms", json: ["room_id": "bench-api-\(run)-\(i)", "name": "API bench \(i)", "owner_uid": 100_000 + i])
        }
        try await measure("ban_rule", writes, expect: 201) { i in
            try await client.send("POST", "/v1/bans", json: ["channel": channel, "uid": 200_000 + i, "privileges": ["join_channel"], "seconds": 60])
        }
        let cpu = (ProcFS.cpuSeconds(statAt: "/proc/self/stat") ?? 0) - cpuBefore
        for engine in engines { await engine.shutdown() }
        // Leave nothing behind: the rooms are closed and the rules lifted again (not measured).
        _ = try? await measureConcurrently(callers: concurrency, count: writes) { i in
            _ = try await client.send("DELETE", "/v1/rooms/bench-api-\(run)-\(i)")
        }
        let rules = (try? await client.send("GET", "/v1/bans").object()["rules"] as? [[String: Any]]) ?? []
        let ids = rules.filter { $0["channel"] as? String == channel }.compactMap { $0["id"] as? Int }
        _ = try? await measureConcurrently(callers: concurrency, count: ids.count) { i in
            _ = try await client.send("DELETE", "/v1/bans/\(ids[i])")
        }
        _ = try? await client.send("DELETE", "/v1/rooms/bench-api-\(run)")

        let health = results[0].perSecond
        if json {
            var object: [String: Any] = ["benchmark": "api", "concurrency": concurrency, "reads": reads, "writes": writes, "viewers": viewers,
                                         "bench_cpu_s": rounded(cpu, 2)]
            for figures in results {
                object["\(figures.name)_per_s"] = rounded(figures.perSecond)
                object["\(figures.name)_ms_p50"] = rounded(figures.latency.percentileMs(0.5), 3)
                object["\(figures.name)_ms_p99"] = rounded(figures.latency.percentileMs(0.99), 3)
                object["\(figures.name)_failures"] = figures.failures
                object["\(figures.name)_vs_healthz"] = rounded(figures.perSecond / max(health, 1e-9), 3)
                for (executable, microseconds) in figures.serverMicroseconds {
                    object["\(figures.name)_\(executable)_cpu_us"] = rounded(microseconds, 1)
                }
                if let steal = figures.stealPercent { object["\(figures.name)_steal_percent"] = rounded(steal, 1) }
            }
            try printJSON(object)
        } else {
            print("server API at \(seed), \(concurrency) concurrent clients")
            for figures in results {
                print("  " + figures.name.padding(toLength: 14, withPad: " ", startingAt: 0) + String(format: " %8.0f /s   p50 %6.2f ms   p99 %6.2f ms   failures %d   %5.1f %% of healthz's rate",
                             figures.perSecond, figures.latency.percentileMs(0.5), figures.latency.percentileMs(0.99),
                             figures.failures, 100 * figures.perSecond / max(health, 1e-9)))
            }
            print("  server CPU per request (all such processes on this machine), and the hypervisor's steal:")
            for figures in results {
                let costs = figures.serverMicroseconds.sorted { $0.key < $1.key }.map { String(format: "%@ %.0f µs", $0.key, $0.value) }
                print("  " + figures.name.padding(toLength: 14, withPad: " ", startingAt: 0) + " " + costs.joined(separator: ", ")
                      + (figures.stealPercent.map { String(format: ", steal %.1f %%", $0) } ?? ""))
            }
            print(String(format: "  the benchmark's own clients used %.2f CPU s", cpu))
        }
    }
}
