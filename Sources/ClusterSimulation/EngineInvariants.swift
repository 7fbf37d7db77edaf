import Edge
import ShowroomWire

/// The checks of what the apps see, after every fault healed and the cluster settled: each open
/// room's host is on air, each viewer in a room's channel decodes that host and sees who is on
/// its edge's stage (the evening's "right people seen"), apps and edges agree on who is
/// connected where, and the coordinators' channel events agree with what the edges host.
/// They read plain values (``Snapshot``), so that a test can hand them a wrong state.
enum EngineInvariants {
    /// A room's host as its app holds it.
    struct Host: Equatable {
        var roomID: String
        var edge: String?
        var joined: Bool
        var publishes: Bool
    }

    /// One channel connection of an app, joined (not rejoining or moving).
    struct Connection: Hashable {
        var app: String
        var uid: UInt32
        var channel: String
        var edge: String
        /// The remote users the app was told are in the channel.
        var remoteUsers: Set<UInt32>
        /// When the host's last video frame arrived (run milliseconds) and what it carried.
        var hostVideoAtMs: Int64?
        var hostPayload: String?
    }

    /// One channel as an edge hosts it.
    struct EdgeChannel: Equatable {
        var edge: String
        var channel: String
        var broadcasters: Set<UInt32>
        var audience: Set<UInt32>
    }

    struct Snapshot {
        var nowMs: Int64
        /// The hosts of rooms whose close was not acknowledged.
        var hosts: [Host]
        var connections: [Connection]
        var edgeChannels: [EdgeChannel]
        var events: [PublishedEvent]
        /// Channels an edge hosted when its process was killed: their users that were on it
        /// left without an event (no edge was left to report it).
        var channelsOfKilledEdges: Set<String>
        /// Each edge's channel activities the coordinators have not taken yet: what a failure of
        /// the events check is read with.
        var unreported: [String: Int] = [:]
    }

    /// How recent the host's last frame must be: a few frame intervals.
    static let showWithinMs: Int64 = 2_000

    static func check(_ snapshot: Snapshot) -> [Violation] {
        var violations: [Violation] = []
        let onAir = Dictionary(snapshot.hosts.filter { $0.joined && $0.publishes }.map { ($0.roomID, $0) }, uniquingKeysWith: { a, _ in a })
        for host in snapshot.hosts where !(host.joined && host.publishes) {
            violations.append(Violation(rule: "host off air", detail:
                "\(host.roomID)'s host is \(host.joined ? "joined without publishing" : "not joined") (edge \(host.edge ?? "none"))"))
        }
        var hosted: [String: EdgeChannel] = [:]
        for channel in snapshot.edgeChannels { hosted["\(channel.edge)|\(channel.channel)"] = channel }
        for connection in snapshot.connections {
            let at = hosted["\(connection.edge)|\(connection.channel)"]
            let present = at.map { $0.broadcasters.contains(connection.uid) || $0.audience.contains(connection.uid) } ?? false
            if !present {
                violations.append(Violation(rule: "app connection not at its edge", detail:
                    "\(connection.app) holds \(connection.channel) on \(connection.edge), which does not have uid \(connection.uid) there"))
            }
            // Who an app is told is in the channel: the others publishing on its edge.
            let expectedPeople = (at?.broadcasters ?? []).subtracting([connection.uid])
            if present, connection.remoteUsers != expectedPeople {
                violations.append(Violation(rule: "app sees the wrong people", detail:
                    "\(connection.app) in \(connection.channel) sees \(connection.remoteUsers.sorted()), \(connection.edge) has \(expectedPeople.sorted()) on stage"))
            }
            guard let host = onAir[connection.channel], connection.uid != EngineWorkload.hostUID else { continue }
            if host.edge != connection.edge {
                violations.append(Violation(rule: "viewer not where its host is", detail:
                    "\(connection.app) watches \(connection.channel) on \(connection.edge), its host publishes on \(host.edge ?? "none")"))
            }
            let fresh = connection.hostVideoAtMs.map { snapshot.nowMs - $0 <= showWithinMs } ?? false
            if !fresh || connection.hostPayload?.hasPrefix("\(connection.channel)/\(EngineWorkload.hostUID)/") != true {
                violations.append(Violation(rule: "viewer misses the show", detail:
                    "\(connection.app) in \(connection.channel): last host frame \(connection.hostVideoAtMs.map { "\(snapshot.nowMs - $0) ms ago" } ?? "never") \(connection.hostPayload ?? "")"))
            }
        }
        let held = Set(snapshot.connections.map { "\($0.edge)|\($0.channel)|\($0.uid)" })
        for channel in snapshot.edgeChannels {
            for uid in channel.broadcasters.union(channel.audience).sorted() where !held.contains("\(channel.edge)|\(channel.channel)|\(uid)") {
                violations.append(Violation(rule: "edge connection no app holds", detail: "\(channel.edge) has uid \(uid) in \(channel.channel)"))
            }
        }
        violations += events(snapshot)
        return violations
    }

