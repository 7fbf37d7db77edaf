import Foundation
import Logging
import NodeRuntime
import Routing

/// In-process nodes started by one test on loopback with free ports, their logs captured
/// (``LogCapture``); ``stopAll()`` in tearDown stops every one of them.
public final class TestNodes {
    /// The nodes still running.
    public private(set) var nodes: [Node] = []

    /// No nodes yet.
    public init() {}

    /// Starts a node (not yet joined) with a short leave propagation.
    public func make(_ id: String, role: NodeRole = .edge, keyring: String? = nil, seeds: [String] = [],
              bind: String = "tcp://127.0.0.1:*", webSocketEndpoint: String = "") throws -> Node {
        var configuration = NodeConfiguration(role: role, nodeID: id)
        configuration.seeds = seeds
        configuration.bind = bind
        configuration.keyring = keyring
        configuration.leavePropagation = .milliseconds(50)
        let node = try Node(configuration: configuration, webSocketEndpoint: webSocketEndpoint, logger: LogCapture.logger(label: id), events: .none)
        nodes.append(node)
        return node
    }

    /// Stops `node` now (a test that restarts it under the same id).
    public func stop(_ node: Node) async {
        nodes.removeAll { $0 === node }
        await node.stop()
    }

    /// Stops every node still running.
    public func stopAll() async {
        for node in nodes { await node.stop() }
        nodes = []
    }
}
