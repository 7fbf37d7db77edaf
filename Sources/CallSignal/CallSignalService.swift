import Logging
import NodeRuntime

/// The call-signal node's part of its process: signaling sessions and calls, served on the node's
/// loop (client requests on its client endpoint, the other nodes' on its cluster endpoint).
public final class CallSignalRoleService: NodeRoleService {
    private let configuration: NodeConfiguration
    private let logger: Logger

    /// A service for `configuration`.
    public init(configuration: NodeConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Nothing of its own to listen on: clients reach the node's client face.
    public func start() throws -> RoleEndpoints { RoleEndpoints() }

    /// Serves sessions and calls on the node's loop.
    public func attach(to node: Node) {
        let configuration = self.configuration
        let logger = self.logger
        node.loop.execute {
            CallSignalShell(node: node, configuration: configuration, logger: logger).install()
        }
    }

    /// Nothing to hand over by hand: each user's successor holds its record (replicated within
    /// 5 ms of every change) and takes its session and calls over when this node leaves.
    public func drain() async {}

    public func stop() async {}
}
