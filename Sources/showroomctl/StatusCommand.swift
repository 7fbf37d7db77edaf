import OperatorTools
import ArgumentParser
import Foundation
import NodeRuntime
import Rooms
import ShowroomWire
import ZeroMQ

/// `showroomctl status --seed ADDR`: the cluster as the cluster sees it.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the cluster as one member sees it: members (role, state, address, load), rooms, channels, PKs and co-hosts, calls.")

    @Option(name: .customLong("seed"), help: "A member's cluster endpoint, with the operator's keys in SHOWROOM_KEYRING (repeatable: the first that answers is used). A client endpoint shows the members only.")
    var seeds: [String]

    @Flag(help: "Print one JSON object (with --watch: one per line, for every poll whose view changed).")
    var json = false

    @Flag(help: "Keep watching: poll every --interval seconds and redraw when the view changed (last-heard times and loads change on most polls of a cluster endpoint). Stop with Ctrl-C.")
    var watch = false

    @Option(help: "Seconds between polls with --watch.")
    var interval = 1.0

    @Option(help: "Seconds to wait for an answer.")
    var timeout = 3.0

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed tcp://host:port") }
        guard interval >= 0.1 else { throw ValidationError("--interval must be at least 0.1 s") }
    }

    func run() throws {
        let context = try Context()
        let clients = try seeds.map { try NodeClient(endpoint: $0, context: context, credentials: OperatorKeys.credentials) }
        var previous: String?
        repeat {
            let rendered: String
            do {
                let status = try fetch(from: clients)
                var rooms = roomsAndChannels(status, context: context)
                rooms.calls = calls(status, context: context)
                rendered = json ? try StatusView.json(status, rooms) : StatusView.table(status, rooms)
            } catch {
                guard watch else {
                    FileHandle.standardError.write(Data("showroomctl status: \(error)\n".utf8))
                    throw ExitCode(1)
                }
                // A watcher reading JSON lines gets a JSON line for this too.
                rendered = json ? (try? StatusView.errorJSON("no member answered: \(error)")) ?? "{}" : "no member answered: \(error)"
            }
            if rendered != previous {
                if watch && !json { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                print(rendered)
                if watch { fflush(nil) }  // every stream: a pipe reading the watch gets each view as it comes
                previous = rendered
            }
            if watch { Thread.sleep(forTimeInterval: interval) }  // the poll period of a watch, not a wait for an event
        } while watch
    }

    /// The channels and open rooms, from the first alive coordinator that answers (empty without one).
    private func roomsAndChannels(_ status: AdminClusterStatus, context: Context) -> StatusView.Rooms {
        for member in OperatorLink.coordinators(in: status) {
            guard let client = try? NodeClient(endpoint: member.clusterEndpoint, context: context, credentials: OperatorKeys.credentials) else { continue }
            let wait = Duration.milliseconds(Int(timeout * 1000))
            guard let channels = try? client.request(.channelList, body: RoomListChannelsRequest(),
                                                     expecting: RoomListChannelsResponse.self, timeout: wait)
            else { continue }
            var request = RoomListRoomsRequest()
            request.pageSize = 100
            let rooms = try? client.request(.roomList, body: request, expecting: RoomListRoomsResponse.self, timeout: wait)
            return StatusView.Rooms(channels: RoomChannelStatus.naming(channels.channels, after: rooms?.rooms ?? []),
                                    rooms: rooms?.rooms ?? [], roomTotal: Int(rooms?.total ?? 0),
                                    drainingEdges: Set(channels.drainingEdges))
        }
        return StatusView.Rooms()
    }

    /// The calls every alive call-signal node owns (a node that does not answer is left out).
    private func calls(_ status: AdminClusterStatus, context: Context) -> [SignalCallStatus] {
        status.members.filter { $0.isAlive(as: .callsignal) && !$0.clusterEndpoint.isEmpty }.flatMap { member -> [SignalCallStatus] in
            guard let client = try? NodeClient(endpoint: member.clusterEndpoint, context: context, credentials: OperatorKeys.credentials),
                  let list = try? client.request(.callList, body: SignalCallListRequest(), expecting: SignalCallListResponse.self,
                                                 timeout: .milliseconds(Int(timeout * 1000)))
            else { return [] }
            return list.calls
        }
    }

    private func fetch(from clients: [NodeClient]) throws -> AdminClusterStatus {
        var lastError: Error?
        for client in clients {
            do {
                return try client.request(.clusterStatus, body: AdminClusterStatusRequest(), expecting: AdminClusterStatus.self,
                                          timeout: .milliseconds(Int(timeout * 1000)))
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ShowroomError.unavailable("no seed given")
    }
}

/// How a cluster status is printed, for people and for programs.
enum StatusView {
    static func stateName(_ state: GossipMemberState) -> String {
        switch state {
        case .alive: "alive"
        case .suspect: "suspect"
        case .dead: "dead"
        case .left: "left"
        default: "unknown"
        }
    }

    /// What the coordinators add to the view.
    struct Rooms {
        var channels: [RoomChannelStatus] = []
        var rooms: [RoomRoom] = []
        var roomTotal = 0
        /// The calls the call-signal nodes hold (ended ones for a minute).
        var calls: [SignalCallStatus] = []
        /// The edges that drain: alive, taking nothing new while their clients move away.
        var drainingEdges: Set<String> = []
    }

    /// A member's state, "draining" for an alive edge that drains.
    static func stateName(_ member: AdminMemberStatus, _ extra: Rooms) -> String {
        member.state == .alive && extra.drainingEdges.contains(member.id) ? "draining" : stateName(member.state)
    }

    /// Whether a member's load is only what it last said before it stopped being alive: a suspect,
    /// dead or departed member reports nothing more, and its channels move to other edges.
    static func loadIsStale(_ member: AdminMemberStatus) -> Bool {
        member.state != .alive
    }

    /// The JSON document: `members`, `channels` and `rooms`; `interactions` and `calls` as the cluster
    /// grows them. A member's `incarnation` rises with every change of what it publishes (its load
    /// included), not only with refuted suspicions; `load_stale` marks the load of a member that
    /// is not alive. A channel's `subscribers` counts all its connections, the hosts' own included.
    static func json(_ status: AdminClusterStatus, _ extra: Rooms = Rooms()) throws -> String {
        let members: [[String: Any]] = status.members.map { m in
            [
                "id": m.id, "role": m.role, "state": stateName(m.state), "draining": extra.drainingEdges.contains(m.id),
                "address": m.clusterEndpoint,
                "client_endpoint": m.clientEndpoint, "admin_endpoint": m.adminEndpoint,
                "incarnation": m.incarnation, "version": m.version,
                "load": ["channels": m.load.channels, "connections": m.load.connections, "cpu_percent": m.load.cpuPercent],
                "load_stale": loadIsStale(m),
                "last_heard_ms_ago": m.lastHeardMsAgo,
            ]
        }
        let object: [String: Any] = [
            "reporter": status.reporter,
            "reporter_local_health": status.reporterLocalHealth,
            "members": members,
            "channels": extra.channels.map { c -> [String: Any] in
                ["name": c.name, "edge": c.edge, "publishers": c.publishers, "subscribers": c.subscribers,
                 "room_id": c.roomID, "room_name": c.roomName, "forwards": forwards(c), "origin": c.originEdge,
                 // On the origin's row: the relays pulling the channel from it (one upstream link each).
                 "relays": c.originEdge.isEmpty
                     ? extra.channels.filter { $0.name == c.name && $0.originEdge == c.edge }
                         .map { ["edge": $0.edge, "subscribers": $0.subscribers] as [String: Any] }
                     : [[String: Any]]()]
            },
            "rooms": extra.rooms.map { RoomView.object($0) },
            "interactions": interactions(extra),
            "calls": extra.calls.map { c -> [String: Any] in
                ["call_id": c.callID, "caller": c.caller, "callee": c.callee, "type": c.type == .audio ? "audio" : "video",
                 "state": c.phase, "channel": c.channel, "edge": edge(of: c.channel, in: extra.channels), "node": c.nodeID,
                 "age_ms": max(0, Int64(Date().timeIntervalSince1970 * 1000) - c.startedAtMs), "end_reason": c.endReason]
            },
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// `{"error": message}`: what `--json --watch` prints while no member answers.
    static func errorJSON(_ message: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["error": message], options: [.sortedKeys]), as: UTF8.self)
    }

    /// The rooms' PKs (one entry per pair: rooms, hosts, media mode, the forward each way with its
    /// state, since when) and co-hosting (the co-hosts per room).
    static func interactions(_ extra: Rooms) -> [[String: Any]] {
        let byID = Dictionary(extra.rooms.map { ($0.roomID, $0) }) { first, _ in first }
        var entries: [[String: Any]] = []
        for room in extra.rooms.sorted(by: { $0.roomID < $1.roomID }) {
            let interaction = room.interaction
            switch interaction.kind {
            case .pk where byID[interaction.peerRoomID] == nil || room.roomID < interaction.peerRoomID:
                let forward = interaction.mediaMode == .forward
                entries.append([
                    "kind": "pk", "id": interaction.id, "rooms": [room.roomID, interaction.peerRoomID],
                    "hosts": [room.ownerUid, interaction.peerUid], "media_mode": forward ? "forward" : "subscribe",
                    "since_ms": interaction.sinceMs, "ends_at_ms": interaction.endsAtMs,
                    "forwarding": forward ? [
                        "\(room.channel)>\(interaction.peerChannel)": forwardState(room.ownerUid, from: room.channel, to: interaction.peerChannel, extra.channels),
                        "\(interaction.peerChannel)>\(room.channel)": forwardState(interaction.peerUid, from: interaction.peerChannel, to: room.channel, extra.channels),
                    ] : [:],
                ])
            case .cohost:
                entries.append([
                    "kind": "cohost", "room": room.roomID, "host": room.ownerUid, "since_ms": interaction.sinceMs,
                    "cohosts": interaction.seats.map { ["uid": $0.uid, "seat_id": $0.id, "since_ms": $0.sinceMs] as [String: Any] },
                ])
            default:
                continue
            }
        }
        return entries
    }

    /// The state of the forward of `uid` from channel `from` into `to`, as the source's edge reports it.
    static func forwardState(_ uid: UInt32, from: String, to: String, _ channels: [RoomChannelStatus]) -> String {
        guard let publisher = channels.first(where: { $0.name == from })?.forwardedPublishers.first(where: { $0.uid == uid }),
              let destination = publisher.destinations.first(where: { $0.channel == to })
        else { return "none" }
        let state = switch destination.state {
        case .idle: "idle"
        case .connecting: "connecting"
        case .running: "running"
        case .failure: "failure"
        default: "unknown"
        }
        return publisher.paused ? "\(state) (paused)" : state
    }

    /// A channel's forwarded publishers, for people: `uid>destination:state`.
    static func forwards(_ channel: RoomChannelStatus) -> String {
        channel.forwardedPublishers.flatMap { publisher in
            publisher.destinations.map { "\(publisher.uid)>\($0.channel):\(forwardState(publisher.uid, from: channel.name, to: $0.channel, [channel]))" }
        }.joined(separator: ",")
    }

    /// The edge hosting `channel`, if an edge reported it.
    static func edge(of channel: String, in channels: [RoomChannelStatus]) -> String {
        channels.first { $0.name == channel }?.edge ?? ""
    }

    /// The human table. The incarnation is left out: it rises with every load change, which reads
    /// like a run of refuted suspicions (`--json` has it).
    static func table(_ status: AdminClusterStatus, _ extra: Rooms = Rooms()) -> String {
        let counts = Dictionary(grouping: status.members, by: { stateName($0.state) }).mapValues(\.count)
        let summary = ["alive", "suspect", "dead", "left"].compactMap { s in counts[s].map { "\($0) \(s)" } }.joined(separator: ", ")
        var rows = [["ID", "ROLE", "STATE", "ADDRESS", "CHANNELS", "CONNS", "CPU", "LAST HEARD"]]
        for m in status.members {
            let load = ["\(m.load.channels)", "\(m.load.connections)", String(format: "%.1f%%", m.load.cpuPercent)]
            rows.append([m.id, m.role, stateName(m, extra), m.clusterEndpoint]
                + (loadIsStale(m) ? load.map { "(\($0))" } : load)
                + [m.id == status.reporter ? "-" : lastHeard(m.lastHeardMsAgo)])
        }
        var text = ["members as seen by \(status.reporter): \(status.members.count) (\(summary))"] + layout(rows)
        // A client face names no cluster endpoints, and rooms, channels and calls are asked there.
        if !status.members.isEmpty && status.members.allSatisfy({ $0.clusterEndpoint.isEmpty }) {
            text.append("(members only: rooms, channels and calls need a cluster endpoint as --seed, with SHOWROOM_KEYRING)")
        }
        if status.members.contains(where: loadIsStale) {
            text.append("(n): what a member reported before it stopped being alive, no longer current (an edge's channels move elsewhere)")
        }
        if !extra.rooms.isEmpty || extra.roomTotal > 0 {
            text.append("")
            text.append("rooms: \(extra.roomTotal) open")
            var roomRows = [["ROOM", "NAME", "OWNER", "AUDIENCE", "CHANNEL", "INTERACTION"]]
            for room in extra.rooms {
                roomRows.append([room.roomID, room.name, "\(room.ownerUid)", "\(room.audienceCount)", room.channel,
                                 RoomView.interaction(room)])
            }
            text += layout(roomRows)
        }
        if !extra.channels.isEmpty {
            text.append("")
            text.append("channels: \(extra.channels.count)")
            var channelRows = [["CHANNEL", "EDGE", "ROOM", "PUBLISHERS", "CONNECTIONS", "FORWARDS"]]
            for c in extra.channels {
                let forwards = forwards(c)
                channelRows.append([c.name, c.originEdge.isEmpty ? c.edge : "\(c.edge) (relay of \(c.originEdge))",
                                    c.roomName.isEmpty ? "-" : c.roomName,
                                    c.publishers.map(String.init).joined(separator: ","), "\(c.subscribers)",
                                    forwards.isEmpty ? "-" : forwards])
            }
            text += layout(channelRows)
            // The two counts differ by design: a host is a channel connection but not its room's audience.
            text.append("CONNECTIONS: everyone connected to the channel on its edge, hosts included"
                + (extra.rooms.isEmpty ? "" : "; a room's AUDIENCE: the users who joined the room"))
        }
        let interactions = interactions(extra)
        if !interactions.isEmpty {
            text.append("")
            text.append("interactions: \(interactions.count)")
            var rows = [["KIND", "ROOMS", "HOSTS", "MODE", "FORWARDING", "SINCE"]]
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for entry in interactions {
                let since = String(format: "%.1f s", Double(max(0, now - (entry["since_ms"] as? Int64 ?? now))) / 1000)
                if entry["kind"] as? String == "pk" {
                    let forwarding = (entry["forwarding"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }
                        .map { "\($0.key) \($0.value)" }.joined(separator: "; ")
                    rows.append(["pk", (entry["rooms"] as? [String] ?? []).joined(separator: " vs "),
                                 (entry["hosts"] as? [UInt32] ?? []).map(String.init).joined(separator: " vs "),
                                 entry["media_mode"] as? String ?? "", forwarding.isEmpty ? "-" : forwarding, since])
                } else {
                    let cohosts = (entry["cohosts"] as? [[String: Any]] ?? []).compactMap { $0["uid"] as? UInt32 }
                    rows.append(["cohost", entry["room"] as? String ?? "", "\(entry["host"] as? UInt32 ?? 0) + "
                                 + cohosts.map(String.init).joined(separator: ","), "-", "-", since])
                }
            }
            text += layout(rows)
        }
        if !extra.calls.isEmpty {
            text.append("")
            text.append("calls: \(extra.calls.filter { $0.phase != "ended" }.count) going on, \(extra.calls.filter { $0.phase == "ended" }.count) ended in the last minute")
            var callRows = [["CALL", "CALLER", "CALLEE", "STATE", "CHANNEL", "EDGE", "NODE", "AGE"]]
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for c in extra.calls {
                callRows.append([c.callID, "\(c.caller)", "\(c.callee)", c.phase + (c.endReason.isEmpty ? "" : " (\(c.endReason))"),
                                 c.channel, edge(of: c.channel, in: extra.channels).isEmpty ? "-" : edge(of: c.channel, in: extra.channels),
                                 c.nodeID, String(format: "%.1f s", Double(max(0, now - c.startedAtMs)) / 1000)])
            }
            text += layout(callRows)
        }
        return text.joined(separator: "\n")
    }

    private static func layout(_ rows: [[String]]) -> [String] {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
    }

    private static func lastHeard(_ ms: UInt64) -> String {
        ms < 1000 ? "\(ms) ms ago" : String(format: "%.1f s ago", Double(ms) / 1000)
    }
}
