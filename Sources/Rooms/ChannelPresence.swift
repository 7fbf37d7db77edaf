import ShowroomWire

/// Who is in each channel as its events have told it, by the edge runs each user is connected
/// on: what decides whether a join or a leave is news for the channel's events, and whose leave
/// nobody will report.
///
/// A user can be in a channel on two edges for a while: it moves (a drain, or a channel sent to
/// the edge it is placed on), or each side of a partition placed the channel. The edges' reports
/// arrive in any order, so the new edge's join can come before the old edge's leave, or an old
/// join held through a partition after a new one. The channel's events say the user joined when
/// its first connection comes and left when its last one goes, whatever the order.
///
/// A channel's end reported by an edge while users are connected on another edge is no news:
/// the channel moved, and goes on there.
///
/// Runs, not edges: an edge that restarts is a new run (its activities' `origin`). An edge run
/// that is gone (its process died, or the edge restarted) reports nothing more, so its users
/// would stay in the channel's events for good: ``depart(from:isGone:)`` takes its connections
/// out, and the users who had no other one leave. Presence travels with the channel's numbers
/// (``entries(of:)``, ``replace(_:with:)``), so whoever owns the channel next knows who is in it.
public struct ChannelPresence: Sendable {
    /// One user's connection on one edge run.
    public struct Connection: Sendable, Equatable {
        /// The edge.
        public var edge: String
        /// Its run (the activities' origin; the edge's id for activities without one).
        public var run: String
        /// Joined as, or last turned, a broadcaster.
        public var broadcaster: Bool

        /// A connection.
        public init(edge: String, run: String, broadcaster: Bool) {
            self.edge = edge
            self.run = run
            self.broadcaster = broadcaster
        }
    }

    /// A user whose last connection was on a run that is gone.
    public struct Departure: Sendable, Equatable {
        /// The user.
        public var uid: UInt32
        /// Whether its last connection was a broadcaster's.
        public var broadcaster: Bool
        /// The edge of that connection.
        public var edge: String
    }

    /// Connections kept per channel at most, and taken from a peer's record.
    public static let connectionsKept = 1_000

    /// Per channel, the connections of each present user (almost always one).
    private var channels: [String: [UInt32: [Connection]]] = [:]

    /// Nobody anywhere.
    public init() {}

    /// How many users are present in `channel`.
    public func count(in channel: String) -> Int { channels[channel]?.count ?? 0 }

    /// Takes an activity an edge reported (in the edge's order).
    /// - Returns: Whether it is news for the channel's events: not a join of a user already
    ///   connected on another run, nor a leave of a connection that is not the user's last.
    public mutating func take(_ activity: RoomChannelActivity, edge: String) -> Bool {
        let run = activity.origin.isEmpty ? edge : activity.origin
        var users = channels.removeValue(forKey: activity.channel) ?? [:]
        defer { if !users.isEmpty { channels[activity.channel] = users } }
        switch activity.type {
        case .broadcasterJoined, .audienceJoined:
            var connections = users[activity.uid] ?? []
            let wasPresent = !connections.isEmpty
            let broadcaster = activity.type == .broadcasterJoined
            if let index = connections.firstIndex(where: { $0.run == run }) {
                connections[index].broadcaster = broadcaster
            } else if users.values.reduce(0, { $0 + $1.count }) < Self.connectionsKept {
                connections.append(Connection(edge: edge, run: run, broadcaster: broadcaster))
            }
            users[activity.uid] = connections.isEmpty ? nil : connections
            return !wasPresent
        case .broadcasterLeft, .audienceLeft:
            guard var connections = users[activity.uid] else { return true }
            guard let index = connections.firstIndex(where: { $0.run == run }) else { return false }  // connected elsewhere only
            connections.remove(at: index)
            users[activity.uid] = connections.isEmpty ? nil : connections
            return connections.isEmpty
        case .roleToBroadcaster, .roleToAudience:
            if let index = users[activity.uid]?.firstIndex(where: { $0.run == run }) {
                users[activity.uid]?[index].broadcaster = activity.type == .roleToBroadcaster
            }
            return true
        case .channelDestroyed:
            Self.remove(&users) { $0.run == run }
            // Users still connected on another edge: the channel moved there, and this edge's end
            // of it (reported late, after the coordinator forgot where it was placed during a
            // partition, say) is not the channel's.
            return !users.values.contains { $0.contains { $0.edge != edge } }
        default:
            return true
        }
    }

    /// The channels with a connection on a run that `isGone` (edge, run).
    public func channels(withConnectionsOn isGone: (_ edge: String, _ run: String) -> Bool) -> [String] {
        channels.filter { $0.value.values.contains { $0.contains { isGone($0.edge, $0.run) } } }.keys.sorted()
    }

    /// Takes out of `channel` the connections on runs that `isGone` (edge, run).
    /// - Returns: The users left with no connection, by uid: their leaves are news.
    public mutating func depart(from channel: String, isGone: (_ edge: String, _ run: String) -> Bool) -> [Departure] {
        guard var users = channels.removeValue(forKey: channel) else { return [] }
        var departed: [Departure] = []
        for uid in users.keys.sorted() {
            let connections = users[uid] ?? []
            let kept = connections.filter { !isGone($0.edge, $0.run) }
            guard kept.count < connections.count else { continue }
            if kept.isEmpty, let last = connections.last {
                departed.append(Departure(uid: uid, broadcaster: last.broadcaster, edge: last.edge))
            }
            users[uid] = kept.isEmpty ? nil : kept
        }
        if !users.isEmpty { channels[channel] = users }
        return departed
    }

    /// Who is in `channel`, one entry per connection, by uid then run: what its record carries.
    public func entries(of channel: String) -> [RoomChannelPresentUser] {
        guard let users = channels[channel] else { return [] }
        return users.keys.sorted().flatMap { uid in
            (users[uid] ?? []).sorted { $0.run < $1.run }.map { connection in
                RoomChannelPresentUser.with {
                    $0.uid = uid
                    $0.edge = connection.edge
                    $0.run = connection.run
                    $0.broadcaster = connection.broadcaster
                }
            }
        }
    }

    /// Who is in `channel` becomes `entries` (a record that won a merge): the first
    /// ``connectionsKept``, each (uid, run) once, none without an edge and a run.
    public mutating func replace(_ channel: String, with entries: [RoomChannelPresentUser]) {
        var users: [UInt32: [Connection]] = [:]
        var taken = 0
        for entry in entries where !entry.edge.isEmpty && !entry.run.isEmpty && taken < Self.connectionsKept {
            guard users[entry.uid]?.contains(where: { $0.run == entry.run }) != true else { continue }
            users[entry.uid, default: []].append(Connection(edge: entry.edge, run: entry.run, broadcaster: entry.broadcaster))
            taken += 1
        }
        channels[channel] = users.isEmpty ? nil : users
    }

    /// Forgets a channel (its numbers are pruned).
    public mutating func forget(channel: String) {
        channels[channel] = nil
    }

    /// Removes the connections that `gone` from every user, and the users left without one.
    private static func remove(_ users: inout [UInt32: [Connection]], where gone: (Connection) -> Bool) {
        for (uid, connections) in users where connections.contains(where: gone) {
            let rest = connections.filter { !gone($0) }
            users[uid] = rest.isEmpty ? nil : rest
        }
    }
}
