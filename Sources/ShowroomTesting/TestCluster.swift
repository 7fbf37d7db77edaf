import Foundation
import NodeRuntime
import Routing
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// A cluster of real Showroom processes on loopback, started by the kit itself as
/// `deploy/cluster.sh up` starts one: the executables built next to the running binary, each node
/// on free ports of 127.0.0.1, the test app's credentials (and webhooks) in the run directory's
/// `app.json`, a CURVE keyring in its `keys/` with a key pair per node and one for the operator,
/// coordinators' databases in its `data/`. Every process is stopped by its pid when the cluster
/// is shut down or released, and each node's output is printed if a test fails (``LogCapture``).
/// Used by one test (or test class) at a time.
public final class TestCluster: @unchecked Sendable {
    // @unchecked: the node table is behind `lock`; a cluster is driven by one test at a time.

    /// The run directory: `app.json`, `keys/`, `data/`.
    public let runDirectory: URL
    private let keyring: URL?
    private let clientEncryption: Bool
    private let lock = NSLock()
    /// Where edges write recordings, by edge id, besides ``recordingDirectory``.
    private let recordingDirectories: [String: String]
    /// Where the edges write recordings unless told otherwise: `recordings/` in the run directory.
    public var recordingDirectory: URL { runDirectory.appendingPathComponent("recordings") }
    /// The latest process of every node id started, running or not.
    private var nodes: [String: NodeProcess] = [:]

