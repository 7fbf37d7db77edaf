import AdminEndpoint
import ArgumentParser
import CMalloc
import Foundation
import Logging
import Routing
import ServiceLifecycle
import Synchronization
import ShowroomWire

/// Runs a server process: configuration, logging, the node, and a clean stop on SIGTERM or
/// SIGINT. The three executables are this plus their role.
public enum NodeMain {
    /// Runs a node of `role` until SIGTERM/SIGINT, then stops it and returns (exit status 0).
    ///
    /// - Parameters:
    ///   - role: The process's role.
    ///   - options: The command-line flags.
    ///   - roleService: Makes what the role adds to the node (an edge's client endpoint); it is
    ///     started before the node joins and stopped after it leaves. A configuration it refuses
    ///     (a ``ShowroomError``) ends the process with exit status 2.
    public static func run(
        role: NodeRole, options: NodeOptions,
        roleService: (@Sendable (NodeConfiguration, Logger) throws -> any NodeRoleService)? = nil
    ) async throws {
        var adapted: (@Sendable (NodeConfiguration, ConfigurationFile?, Logger) throws -> any NodeRoleService)?
        if let roleService { adapted = { configuration, _, logger in try roleService(configuration, logger) } }
        try await run(role: role, options: options, roleFileKeys: [], roleService: adapted)
    }

