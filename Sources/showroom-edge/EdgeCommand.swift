import ArgumentParser
import EdgeServer
import NodeRuntime

@main
struct EdgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-edge",
        abstract: "A Showroom edge: hosts channels and fans media out to their subscribers.")

    @OptionGroup var options: NodeOptions
    @OptionGroup var edge: EdgeOptions

    func run() async throws {
        try await NodeMain.run(role: .edge, options: options, roleFileKeys: EdgeWebSocketSettings.fileKeys) { [edge] configuration, file, logger in
            try EdgeRoleService(configuration: configuration, webSocket: try edge.webSocket(file: file), logger: logger)
        }
    }
}

/// The flags only an edge takes. Flags win over the configuration file.
struct EdgeOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("websocket"), help: "Where browsers' sessions connect over WebSocket (host:port; :0 picks a free port), or off (default 127.0.0.1:0).")
    var webSocket: String?

    @Option(name: .customLong("websocket-origin"), help: "An origin whose pages may connect over WebSocket, as http(s)://host[:port], or * for any (repeatable; default none: only clients that send no Origin).")
    var webSocketOrigins: [String] = []

    @Option(name: .customLong("websocket-certificate"), help: "PEM file of the WebSocket face's TLS certificate (chain); with --websocket-key it serves wss://.")
    var webSocketCertificate: String?

    @Option(name: .customLong("websocket-key"), help: "PEM file of that certificate's private key.")
    var webSocketKey: String?

    /// The WebSocket face's settings: defaults, then the file (`webSocket`, `webSocketOrigins`), then flags.
    func webSocket(file: ConfigurationFile?) throws -> EdgeWebSocketSettings {
        var settings = EdgeWebSocketSettings()
        if let file { try settings.apply(file) }
        if let webSocket { settings.listen = webSocket }
        if !webSocketOrigins.isEmpty { settings.allowedOrigins = webSocketOrigins }
        if let webSocketCertificate { settings.certificateFile = webSocketCertificate }
        if let webSocketKey { settings.privateKeyFile = webSocketKey }
        try settings.validate()
        return settings
    }
}
