import Foundation
import Logging
import NodeRuntime

/// In-process nodes started by one test on loopback with free ports; ``stopAll()`` in tearDown
/// stops every one of them.
final class TestNodes {
    private(set) var nodes: [Node] = []

    /// Starts a node (not yet joined) with a short leave propagation.
    func make(_ id: String, role: NodeRole = .edge, keyring: String? = nil, seeds: [String] = [],
              bind: String = "tcp://127.0.0.1:*") throws -> Node {
        var configuration = NodeConfiguration(role: role, nodeID: id)
        configuration.seeds = seeds
        configuration.bind = bind
        configuration.keyring = keyring
        configuration.leavePropagation = .milliseconds(50)
        let node = try Node(configuration: configuration, logger: Logger(label: id), events: .none)
        nodes.append(node)
        return node
    }

    /// Stops `node` now (a test that restarts it under the same id).
    func stop(_ node: Node) async {
        nodes.removeAll { $0 === node }
        await node.stop()
    }

    /// Stops every node still running.
    func stopAll() async {
        for node in nodes { await node.stop() }
        nodes = []
    }
}
