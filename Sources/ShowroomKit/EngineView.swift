/// The engine's connections as the app can read them at any moment, without waiting (LiveKit's
/// `Room.remoteParticipants`): each connection's state and the remote users in its channel with
/// the tracks they publish. A pure value type kept up to date from the engine's own events, in
/// their order, so it never disagrees with what the event readers saw.
public struct EngineView: Sendable, Equatable {
    /// One connection.
    public struct Connection: Sendable, Equatable {
        /// The connection.
        public var connection: ChannelConnection
        /// Its state.
        public var state: ConnectionState
        /// The remote users in its channel and the tracks each publishes.
        public var remoteUsers: [UInt32: Set<TrackKind>]
    }

    /// The connections, by channel.
    public private(set) var connections: [String: Connection] = [:]

    /// An empty view.
    public init() {}

    /// Takes one event of the engine into account.
    public mutating func apply(_ event: EngineEvent) {
        switch event {
        case .connectionStateChanged(let connection, let state, _):
            if state == .disconnected || state == .failed {
                connections[connection.channel] = nil
            } else {
                connections[connection.channel, default: Connection(connection: connection, state: state, remoteUsers: [:])].state = state
                connections[connection.channel]?.connection = connection
            }
        case .joined(let connection, _), .rejoinedChannel(let connection, _):
            connections[connection.channel, default: Connection(connection: connection, state: .connected, remoteUsers: [:])].connection = connection
        case .connectionClosed(let connection, _):
            connections[connection.channel] = nil
        case .userJoined(let connection, let uid):
            guard connections[connection.channel] != nil else { return }
            if connections[connection.channel]?.remoteUsers[uid] == nil { connections[connection.channel]?.remoteUsers[uid] = [] }
        case .userOffline(let connection, let uid, _):
            connections[connection.channel]?.remoteUsers[uid] = nil
        case .remoteTrackPublished(let connection, let uid, let track):
            guard connections[connection.channel] != nil else { return }
            connections[connection.channel]?.remoteUsers[uid, default: []].insert(track)
        case .remoteTrackUnpublished(let connection, let uid, let track):
            connections[connection.channel]?.remoteUsers[uid]?.remove(track)
        default:
            break
        }
    }
}
