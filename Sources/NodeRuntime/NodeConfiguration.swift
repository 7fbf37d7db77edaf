import Foundation
import Logging
import Membership
import Routing
import ShowroomWire

/// Everything a server process is configured with: one struct, filled from defaults, then a
/// JSON configuration file, then command-line flags. Nothing else reads the environment.
public struct NodeConfiguration: Sendable {
    /// Unique id of this process in the cluster. Default: `<role>-<random>`.
    public var nodeID: String
    /// The process's role.
    public var role: NodeRole
    /// Where the cluster socket listens. `tcp://127.0.0.1:*` (the default) picks a free port.
    public var bind: String = "tcp://127.0.0.1:*"
    /// Host other processes use to reach this one, when `bind` listens on all interfaces.
    /// Default: the host in `bind`.
    public var advertiseHost: String?
    /// Where the admin HTTP port (metrics, health, status) listens, `host:port` (port 0 picks a
    /// free one), or `off`.
    public var admin: String = "127.0.0.1:0"
    /// Cluster members to contact when joining (`tcp://host:port`). Empty: start a new cluster.
    public var seeds: [String] = []
    /// Least severe log level written.
    public var logLevel: Logger.Level = .info
    /// Largest message accepted on the cluster socket; a peer sending more is disconnected.
    public var maxMessageBytes: Int = 4 << 20
    /// Messages queued per peer before sends to it are refused (ZeroMQ high-water mark).
    public var highWaterMark: Int32 = 1000
    /// libzmq I/O threads.
    public var ioThreads: Int = 1
    /// Where the client endpoint listens (edges: client sessions). `tcp://127.0.0.1:*` picks a
    /// free port; the bound address (with ``advertiseHost``) is announced in the membership.
    public var clientBind: String = "tcp://127.0.0.1:*"
    /// The app whose tokens this cluster accepts (edges verify join tokens against it).
    public var appID: String?
    /// The app certificate tokens are signed with. Keep it in the configuration file rather than on
    /// the command line, where other users of the host can read it.
    public var appCertificate: String?
    /// Gossip timing (probe interval, timeouts, suspicion). The defaults suit a LAN.
    public var membershipSettings = MembershipSettings()
    /// How long a leaving member keeps gossiping so the others hear it left.
    public var leavePropagation: Duration = .milliseconds(500)
    /// Directory of the cluster's CURVE keys (see ``ClusterKeyring``). Set: the cluster endpoint
    /// admits only members listed there and every link to another member is encrypted. Nil: plain
    /// cluster links, for a single trusted host only.
    public var keyring: String?
    /// Whether an edge's client endpoint encrypts client links with CURVE (its public key reaches
    /// clients with the placement and the membership). Clients are not authenticated by key: tokens
    /// do that.
    public var clientEncryption: ClientEncryption = .off
    /// Where browsers reach this process over WebSocket (an edge: client sessions; a coordinator or
    /// call-signal node: its client kinds and, on coordinators, notices), and which pages may.
    public var webSocket = WebSocketSettings()

    /// Client-link encryption settings.
    public enum ClientEncryption: String, Sendable, CaseIterable {
        /// Plain ZeroMQ (NULL mechanism).
        case off
        /// CURVE: encrypted and integrity-protected.
        case curve
    }

    /// Parses `off` or `curve`.
    public static func parseClientEncryption(_ text: String) throws(ShowroomError) -> ClientEncryption {
        guard let value = ClientEncryption(rawValue: text.lowercased()) else {
            throw .invalidArgument("clientEncryption must be 'off' or 'curve', not '\(text)'")
        }
        return value
    }

    /// Defaults for `role`.
    public init(role: NodeRole, nodeID: String? = nil) {
        self.role = role
        self.nodeID = nodeID ?? "\(role.rawValue)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Keys a configuration file may hold; any other key is refused so a typo is not ignored.
    public static let fileKeys: Set<String> = Set([
        "nodeID", "bind", "advertiseHost", "admin", "seeds", "logLevel", "maxMessageBytes", "highWaterMark", "ioThreads",
        "clientBind", "appID", "appCertificate", "keyring", "clientEncryption",
    ]).union(WebSocketSettings.fileKeys)

    /// Applies the shared settings of a configuration file on top of this configuration; the
    /// file may hold `roleKeys` too (the role's own settings, which the role takes).
    /// - Throws: ``ShowroomError`` (`invalidArgument`) naming the file and the offending key.
    public mutating func apply(_ file: ConfigurationFile, roleKeys: Set<String> = []) throws(ShowroomError) {
        try file.check(known: Self.fileKeys.union(roleKeys))
        if let v = try file.value("nodeID", as: String.self) { nodeID = v }
        if let v = try file.value("bind", as: String.self) { bind = v }
        if let v = try file.value("advertiseHost", as: String.self) { advertiseHost = v }
        if let v = try file.value("admin", as: String.self) { admin = v }
        if let v = try file.value("seeds", as: [String].self) { seeds = v }
        if let v = try file.value("logLevel", as: String.self) { logLevel = try Self.parseLogLevel(v) }
        if let v = try file.value("maxMessageBytes", as: Int.self) { maxMessageBytes = v }
        if let v = try file.value("highWaterMark", as: Int.self) { highWaterMark = Int32(clamping: v) }
        if let v = try file.value("ioThreads", as: Int.self) { ioThreads = v }
        if let v = try file.value("clientBind", as: String.self) { clientBind = v }
        if let v = try file.value("appID", as: String.self) { appID = v }
        if let v = try file.value("appCertificate", as: String.self) { appCertificate = v }
        if let v = try file.value("keyring", as: String.self) { keyring = v }
        if let v = try file.value("clientEncryption", as: String.self) { clientEncryption = try Self.parseClientEncryption(v) }
        try webSocket.apply(file)
        try validate()
    }

    /// Parses a log level name (`trace` ... `critical`).
    public static func parseLogLevel(_ text: String) throws(ShowroomError) -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw .invalidArgument(
                "unknown log level '\(text)'; use one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }

    /// The endpoint to advertise for a bound endpoint: the bound port with `host` if given (a
    /// socket bound to all interfaces is reached through the host's address).
    public static func advertised(_ bound: String, host: String?) -> String {
        guard let host, let colon = bound.lastIndex(of: ":") else { return bound }
        return "tcp://\(host)\(bound[colon...])"
    }

    /// Checks the values are usable.
    public func validate() throws(ShowroomError) {
        if nodeID.isEmpty || nodeID.count > 64 || nodeID.contains(where: { $0.isWhitespace }) {
            throw .invalidArgument("node id '\(nodeID)' must be 1–64 characters without spaces")
        }
        for endpoint in [bind, clientBind] + seeds where !endpoint.hasPrefix("tcp://") && !endpoint.hasPrefix("ipc://") {
            throw .invalidArgument("endpoint '\(endpoint)' must start with tcp:// or ipc://")
        }
        if let keyring, keyring.isEmpty { throw .invalidArgument("keyring must name a directory of CURVE keys") }
        if maxMessageBytes < 1024 { throw .invalidArgument("maxMessageBytes must be at least 1024") }
        if highWaterMark < 1 { throw .invalidArgument("highWaterMark must be at least 1") }
        if ioThreads < 1 || ioThreads > 64 { throw .invalidArgument("ioThreads must be 1–64") }
        for (name, value) in [("appID", appID), ("appCertificate", appCertificate)] {
            if let value, value.count != 32 || !value.allSatisfy(\.isHexDigit) {
                throw .invalidArgument("\(name) must be 32 hexadecimal characters, as the app's console shows it")
            }
        }
        try webSocket.validate()
    }
}
