import AdminEndpoint
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import ShowroomWire

/// Runs a server process: configuration, logging, the node, and a clean stop on SIGTERM or
/// SIGINT. The three executables are this plus their role.
public enum NodeMain {
    /// Runs a node of `role` until SIGTERM/SIGINT, then stops it and returns (exit status 0).
    public static func run(role: NodeRole, options: NodeOptions) async throws {
        let configuration: NodeConfiguration
        do {
            configuration = try options.configuration(role: role)
        } catch {
            FileHandle.standardError.write(Data("\(role.executableName): \(error)\n".utf8))
            throw ExitCode(2)
        }
        bootstrapLogging(configuration)
        let logger = Logger(label: "showroom.\(role.rawValue)")
        let service = NodeService(configuration: configuration, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }

    /// Sends logs to standard error, each line carrying the node id.
    static func bootstrapLogging(_ configuration: NodeConfiguration) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
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
        do {
            node = try Node(configuration: configuration, adminEndpoint: adminEndpoint, logger: logger)
        } catch {
            logger.critical("node failed to start", metadata: ["error": "\(error)"])
            await admin?.stop()
            throw error
        }
        started.withLock { $0 = node }
        node.join()
        // One line on standard output that launchers and tests wait for.
        let ready = "ready node=\(configuration.nodeID) role=\(configuration.role) endpoint=\(node.endpoint) admin=\(adminEndpoint.isEmpty ? "off" : adminEndpoint) pid=\(ProcessInfo.processInfo.processIdentifier) at_ms=\(Int64(Date().timeIntervalSince1970 * 1000))\n"
        FileHandle.standardOutput.write(Data(ready.utf8))
        try? await gracefulShutdown()
        logger.info("leaving the cluster")
        admin?.setDraining()
        await node.leave()
        await admin?.stop()
    }
}
