import ArgumentParser
import Coordinator
import NodeRuntime
import ShowroomWire

@main
struct CoordinatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "showroom-coordinator",
        abstract: "A Showroom room-coordinator: rooms, channel placement on edges, channel events, kick and ban.")

    @OptionGroup var options: NodeOptions
    @OptionGroup var coordinator: CoordinatorOptions

    func run() async throws {
        let coordinator = self.coordinator
        try await NodeMain.run(role: .coordinator, options: options, roleFileKeys: CoordinatorSettings.fileKeys) {
            configuration, file, logger in
            try CoordinatorRoleService(configuration: configuration, settings: try coordinator.settings(file: file), logger: logger)
        }
    }
}

/// The flags only a coordinator takes. Flags win over the configuration file.
struct CoordinatorOptions: ParsableArguments, Sendable {
    @Option(help: "Where the coordinator publishes room notices and channel events, e.g. tcp://0.0.0.0:7400.")
    var eventsBind: String?

    @Option(help: "Directory of the coordinator's database (<dir>/<node id>.sqlite).")
    var dataDir: String?

    @Option(name: .customLong("webhook"), help: "URL the coordinator posts channel events to (repeatable).")
    var webhookURLs: [String] = []

    @Option(help: "Secret signing the webhooks (HMAC-SHA256); prefer the configuration file.")
    var webhookSecret: String?

    @Option(help: "Seconds a room stays open after its creation (default 1200).")
    var roomExpiry: Int?

    @Option(help: "Seconds a room's owner may be away from its channel before the room closes (default 300).")
    var ownerGrace: Int?

    @Option(help: "Seconds the coordinator keeps a channel placement no edge reports hosting (default 60).")
    var placementExpiry: Int?

    @Option(help: "Viewers of one channel per edge before the coordinator places more on relay edges (default 0: never).")
    var relayThreshold: Int?

    @Flag(help: "Record both sides of every 1v1 call (files on the edges, webhooks for each file).")
    var recordCalls = false

    @Option(help: "Record the live rooms of this owner uid while open (repeatable).")
    var recordOwner: [UInt32] = []

    @Option(help: "Where the server API listens (host:port; :0 picks a free port), or off (default 127.0.0.1:0). Its customer keys are in the configuration file (apiKeys).")
    var api: String?

    /// The settings: defaults, then `file`, then these flags.
    func settings(file: ConfigurationFile?) throws(ShowroomError) -> CoordinatorSettings {
        var settings = CoordinatorSettings()
        if let file { try settings.apply(file) }
        if let eventsBind { settings.eventsBind = eventsBind }
        if let dataDir { settings.dataDirectory = dataDir }
        if !webhookURLs.isEmpty { settings.webhookURLs = webhookURLs }
        if let webhookSecret { settings.webhookSecret = webhookSecret }
        if let roomExpiry { settings.roomExpirySeconds = roomExpiry }
        if let ownerGrace { settings.ownerGraceSeconds = ownerGrace }
        if let placementExpiry { settings.placementExpirySeconds = placementExpiry }
        if let relayThreshold { settings.relayThreshold = relayThreshold }
        if let api { settings.api.listen = api }
        if recordCalls { settings.recordCalls = true }
        if !recordOwner.isEmpty { settings.recordOwners = recordOwner }
        try settings.validate()
        return settings
    }
}
