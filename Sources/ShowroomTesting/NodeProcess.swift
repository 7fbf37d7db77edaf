import Foundation
import NodeRuntime
import Routing

/// A server process started for a test on an ephemeral loopback port, with its ready line read.
/// Its output is captured under its node id and printed if the test fails (``LogCapture``).
public final class NodeProcess: @unchecked Sendable {
    /// The process.
    public let process: ManagedProcess
    /// The node's role.
    public let role: NodeRole
    /// The node id it announced.
    public let nodeID: String
    /// The cluster endpoint it announced (`tcp://127.0.0.1:PORT`).
    public let endpoint: String
    /// The client endpoint it announced (edges: sessions; coordinators and call-signal nodes:
    /// their client face), or "".
    public let clientEndpoint: String
    /// The admin HTTP address it announced (`http://host:port`), or "".
    public let adminEndpoint: String
    /// The server API address it announced (coordinators: `http://host:port`), or "".
    public let apiEndpoint: String

    /// Starts a node of `role` and waits for its `ready` line. Edges and coordinators get the test
    /// app's credentials (``TestApp``); coordinators keep their database in `dataDirectory`
    /// (default: a new temporary directory).
    public init(_ role: NodeRole, nodeID: String, extraArguments: [String] = [], dataDirectory: URL? = nil) throws {
        // Edges check join tokens, coordinators placement tokens.
        var arguments = role == .edge || role == .coordinator
            ? ["--app-id", TestApp.appID, "--app-certificate", TestApp.certificate] : []
        if role == .coordinator {
            let data = dataDirectory
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("showroom-data-\(UUID().uuidString.prefix(8))")
            arguments += ["--data-dir", data.path]
        }
        self.role = role
        process = try ManagedProcess(role.executableName,
                                     ["--node-id", nodeID, "--bind", "tcp://127.0.0.1:*"] + arguments + extraArguments,
                                     label: nodeID)
        let ready = try process.waitForLine { $0.hasPrefix("ready ") }
        let fields = Self.fields(of: ready)
        guard let endpoint = fields["endpoint"], let id = fields["node"] else {
            throw ShowroomTestingError("unreadable ready line: \(ready)")
        }
        self.nodeID = id
        self.endpoint = endpoint
        clientEndpoint = fields["client"] ?? ""
        adminEndpoint = fields["admin"] ?? ""
        apiEndpoint = fields["api"] ?? ""
    }

    /// The membership event lines (`event member ...`) it printed so far, as fields.
    public var events: [[String: String]] {
        process.stdoutLines.filter { $0.hasPrefix("event ") }.map(Self.fields(of:))
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
