import ArgumentParser
import Routing
import ShowroomWire

/// The command-line flags every server process takes. Flags win over the configuration file.
public struct NodeOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("config"), help: "JSON configuration file (see deploy/config/).")
    public var configFile: String?

    @Option(name: .customLong("node-id"), help: "Unique id of this process in the cluster.")
    public var nodeID: String?

    @Option(help: "Cluster endpoint to listen on, e.g. tcp://127.0.0.1:7100 (tcp://127.0.0.1:* picks a free port).")
    public var bind: String?

    @Option(help: "Host other members use to reach this one, when --bind listens on all interfaces.")
    public var advertiseHost: String?

    @Option(help: "Admin HTTP port for metrics, health and status: host:port (port 0 picks a free one), or off.")
    public var admin: String?

    @Option(name: .customLong("seed"), help: "A cluster member to join through (repeatable).")
    public var seeds: [String] = []

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    public var logLevel: String?

    @Option(help: "Client endpoint to listen on (edges), e.g. tcp://0.0.0.0:7300 (tcp://127.0.0.1:* picks a free port).")
    public var clientBind: String?

    @Option(help: "App id whose tokens are accepted (32 hex characters).")
    public var appID: String?

    @Option(help: "App certificate tokens are signed with (32 hex characters); prefer the configuration file.")
    public var appCertificate: String?

    @Option(help: "Directory of the cluster's CURVE keys (cluster.key, <id>.pub, this node's <id>.key); cluster links then admit only listed members.")
    public var keyring: String?

    @Option(help: "Client-link encryption on an edge's client endpoint: off or curve.")
    public var clientEncryption: String?

    @Option(name: .customLong("websocket"), help: "Where browsers connect over WebSocket (host:port; :0 picks a free port), or off (default 127.0.0.1:0).")
    public var webSocket: String?

    @Option(name: .customLong("websocket-origin"), help: "An origin whose pages may connect over WebSocket, as http(s)://host[:port], or * for any (repeatable; default none: only clients that send no Origin).")
    public var webSocketOrigins: [String] = []

    @Option(name: .customLong("websocket-certificate"), help: "PEM file of the WebSocket face's TLS certificate (chain); with --websocket-key it serves wss://.")
    public var webSocketCertificate: String?

    @Option(name: .customLong("websocket-key"), help: "PEM file of that certificate's private key.")
    public var webSocketKey: String?

    public init() {}

    /// The configuration file, if one is given.
    public func file() throws(ShowroomError) -> ConfigurationFile? {
        guard let configFile else { return nil }
        return try ConfigurationFile(path: configFile)
    }

    /// The configuration for `role`: defaults, then the file (which may also hold `roleKeys`, the
    /// role's own settings), then these flags.
    public func configuration(role: NodeRole, file: ConfigurationFile? = nil,
                              roleKeys: Set<String> = []) throws(ShowroomError) -> NodeConfiguration {
        var configuration = NodeConfiguration(role: role)
        // `??` takes an autoclosure that would throw untyped errors.
        let read: ConfigurationFile?
        if let file { read = file } else { read = try self.file() }
        if let read { try configuration.apply(read, roleKeys: roleKeys) }
        if let nodeID { configuration.nodeID = nodeID }
        if let bind { configuration.bind = bind }
        if let advertiseHost { configuration.advertiseHost = advertiseHost }
        if let admin { configuration.admin = admin }
        if !seeds.isEmpty { configuration.seeds = seeds }
        if let clientBind { configuration.clientBind = clientBind }
        if let appID { configuration.appID = appID }
        if let appCertificate { configuration.appCertificate = appCertificate }
        if let keyring { configuration.keyring = keyring }
        if let clientEncryption { configuration.clientEncryption = try NodeConfiguration.parseClientEncryption(clientEncryption) }
        if let logLevel { configuration.logLevel = try NodeConfiguration.parseLogLevel(logLevel) }
        if let webSocket { configuration.webSocket.listen = webSocket }
        if !webSocketOrigins.isEmpty { configuration.webSocket.allowedOrigins = webSocketOrigins }
        if let webSocketCertificate { configuration.webSocket.certificateFile = webSocketCertificate }
        if let webSocketKey { configuration.webSocket.privateKeyFile = webSocketKey }
        try configuration.validate()
        return configuration
    }
}
