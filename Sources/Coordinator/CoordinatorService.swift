import Foundation
import Logging
import NodeRuntime
import Rooms
import RoomStore
import ServerAPI
import ShowroomWire
import Synchronization
import Webhooks
import ZeroMQ

/// The room-coordinator's part of its process: the room registry with its database, channel
/// placement, channel events (events endpoint and webhooks), kick and ban. ``NodeMain`` starts it
/// before the node joins (the events endpoint is announced from the first gossip) and attaches it
/// to the node, whose loop then runs everything the coordinator decides.
public final class CoordinatorRoleService: NodeRoleService {
    private let configuration: NodeConfiguration
    private let settings: CoordinatorSettings
    private let logger: Logger
    private let webhookSettings: WebhookSettings?
    private let parts = Mutex<Parts?>(nil)

    private struct Parts: @unchecked Sendable {
        let publisher: EventPublisher
        let store: RoomStore
        let webhooks: WebhookDispatcher?
        let api: ServerAPIServer?
    }

    /// A service for `configuration` and the coordinator's own `settings`; nothing is opened
    /// before ``start()``.
    public init(configuration: NodeConfiguration, settings: CoordinatorSettings, logger: Logger) throws(ShowroomError) {
        webhookSettings = settings.webhookURLs.isEmpty ? nil
            : try WebhookSettings(urls: settings.webhookURLs, secret: settings.webhookSecret)
        self.configuration = configuration
        self.settings = settings
        self.logger = logger
    }

    /// Opens the database, the events endpoint and the server API.
    public func start() async throws -> RoleEndpoints {
        let directory = URL(fileURLWithPath: settings.dataDirectory, isDirectory: true)
        let path = directory.appendingPathComponent("\(configuration.nodeID).sqlite").path
        let store = try RoomStore(path: path)
        let publisher = try EventPublisher(bind: settings.eventsBind, advertiseHost: configuration.advertiseHost,
                                           logger: logger)
        let webhooks = webhookSettings.map { WebhookDispatcher(settings: $0, logger: logger) }
        var api: ServerAPIServer?
        var apiEndpoint = ""
        if settings.api.listen != "off" {
            let server = try ServerAPIServer(
                settings: settings.api, nodeID: configuration.nodeID, appID: configuration.appID ?? "",
                appCertificate: configuration.appCertificate ?? "",
                webhooks: APIWebhooks(urls: settings.webhookURLs, signed: !settings.webhookSecret.isEmpty, dispatcher: webhooks),
                logger: logger)
            do {
                apiEndpoint = try await server.start()
            } catch {
                publisher.shutdown()
                throw error
            }
            api = server
        }
        parts.withLock { $0 = Parts(publisher: publisher, store: store, webhooks: webhooks, api: api) }
        logger.info("coordinator started", metadata: ["database": "\(path)", "events": "\(publisher.endpoint)", "api": "\(apiEndpoint)"])
        return RoleEndpoints(events: publisher.endpoint, api: apiEndpoint)
    }

    /// Loads the stored state and serves the coordinator's requests on the node's loop.
    public func attach(to node: Node) {
        guard let current = parts.withLock({ $0 }) else { return }
        let configuration = self.configuration
        let settings = self.settings
        let logger = self.logger
        current.api?.attach(node)
        current.publisher.alsoPublish(through: node)
        node.loop.execute {
            do {
                let shell = try CoordinatorShell(
                    node: node, configuration: configuration, settings: settings, storage: StoreWriter(store: current.store, logger: logger),
                    publisher: current.publisher, webhooks: current.webhooks, logger: logger)
                shell.install()
            } catch {
                logger.critical("coordinator could not load its database; serving nothing", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Nothing to hand over: the rooms are replicated already.
    public func drain() async {}

    /// Closes the events endpoint and flushes the webhooks.
    public func stop() async {
        guard let current = parts.withLock({ $0 }) else { return }
        await current.api?.stop()
        await current.webhooks?.shutdown(grace: .seconds(2))
        current.publisher.shutdown()
    }
}
