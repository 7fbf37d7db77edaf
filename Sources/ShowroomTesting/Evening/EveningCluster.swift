import Foundation
import OperatorTools

/// What an evening may do to the cluster it runs on. The tests' ``TestCluster`` serves it; the
/// benchmark serves it with the launcher script of a running local cluster.
public protocol EveningCluster: Sendable {
    /// The alive members' ids of a role (`edge`, `coordinator`, `callsignal`), sorted.
    func memberIDs(role: String) async throws -> [String]
    /// SIGTERMs node `id` (an edge drains: its clients move away) and waits for it to exit.
    func drainNode(_ id: String) async throws
    /// SIGKILLs node `id` and waits until it is gone.
    func killNode(_ id: String) async throws
    /// Starts node `id` again (after a kill) and waits until the cluster converged.
    func startNode(_ id: String) async throws
    /// Adds edges, or drains the newest, until `count` run.
    func scale(edges count: Int) async throws
    /// The status view as `showroomctl status --json` prints it.
    func statusJSON() async throws -> String
    /// The pid of each running node, by id.
    func processIDs() async throws -> [String: Int32]
}

extension TestCluster: EveningCluster {
    public func memberIDs(role: String) async throws -> [String] {
        runningIDs.filter { $0.hasPrefix(role + "-") }.sorted()
    }

    public func drainNode(_ id: String) async throws {
        try await onThread { [self] in
            try terminate(id)
            try stop(id)  // waits for the exit (SIGKILL only after 10 s)
        }
    }

    public func killNode(_ id: String) async throws {
        try await onThread { [self] in try kill(id) }
    }

    public func startNode(_ id: String) async throws {
        try await onThread { [self] in try restart(id) }
    }

    public func scale(edges count: Int) async throws {
        try await onThread { [self] in try scaleEdges(to: count) }
    }

    public func statusJSON() async throws -> String {
        try await onThread { [self] in try status(json: true) }
    }

    public func processIDs() async throws -> [String: Int32] {
        Dictionary(uniqueKeysWithValues: runningIDs.compactMap { id in (try? pid(of: id)).map { (id, $0) } })
    }
}

/// A process's memory and descriptors, read from `/proc` (Linux; zeros elsewhere).
public struct ProcessFootprint: Sendable, Hashable {
    /// The process measured: a node restarted under the same id is another process.
    public var pid: Int32
    /// Resident set size, in KiB.
    public var rssKiB: Int
    /// Open file descriptors.
    public var fds: Int
    /// The sizes of what the process keeps (its admin port's size gauges, by name).
    public var kept: [String: Double] = [:]

    /// The size gauges a soak reads, by role: what grows with every channel, room, call or user
    /// if anything is never reclaimed.
    public static let keptGauges: [String: [String]] = [
        "coordinator": ["coordinator_rooms", "coordinator_channel_sequences", "coordinator_placements", "coordinator_bans",
                        "coordinator_stages_sent"],
        "edge": ["edge_sessions", "edge_channels", "edge_connections", "edge_bans", "edge_stages"],
        "callsignal": ["callsignal_sessions", "callsignal_calls", "callsignal_user_records", "callsignal_mailboxes"],
    ]

    public init(pid: Int32) {
        self.pid = pid
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        rssKiB = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}
