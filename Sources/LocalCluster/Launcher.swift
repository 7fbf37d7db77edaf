import Foundation
import NodeRuntime
import ZeroMQ

/// `deploy/cluster.sh` driven from Swift: a cluster in its own run directory on free ports, using
/// the executables already built next to the running binary. Everything it started is stopped
/// (gracefully, then by pid) when it is shut down or released.
public final class Launcher {
    /// The run directory (logs, ready lines, pid files).
    public let runDirectory: URL
    private let script: URL
    private let binDirectory: URL
    private var isDown = false

    /// Prepares a launcher for a new cluster. `packageRoot` is where `deploy/cluster.sh` lives.
    public init(packageRoot: URL) throws {
        script = packageRoot.appendingPathComponent("deploy/cluster.sh")
        binDirectory = try ManagedProcess.productURL("showroomctl").deletingLastPathComponent()
        runDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("showroom-cluster-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runDirectory, withIntermediateDirectories: true)
    }

    deinit {
        if !isDown { try? down() }
        killLeftovers()
    }

    /// Runs `cluster.sh COMMAND ARGS --run-dir … --bin-dir …` and returns its output; throws
    /// with the output when it fails or takes longer than `timeout`.
    @discardableResult
    public func run(_ command: String, _ arguments: [String] = [], timeout: Duration = .seconds(120)) throws -> String {
        let process = ManagedProcessRun(
            executable: URL(fileURLWithPath: "/bin/bash"),
            arguments: [script.path, command] + arguments + ["--run-dir", runDirectory.path, "--bin-dir", binDirectory.path])
        let (status, output) = try process.wait(timeout: timeout)
        guard status == 0 else {
            throw LocalClusterError("cluster.sh \(command) \(arguments.joined(separator: " ")) failed (status \(status)):\n\(output)")
        }
        return output
    }

    /// Stops the cluster (graceful, then SIGKILL by pid).
    public func down() throws {
        isDown = true
        try run("down", timeout: .seconds(60))
    }

    /// The cluster endpoint a member announced in its ready line.
    public func endpoint(of id: String) throws -> String {
        try readyField("endpoint", of: id)
    }

    /// The keys an operator presents on this cluster's cluster endpoints (`cluster.sh up` makes a
    /// keyring in the run directory), or nil for a cluster started with `--plain-cluster`.
    public var credentials: ClusterCredentials? {
        let keys = runDirectory.appendingPathComponent("keys")
        guard FileManager.default.fileExists(atPath: keys.appendingPathComponent("operator.key").path) else { return nil }
        return try? ClusterCredentials.load(keyringDirectory: keys.path, id: "operator")
    }

    /// The client endpoint a member announced in its ready line (edges: sessions; coordinators
    /// and call-signal nodes: their client face, the SDK's seeds).
    public func clientEndpoint(of id: String) throws -> String {
        try readyField("client", of: id)
    }

    /// The admin HTTP address a member announced in its ready line (`http://host:port`).
    public func adminEndpoint(of id: String) throws -> String {
        try readyField("admin", of: id)
    }

    private func readyField(_ key: String, of id: String) throws -> String {
        let text = try String(contentsOf: runDirectory.appendingPathComponent("\(id).out"), encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }),
              let value = NodeProcess.fields(of: String(line))[key]
        else { throw LocalClusterError("\(id) has no ready line with \(key)= in \(runDirectory.path)") }
        return value
    }

    /// The pid of a member, from its pid file.
    public func pid(of id: String) throws -> Int32 {
        let text = try String(contentsOf: runDirectory.appendingPathComponent("\(id).pid"), encoding: .utf8)
        guard let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw LocalClusterError("unreadable pid file for \(id)")
        }
        return pid
    }

    /// The event lines (`event member ...`) a member printed so far.
    public func events(of id: String) -> [[String: String]] {
        let text = (try? String(contentsOf: runDirectory.appendingPathComponent("\(id).out"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("event ") }.map { NodeProcess.fields(of: String($0)) }
    }

    /// SIGKILLs whatever pid files remain, in case the script could not.
    private func killLeftovers() {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: runDirectory.path)) ?? []
        for file in files where file.hasSuffix(".pid") {
            if let text = try? String(contentsOfFile: runDirectory.appendingPathComponent(file).path, encoding: .utf8),
               let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(pid, SIGKILL)
            }
        }
    }
}

/// A short-lived helper process whose combined output is collected, with a bounded wait.
struct ManagedProcessRun {
    let executable: URL
    let arguments: [String]

    func wait(timeout: Duration) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        let output = OutputCollector()
        try process.run()
        // Read on a thread of its own with blocking reads, not a `readabilityHandler`: tearing
        // down libdispatch's read source can crash its event loop on Linux
        // (swift-corelibs-libdispatch#949).
        let reading = DispatchSemaphore(value: 0)
        let handle = pipe.fileHandleForReading
        Thread {
            while case let data = handle.availableData, !data.isEmpty { output.append(data) }
            reading.signal()
        }.start()
        let seconds = timeout.seconds
        if exited.wait(timeout: .now() + seconds) == .timedOut {
            kill(-process.processIdentifier, SIGKILL)
            process.terminate()
            _ = reading.wait(timeout: .now() + 2)
            throw LocalClusterError("\(arguments.joined(separator: " ")) did not finish within \(timeout):\n\(output.text)")
        }
        // The output ends when the script and everything that inherited its pipe have closed it.
        _ = reading.wait(timeout: .now() + 5)
        return (process.terminationStatus, output.text)
    }
}

private final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) { lock.lock(); data.append(more); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
}

/// Whether a process runs: it exists and is not a zombie (a killed process whose parent is gone
/// stays a zombie until init reaps it, and still answers `kill(pid, 0)`).
public func processIsAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    #if os(Linux)
    // /proc/PID/stat: "pid (name) S ..." — the state letter follows the closing parenthesis.
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return false }
    return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    #else
    return true
    #endif
}