    /// Starts `coordinators` coordinators, then `callsignals` call-signal nodes, then `edges` edges
    /// (ids `coordinator-1`, `callsignal-1`, `edge-1` ...), each joining through up to three
    /// running members, and returns once every member sees every member alive.
    ///
    /// - Parameters:
    ///   - plainCluster: Plain cluster links, no keyring (`cluster.sh up --plain-cluster`).
    ///   - clientEncryption: Edges encrypt client links with CURVE (`--client-encryption curve`).
    ///   - webhookURLs: Where coordinators post channel events, signed with `webhookSecret`.
    ///   - relayThreshold: Viewers of a channel its origin edge takes before coordinators place more
    ///     on relay edges (0: never).
    ///   - coordinatorSettings: More keys of the coordinators' configuration file (the server
    ///     API's `apiKeys`, say).
    ///   - recordingDirectories: Where edges write recordings, by edge id; the others write to
    ///     ``recordingDirectory``.
    public init(coordinators: Int = 1, callsignals: Int = 0, edges: Int = 1, plainCluster: Bool = false,
                clientEncryption: Bool = false, webhookURLs: [String] = [], webhookSecret: String = "",
                relayThreshold: Int = 0, coordinatorSettings: [String: Any] = [:],
                recordingDirectories: [String: String] = [:]) throws {
        self.recordingDirectories = recordingDirectories
        precondition(coordinators >= 1, "a cluster needs a coordinator")
        runDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("showroom-cluster-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runDirectory.appendingPathComponent("data"), withIntermediateDirectories: true)
        // Every member's file has the app; the coordinators' has their own settings too.
        let app: [String: Any] = ["appID": TestApp.appID, "appCertificate": TestApp.certificate]
        let coordinator = app.merging([
            "webhookURLs": webhookURLs, "webhookSecret": webhookSecret, "relayThreshold": relayThreshold,
        ]) { first, _ in first }.merging(coordinatorSettings) { first, _ in first }
        for (name, settings) in [("app.json", app), ("coordinator.json", coordinator)] {
            let file = runDirectory.appendingPathComponent(name)
            try JSONSerialization.data(withJSONObject: settings).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        }
        if plainCluster {
            keyring = nil
        } else {
            let keys = runDirectory.appendingPathComponent("keys")
            try ClusterKeyring.generate(directory: keys.path, ids: ["operator"])
            keyring = keys
        }
        self.clientEncryption = clientEncryption
        do {
            for i in 0..<coordinators { try start("coordinator-\(i + 1)") }
            for i in 0..<callsignals { try start("callsignal-\(i + 1)") }
            for i in 0..<edges { try start("edge-\(i + 1)") }
            try awaitConverged()
        } catch {
            killAll()
            throw error
        }
    }

    deinit { killAll() }

    /// The keys an operator presents on this cluster's cluster endpoints, or nil for a plain
    /// cluster.
    public var credentials: ClusterCredentials? {
        keyring.flatMap { try? ClusterCredentials.load(keyringDirectory: $0.path, id: "operator") }
    }

    /// The node `id`'s latest process.
    public func node(_ id: String) throws -> NodeProcess {
        guard let node = lock.withLock({ nodes[id] }) else {
            throw ShowroomTestingError("no node \(id) in this cluster (it has \(lock.withLock { nodes.keys.sorted() }))")
        }
        return node
    }

    /// The ids of the running nodes, coordinators first, then call-signal nodes, then edges.
    public var runningIDs: [String] {
        lock.withLock { nodes.values.filter(\.process.isRunning).map(\.nodeID) }.sorted(by: Self.startOrder)
    }

    /// The cluster endpoint node `id` announced.
    public func endpoint(of id: String) throws -> String { try node(id).endpoint }
    /// The client endpoint node `id` announced (edges: sessions; coordinators: the SDK's seeds).
    public func clientEndpoint(of id: String) throws -> String { try node(id).clientEndpoint }
    /// The admin HTTP address node `id` announced (`http://host:port`).
    public func adminEndpoint(of id: String) throws -> String { try node(id).adminEndpoint }
    /// The server API address coordinator `id` announced (`http://host:port`).
    public func apiEndpoint(of id: String) throws -> String { try node(id).apiEndpoint }
    /// The pid of node `id`'s latest process.
    public func pid(of id: String) throws -> Int32 { try node(id).process.pid }
    /// The membership event lines node `id` printed so far.
    public func events(of id: String) throws -> [[String: String]] { try node(id).events }

    /// SIGKILLs node `id` (a failure drill) and waits until it is gone.
    public func kill(_ id: String) throws {
        let node = try node(id)
        node.process.kill(signal: SIGKILL)
        guard node.process.waitForExit(timeout: .seconds(10)) != nil else {
            throw ShowroomTestingError("\(id) (pid \(node.process.pid)) still runs 10 s after SIGKILL")
        }
    }

    /// Sends node `id` SIGTERM and returns at once (an edge then drains: its clients move while
    /// the caller watches); ``stop(_:)`` later waits for it to exit.
    public func terminate(_ id: String) throws {
        try node(id).process.kill(signal: SIGTERM)
    }

    /// Stops node `id` gracefully (it leaves the cluster), SIGKILLing it after 10 s.
    public func stop(_ id: String) throws {
        stop([try node(id)])
    }

    /// Stops node `id` gracefully and starts it again under the same id (on a new port), then
    /// waits until the cluster has converged.
    public func restart(_ id: String) throws {
        try stop(id)
        try start(id)
        try awaitConverged()
    }

    /// Adds edges, or gracefully stops the newest ones, until `count` run; new edges get numbers
    /// never used in this cluster, so each is a new member. Returns once the cluster converged.
    public func scaleEdges(to count: Int) throws {
        let running = runningIDs.filter { $0.hasPrefix("edge-") }
        if count > running.count {
            var next = lock.withLock { nodes.keys.filter { $0.hasPrefix("edge-") }.compactMap { Int($0.dropFirst(5)) }.max() ?? 0 }
            for _ in running.count..<count {
                next += 1
                try start("edge-\(next)")
            }
        } else if count < running.count {
            stop(try running[count...].map(node))
        }
        try awaitConverged()
    }

    /// Stops every node gracefully (edges first, coordinators last), SIGKILLing any still running
    /// after 10 s.
    public func down() {
        let order = runningIDs.reversed().compactMap { try? node($0) }
        stop(Array(order))
    }

    /// Runs `showroomctl ARGS` against this cluster (the operator's keys in `SHOWROOM_KEYRING`,
    /// the run directory in `SHOWROOM_RUN_DIR`) and returns its standard output; throws with its
    /// output when it fails.
    @discardableResult
    public func showroomctl(_ arguments: [String], timeout: Duration = .seconds(60)) throws -> String {
        var environment = ["SHOWROOM_RUN_DIR": runDirectory.path, "SHOWROOM_KEYRING": keyring?.path ?? ""]
        environment["SHOWROOM_KEY_ID"] = "operator"
        let process = try ManagedProcess("showroomctl", arguments, environment: environment)
        guard let status = process.waitForExit(timeout: timeout) else {
            process.kill(signal: SIGKILL)
            throw ShowroomTestingError("showroomctl \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        guard status == 0 else {
            throw ShowroomTestingError("showroomctl \(arguments.joined(separator: " ")) failed (status \(status)):\n\(process.output.text)")
        }
        return process.stdoutLines.joined(separator: "\n")
    }

    /// The status tool's view of the cluster (`showroomctl status`, every running member as a seed).
    public func status(json: Bool = false) throws -> String {
        try showroomctl(["status"] + (json ? ["--json"] : []) + runningIDs.flatMap { ["--seed", try endpoint(of: $0)] })
    }

    /// Starts node `id` and waits for its ready line; it joins through up to three running members.
    private func start(_ id: String) throws {
        guard let role = NodeRole(rawValue: String(id.prefix { $0 != "-" })) else {
            throw ShowroomTestingError("unknown node id '\(id)' (ids look like edge-3, coordinator-1, callsignal-1)")
        }
        var arguments = ["--config", runDirectory.appendingPathComponent(role == .coordinator ? "coordinator.json" : "app.json").path]
        if let keyring {
            // A new member gets its key pair before it starts; the others admit it from the directory.
            try ClusterKeyring.generate(directory: keyring.path, ids: [id])
            arguments += ["--keyring", keyring.path]
        }
        if role == .edge, clientEncryption { arguments += ["--client-encryption", "curve"] }
        if role == .edge { arguments += ["--recording-dir", recordingDirectories[id] ?? recordingDirectory.path] }
        arguments += try runningIDs.prefix(3).flatMap { ["--seed", try endpoint(of: $0)] }
        let node = try NodeProcess(role, nodeID: id, extraArguments: arguments,
                                   dataDirectory: runDirectory.appendingPathComponent("data"))
        lock.withLock { nodes[id] = node }
    }

    /// Returns once every running member sees every running member alive (30 s at most).
    public func awaitConverged(timeout: Duration = .seconds(30)) throws {
        let ids = runningIDs
        let endpoints = try ids.map { try endpoint(of: $0) }
        try ClusterProbe(credentials: credentials).waitUntil(endpoints, timeout: timeout, "each sees \(ids.count) alive") {
            $0.aliveIDs == Set(ids)
        }
    }

    /// SIGTERM, then SIGKILL after 10 s, by pid.
    private func stop(_ nodes: [NodeProcess]) {
        for node in nodes { node.process.kill(signal: SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(10)
        for node in nodes where node.process.waitForExit(timeout: max(.zero, ContinuousClock.now.duration(to: deadline))) == nil {
            node.process.kill(signal: SIGKILL)
            _ = node.process.waitForExit(timeout: .seconds(5))
        }
    }

    private func killAll() {
        for node in lock.withLock({ Array(nodes.values) }) {
            node.process.kill(signal: SIGKILL)
        }
    }

    /// Coordinators, call-signal nodes, edges; by number within a role.
    private static func startOrder(_ a: String, _ b: String) -> Bool {
        func key(_ id: String) -> (Int, Int) {
            let rank = id.hasPrefix("coordinator-") ? 0 : id.hasPrefix("callsignal-") ? 1 : 2
            return (rank, Int(id.split(separator: "-").last ?? "") ?? 0)
        }
        return key(a) < key(b)
    }
}

/// Whether a process runs: it exists and is not a zombie (a killed process whose parent is gone
/// stays a zombie until init reaps it, and still answers `kill(pid, 0)`).
public func processIsAlive(_ pid: Int32) -> Bool {
    guard Glibc.kill(pid, 0) == 0 else { return false }
    #if os(Linux)
    // /proc/PID/stat: "pid (name) S ..." — the state letter follows the closing parenthesis.
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return false }
    return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    #else
    return true
    #endif
}
