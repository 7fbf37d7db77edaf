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
    /// Where a coordinator publishes room notices and channel events (a ZeroMQ PUB socket).
    /// `tcp://127.0.0.1:*` picks a free port; the bound address is announced in the membership.
    public var eventsBind: String = "tcp://127.0.0.1:*"
    /// Where a coordinator keeps its database (`<dataDirectory>/<nodeID>.sqlite`), so a restart loses
    /// no room. Relative paths are taken from the working directory.
    public var dataDirectory: String = "showroom-data"
    /// URLs a coordinator posts channel events to (JSON, signed with ``webhookSecret``).
    public var webhookURLs: [String] = []
    /// Key of the webhooks' HMAC-SHA256 signature header; empty sends them unsigned.
    public var webhookSecret: String = ""
    /// How long a room stays open after its creation.
    public var roomExpirySeconds: Int = 20 * 60
    /// How long a room's owner may be away from its channel before the room closes.
    public var ownerGraceSeconds: Int = 5 * 60
    /// How long a coordinator keeps a channel placement that no edge reports hosting.
    public var placementExpirySeconds: Int = 60
    /// Viewers of one channel an edge takes before a coordinator places the channel's next audience
    /// members on relay edges (which pull the channel from its origin); 0 keeps every viewer on
    /// the origin.
    public var relayThreshold: Int = 0
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
    public static let fileKeys: Set<String> = [
        "nodeID", "bind", "advertiseHost", "admin", "seeds", "logLevel", "maxMessageBytes", "highWaterMark", "ioThreads",
        "clientBind", "appID", "appCertificate",
        "eventsBind", "dataDirectory", "webhookURLs", "webhookSecret", "roomExpirySeconds", "ownerGraceSeconds",
        "placementExpirySeconds", "relayThreshold",
        "keyring", "clientEncryption",
    ]

    /// Applies the settings of a JSON configuration file on top of this configuration.
    /// - Throws: ``ShowroomError`` (`invalidArgument`) naming the file and the offending key.
    public mutating func apply(fileAt path: String) throws(ShowroomError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .invalidArgument("cannot read configuration file \(path): \(error.localizedDescription)")
        }
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ShowroomError.invalidArgument("configuration file \(path) must hold a JSON object")
            }
            object = parsed
        } catch let error as ShowroomError {
            throw error
        } catch {
            throw .invalidArgument("configuration file \(path) is not valid JSON: \(error.localizedDescription)")
        }
        if let unknown = object.keys.filter({ !Self.fileKeys.contains($0) }).sorted().first {
            throw .invalidArgument(
                "configuration file \(path): unknown key '\(unknown)'; known keys: \(Self.fileKeys.sorted().joined(separator: ", "))")
        }
        func value<T>(_ key: String, as type: T.Type) throws(ShowroomError) -> T? {
            guard let raw = object[key] else { return nil }
            guard let typed = raw as? T else {
                throw .invalidArgument("configuration file \(path): '\(key)' must be a \(T.self), not \(raw)")
            }
            return typed
        }
        if let v = try value("nodeID", as: String.self) { nodeID = v }
        if let v = try value("bind", as: String.self) { bind = v }
        if let v = try value("advertiseHost", as: String.self) { advertiseHost = v }
        if let v = try value("admin", as: String.self) { admin = v }
        if let v = try value("seeds", as: [String].self) { seeds = v }
        if let v = try value("logLevel", as: String.self) { logLevel = try Self.parseLogLevel(v) }
        if let v = try value("maxMessageBytes", as: Int.self) { maxMessageBytes = v }
        if let v = try value("highWaterMark", as: Int.self) { highWaterMark = Int32(clamping: v) }
        if let v = try value("ioThreads", as: Int.self) { ioThreads = v }
        if let v = try value("clientBind", as: String.self) { clientBind = v }
        if let v = try value("appID", as: String.self) { appID = v }
        if let v = try value("appCertificate", as: String.self) { appCertificate = v }
        if let v = try value("eventsBind", as: String.self) { eventsBind = v }
        if let v = try value("dataDirectory", as: String.self) { dataDirectory = v }
        if let v = try value("webhookURLs", as: [String].self) { webhookURLs = v }
        if let v = try value("webhookSecret", as: String.self) { webhookSecret = v }
        if let v = try value("roomExpirySeconds", as: Int.self) { roomExpirySeconds = v }
        if let v = try value("ownerGraceSeconds", as: Int.self) { ownerGraceSeconds = v }
        if let v = try value("relayThreshold", as: Int.self) { relayThreshold = v }
        if let v = try value("placementExpirySeconds", as: Int.self) { placementExpirySeconds = v }
        if let v = try value("keyring", as: String.self) { keyring = v }
        if let v = try value("clientEncryption", as: String.self) { clientEncryption = try Self.parseClientEncryption(v) }
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
        for endpoint in [bind, clientBind, eventsBind] + seeds where !endpoint.hasPrefix("tcp://") && !endpoint.hasPrefix("ipc://") {
            throw .invalidArgument("endpoint '\(endpoint)' must start with tcp:// or ipc://")
        }
        if roomExpirySeconds < 1 { throw .invalidArgument("roomExpirySeconds must be at least 1") }
        if ownerGraceSeconds < 1 { throw .invalidArgument("ownerGraceSeconds must be at least 1") }
        if !(0...1_000_000).contains(relayThreshold) { throw .invalidArgument("relayThreshold must be 0 (off) to 1000000 viewers") }
        if placementExpirySeconds < 1 || placementExpirySeconds > 86_400 {
            throw .invalidArgument("placementExpirySeconds must be 1–86400")
        }
        if dataDirectory.isEmpty { throw .invalidArgument("dataDirectory must name a directory") }
        if let keyring, keyring.isEmpty { throw .invalidArgument("keyring must name a directory of CURVE keys") }
        if maxMessageBytes < 1024 { throw .invalidArgument("maxMessageBytes must be at least 1024") }
        if highWaterMark < 1 { throw .invalidArgument("highWaterMark must be at least 1") }
        if ioThreads < 1 || ioThreads > 64 { throw .invalidArgument("ioThreads must be 1–64") }
        for (name, value) in [("appID", appID), ("appCertificate", appCertificate)] {
            if let value, value.count != 32 || !value.allSatisfy(\.isHexDigit) {
                throw .invalidArgument("\(name) must be 32 hexadecimal characters, as the app's console shows it")
            }
        }
    }
}