    /// Runs a server process of `role` whose configuration file may also hold `roleFileKeys`, the
    /// role's own settings, which `roleService` takes from the file it is given (nil: no file).
    public static func run(
        role: NodeRole, options: NodeOptions, roleFileKeys: Set<String>,
        roleService: (@Sendable (NodeConfiguration, ConfigurationFile?, Logger) throws -> any NodeRoleService)?
    ) async throws {
        let configuration: NodeConfiguration
        let file: ConfigurationFile?
        do {
            file = try options.file()
            configuration = try options.configuration(role: role, file: file, roleKeys: roleFileKeys)
        } catch {
            FileHandle.standardError.write(Data("\(role.executableName): \(error)\n".utf8))
            throw ExitCode(2)
        }
        bootstrapLogging(configuration)
        let logger = Logger(label: "showroom.\(role.rawValue)")
        var added: (any NodeRoleService)?
        if let roleService {
            do {
                added = try roleService(configuration, file, logger)
            } catch let error as ShowroomError {
                FileHandle.standardError.write(Data("\(role.executableName): \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        ParentWatch.start(logger: logger)
        let service = NodeService(configuration: configuration, logger: logger, roleService: added)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }

    /// How often the freed heap is handed back to the system.
    static let heapTrimInterval = Duration.seconds(30)

    /// Hands freed heap pages back to the system (`malloc_trim`). glibc keeps what a burst freed
    /// (a wave of joins, a failover) in its arenas for reuse, so a long-running node's RSS only
    /// ever goes up and says nothing about what it holds; trimmed now and then, RSS follows the
    /// live heap (a soak's growth figure means something) and memory freed after a burst goes
    /// back to the machine. It runs on the node's loop; a trim longer than 2 ms is logged.
    static func trimHeap() {
        _ = malloc_trim(0)
    }

    /// Sends logs to standard error, each line carrying the node id and the time to the millisecond.
    static func bootstrapLogging(_ configuration: NodeConfiguration) {
        LoggingSystem.bootstrap { label in
            var handler = NodeLogHandler(label: label)
            handler.logLevel = configuration.logLevel
            handler.metadata["node"] = "\(configuration.nodeID)"
            return handler
        }
    }
}

/// The node as a service of the process's service group: started on run, stopped on graceful
/// shutdown.
struct NodeService: Service, CustomStringConvertible {
    let configuration: NodeConfiguration
    let logger: Logger
    let roleService: (any NodeRoleService)?

    var description: String { "NodeService(\(configuration.role) \(configuration.nodeID))" }

    func run() async throws {
        let metrics = MetricsSetup.bootstrap(build: BuildInfo(
            version: ShowroomVersion.current, role: configuration.role.rawValue, nodeID: configuration.nodeID))
        // The admin port starts first so the node can announce its address; its /status asks the
        // node once the node exists.
        let started = Mutex<Node?>(nil)
        var admin: AdminServer?
        var adminEndpoint = ""
        if configuration.admin != "off" {
            let server = AdminServer(
                configuration: try .init(listen: configuration.admin), metrics: metrics, logger: logger,
                status: {
                    guard let node = started.withLock({ $0 }) else { throw ShowroomError.unavailable("starting") }
                    return Data(try await node.clusterStatus().jsonString().utf8)
                })
            adminEndpoint = try await server.start()
            admin = server
        }
        let node: Node
        var endpoints = RoleEndpoints()
        var browsers: NodeWebSocketFace?
        do {
            endpoints = try await roleService?.start() ?? RoleEndpoints()
            // An edge serves browsers' sessions itself; the other roles serve their client kinds
            // (and a coordinator its notices) to browsers here.
            if configuration.role != .edge, configuration.webSocket.listen != "off" {
                let face = try NodeWebSocketFace(
                    settings: configuration.webSocket, maxMessageBytes: configuration.maxMessageBytes,
                    publishesEvents: !endpoints.events.isEmpty, logger: logger)
                browsers = face
                endpoints.webSocket = try await face.start(advertiseHost: configuration.advertiseHost)
            }
            node = try Node(configuration: configuration, clientEndpoint: endpoints.client,
                            eventsEndpoint: endpoints.events, adminEndpoint: adminEndpoint,
                            clientCurvePublicKey: endpoints.clientCurvePublicKey, webSocketEndpoint: endpoints.webSocket,
                            logger: logger)
        } catch {
            logger.critical("node failed to start", metadata: ["error": "\(error)"])
            await browsers?.stop()
            await roleService?.stop()
            await admin?.stop()
            throw error
        }
        if let browsers {
            browsers.attach(node)
            node.serveBrowsers(browsers)
        }
        started.withLock { $0 = node }
        roleService?.attach(to: node)
        node.join()
        node.loop.execute { [logger] in
            node.scheduleRepeating(every: NodeMain.heapTrimInterval) {
                let took = ContinuousClock().measure { NodeMain.trimHeap() }
                if took > .milliseconds(2) { logger.info("heap trim took \(took.milliseconds) ms") }
            }
        }
        admin?.setReady()
        // One line on standard output that launchers and tests wait for.
        let ready = "ready node=\(configuration.nodeID) role=\(configuration.role) endpoint=\(node.endpoint)\(node.clientEndpoint.isEmpty ? "" : " client=\(node.clientEndpoint)")\(endpoints.events.isEmpty ? "" : " events=\(endpoints.events)")\(endpoints.api.isEmpty ? "" : " api=\(endpoints.api)")\(endpoints.webSocket.isEmpty ? "" : " ws=\(endpoints.webSocket)") admin=\(adminEndpoint.isEmpty ? "off" : adminEndpoint) pid=\(ProcessInfo.processInfo.processIdentifier) at_ms=\(Int64(Date().timeIntervalSince1970 * 1000))\n"
        FileHandle.standardOutput.write(Data(ready.utf8))
        try? await gracefulShutdown()
        logger.info("leaving the cluster")
        admin?.setDraining()
        await roleService?.drain()
        await node.leave()
        await browsers?.stop()
        await roleService?.stop()
        await admin?.stop()
    }
}

/// What a role adds to its node process: sockets and state of its own (an edge's client endpoint
/// and channel plane). ``NodeMain`` starts it before the node joins the cluster, so the endpoint it
/// returns is announced from the first gossip on, and stops it after the node has left.
public protocol NodeRoleService: AnyObject, Sendable {
    /// Starts serving.
    ///
    /// - Returns: The endpoints it serves, announced in the membership.
    func start() async throws -> RoleEndpoints
    /// The node is up: the service may report its load through it.
    func attach(to node: Node)
    /// SIGTERM: take no new work and tell clients to go elsewhere, before the node leaves.
    func drain() async
    /// Stops serving and releases everything.
    func stop() async
}

/// What a role service listens on, announced in the membership metadata.
public struct RoleEndpoints: Sendable, Equatable {
    /// Where clients connect (edges); "" for none.
    public var client: String
    /// Where notices are published (coordinators' PUB socket); "" for none.
    public var events: String
    /// The client endpoint's CURVE public key when client links are encrypted; "" for plain.
    public var clientCurvePublicKey: String
    /// Where the server API answers (`http://HOST:PORT`; coordinators); "" for none. Printed on
    /// the ready line, not announced.
    public var api: String
    /// Where browsers connect over WebSocket (`ws://HOST:PORT/v1/edge` on edges, `/v1/node` on the
    /// other roles); "" for none. Printed on the ready line and announced.
    public var webSocket: String

    /// Endpoints; all default to none.
    public init(client: String = "", events: String = "", clientCurvePublicKey: String = "", api: String = "", webSocket: String = "") {
        self.client = client
        self.events = events
        self.clientCurvePublicKey = clientCurvePublicKey
        self.api = api
        self.webSocket = webSocket
    }
}