    /// The channel events, folded in number order per channel (each series after the one before),
    /// name exactly the users the edges have connected.
    static func events(_ snapshot: Snapshot) -> [Violation] {
        var seen: Set<String> = []
        var byChannel: [String: [PublishedEvent]] = [:]
        for event in snapshot.events where seen.insert("\(event.channel)/\(event.series)-\(event.sequence)").inserted {
            byChannel[event.channel, default: []].append(event)
        }
        var announced: [String: Set<UInt32>] = [:]
        for (channel, events) in byChannel {
            var present: Set<UInt32> = []
            for event in events.sorted(by: { ($0.series, $0.sequence) < ($1.series, $1.sequence) }) {
                switch event.type {
                case .broadcasterJoined, .audienceJoined, .roleToBroadcaster, .roleToAudience: present.insert(event.uid)
                case .broadcasterLeft, .audienceLeft: present.remove(event.uid)
                case .channelDestroyed: present = []
                default: break
                }
            }
            announced[channel] = present
        }
        var connected: [String: Set<UInt32>] = [:]
        for channel in snapshot.edgeChannels {
            connected[channel.channel, default: []].formUnion(channel.broadcasters.union(channel.audience))
        }
        var violations: [Violation] = []
        let pending = snapshot.unreported.keys.sorted().map { "\($0) \(snapshot.unreported[$0]!)" }.joined(separator: ", ")
        for channel in Set(announced.keys).union(connected.keys).sorted() {
            let there = connected[channel] ?? []
            let said = announced[channel] ?? []
            let missing = there.subtracting(said)
            if !missing.isEmpty {
                violations.append(Violation(rule: "channel events miss a connection", detail:
                    "\(channel): uids \(missing.sorted()) are connected, the events say \(said.sorted()) (activities not taken: \(pending))"))
            }
            let gone = said.subtracting(there)
            if !gone.isEmpty, !snapshot.channelsOfKilledEdges.contains(channel) {
                violations.append(Violation(rule: "channel events keep a user who left", detail:
                    "\(channel): the events say \(said.sorted()), the edges have \(there.sorted()) (activities not taken: \(pending))"))
            }
        }
        return violations
    }
}

extension EngineInvariants.Snapshot {
    /// What the run's apps and edges hold now.
    init(cluster: SimulatedCluster, engines: EngineWorkload, channelsOfKilledEdges: Set<String>) {
        nowMs = cluster.network.now
        hosts = engines.hosts.keys.sorted().filter { !engines.closedRooms.contains($0) }.map { roomID in
            let engine = engines.hosts[roomID]!
            return EngineInvariants.Host(roomID: roomID, edge: engine.shell.edge(of: roomID),
                                         joined: engine.shell.joinedChannels.contains(roomID), publishes: engine.shell.publishes(roomID))
        }
        let apps = engines.hosts.keys.sorted().map { engines.hosts[$0]! } + engines.viewers.keys.sorted().map { engines.viewers[$0]! }
        connections = apps.flatMap { app in
            app.shell.joinedChannels.compactMap { channel -> EngineInvariants.Connection? in
                guard let edge = app.shell.edge(of: channel) else { return nil }
                let video = app.video[channel]?[EngineWorkload.hostUID]
                return EngineInvariants.Connection(
                    app: app.id, uid: app.uid, channel: channel, edge: edge, remoteUsers: app.remoteUsers[channel] ?? [],
                    hostVideoAtMs: video?.lastAtMs,
                    hostPayload: video.map { String(decoding: $0.lastPayload, as: UTF8.self) })
            }
        }
        edgeChannels = cluster.edgeIDs.flatMap { id -> [EngineInvariants.EdgeChannel] in
            guard let edge = cluster.edges[id] else { return [] }
            return edge.channelNames.compactMap { name in
                edge.channel(name).map {
                    EngineInvariants.EdgeChannel(edge: id, channel: name, broadcasters: Set($0.broadcasters), audience: Set($0.audience))
                }
            }
        }
        events = cluster.published
        unreported = cluster.edges.mapValues(\.pendingActivities)
        self.channelsOfKilledEdges = channelsOfKilledEdges
    }
}
