import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
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
        let node: Node
        do {
            node = try Node(configuration: configuration, logger: logger)
        } catch {
            logger.critical("node failed to start", metadata: ["error": "\(error)"])
            throw error
        }
        // One line on standard output that launchers and tests wait for.
        let ready = "ready node=\(configuration.nodeID) role=\(configuration.role) endpoint=\(node.endpoint) pid=\(ProcessInfo.processInfo.processIdentifier)\n"
        FileHandle.standardOutput.write(Data(ready.utf8))
        try? await gracefulShutdown()
        logger.info("shutting down")
        await node.stop()
    }
}
