// What the engine holds, read by a host that drives the shell directly (a simulation's app).

extension EngineShell {
    /// The channels joined now (not rejoining or moving), sorted.
    package var joinedChannels: [String] {
        state.connections.values.filter { $0.isJoined && $0.rejoin == nil && $0.move == nil }.map(\.connection.channel).sorted()
    }

    /// The channels held in any state (joining, joined, rejoining), sorted.
    package var heldChannels: [String] { state.connections.keys.sorted() }

    /// The edge a channel's connection lives on.
    package func edge(of channel: String) -> String? { state.connections[channel]?.edge.id }

    /// Whether a channel's connection publishes video now.
    package func publishes(_ channel: String) -> Bool { state.connections[channel]?.sends(.video) ?? false }
}
