import Foundation
import NodeRuntime

/// A server process started for a test on an ephemeral loopback port, with its ready line read.
public final class NodeProcess: @unchecked Sendable {
    /// The process.
    public let process: ManagedProcess
    /// The node id it announced.
    public let nodeID: String
    /// The cluster endpoint it announced (`tcp://127.0.0.1:PORT`).
    public let endpoint: String
    /// The client endpoint it announced (edges), or "".
    public let clientEndpoint: String

    /// Starts a node of `role` and waits for its `ready` line. Edges and coordinators get the demo app's
    /// credentials (``DemoApp``); coordinators a database in a new temporary directory.
    public init(_ role: NodeRole, nodeID: String, extraArguments: [String] = []) throws {
        // Edges check join tokens, coordinators placement tokens.
        var credentials = role == .edge || role == .coordinator
            ? ["--app-id", DemoApp.appID, "--app-certificate", DemoApp.appCertificate] : []
        if role == .coordinator {
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("showroom-data-\(UUID().uuidString.prefix(8))")
            credentials += ["--data-dir", data.path]
        }
        process = try ManagedProcess(role.executableName,
                                     ["--node-id", nodeID, "--bind", "tcp://127.0.0.1:*"] + credentials + extraArguments)
        let ready = try process.waitForLine { $0.hasPrefix("ready ") }
        let fields = Self.fields(of: ready)
        guard let endpoint = fields["endpoint"], let id = fields["node"] else {
            throw LocalClusterError("unreadable ready line: \(ready)")
        }
        self.nodeID = id
        self.endpoint = endpoint
        clientEndpoint = fields["client"] ?? ""
    }

    /// The `key=value` fields of a line.
    public static func fields(of line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for word in line.split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }
}
