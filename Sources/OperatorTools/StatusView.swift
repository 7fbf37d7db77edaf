import Foundation
import ShowroomWire

/// How a cluster status is printed, for people and for programs: `showroomctl status` and the
/// server API's cluster view print the same data.
public enum StatusView {
    /// A membership state's name: alive, suspect, dead, left.
    public static func stateName(_ state: GossipMemberState) -> String {
        switch state {
        case .alive: "alive"
        case .suspect: "suspect"
        case .dead: "dead"
        case .left: "left"
        default: "unknown"
        }
    }

    /// What the coordinators add to the view.
    public struct Rooms: Sendable {
        /// The channels the edges reported, one entry per (channel, edge), named after their rooms.
        public var channels: [RoomChannelStatus]
        /// The open rooms (a page of them).
        public var rooms: [RoomRoom]
        /// Open rooms in all.
        public var roomTotal: Int
        /// The calls the call-signal nodes hold (ended ones for a minute).
        public var calls: [SignalCallStatus]
        /// The edges that drain: alive, taking nothing new while their clients move away.
        public var drainingEdges: Set<String>

        /// What the coordinators and call-signal nodes add to the view; nothing by default.
        public init(channels: [RoomChannelStatus] = [], rooms: [RoomRoom] = [], roomTotal: Int = 0,
                    calls: [SignalCallStatus] = [], drainingEdges: Set<String> = []) {
            self.channels = channels
            self.rooms = rooms
            self.roomTotal = roomTotal
            self.calls = calls
            self.drainingEdges = drainingEdges
        }
    }

    /// A member's state, "draining" for an alive edge that drains.
    public static func stateName(_ member: AdminMemberStatus, _ extra: Rooms) -> String {
        member.state == .alive && extra.drainingEdges.contains(member.id) ? "draining" : stateName(member.state)
    }

    /// Whether a member's load is only what it last said before it stopped being alive: a suspect,
    /// dead or departed member reports nothing more, and its channels move to other edges.
    public static func loadIsStale(_ member: AdminMemberStatus) -> Bool {
        member.state != .alive
    }

    /// The JSON document: `members`, `channels` and `rooms`; `interactions` and `calls` as the cluster
    /// grows them. A member's `incarnation` rises with every change of what it publishes (its load
    /// included), not only with refuted suspicions; `load_stale` marks the load of a member that
    /// is not alive. A channel's `subscribers` counts all its connections, the hosts' own included.
    public static func json(_ status: AdminClusterStatus, _ extra: Rooms = Rooms()) throws -> String {
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
                 "recording": c.recording,
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
    public static func errorJSON(_ message: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["error": message], options: [.sortedKeys]), as: UTF8.self)
    }

    /// The rooms' PKs (one entry per pair: rooms, hosts, media mode, the forward each way with its
    /// state, since when) and co-hosting (the co-hosts per room).
    public static func interactions(_ extra: Rooms) -> [[String: Any]] {
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
    public static func forwardState(_ uid: UInt32, from: String, to: String, _ channels: [RoomChannelStatus]) -> String {
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
    public static func forwards(_ channel: RoomChannelStatus) -> String {
        channel.forwardedPublishers.flatMap { publisher in
            publisher.destinations.map { "\(publisher.uid)>\($0.channel):\(forwardState(publisher.uid, from: channel.name, to: $0.channel, [channel]))" }
        }.joined(separator: ",")
    }

    /// The edge hosting `channel`, if an edge reported it.
    public static func edge(of channel: String, in channels: [RoomChannelStatus]) -> String {
        channels.first { $0.name == channel }?.edge ?? ""
    }

    /// The human table. The incarnation is left out: it rises with every load change, which reads
    /// like a run of refuted suspicions (`--json` has it).
    public static func table(_ status: AdminClusterStatus, _ extra: Rooms = Rooms()) -> String {
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
            var channelRows = [["CHANNEL", "EDGE", "ROOM", "PUBLISHERS", "CONNECTIONS", "FORWARDS", "RECORDING"]]
            for c in extra.channels {
                let forwards = forwards(c)
                channelRows.append([c.name, c.originEdge.isEmpty ? c.edge : "\(c.edge) (relay of \(c.originEdge))",
                                    c.roomName.isEmpty ? "-" : c.roomName,
                                    c.publishers.map(String.init).joined(separator: ","), "\(c.subscribers)",
                                    forwards.isEmpty ? "-" : forwards,
                                    c.recording.isEmpty ? "-" : c.recording.map(String.init).joined(separator: ",")])
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

/// How rooms are printed.
public enum RoomView {
    public static func object(_ room: RoomRoom) -> [String: Any] {
        [
            "roomId": room.roomID, "name": room.name, "ownerUid": room.ownerUid, "ownerName": room.ownerName,
            "ownerAvatar": room.ownerAvatar, "createdAtMs": room.createdAtMs, "audienceCount": room.audienceCount,
            "channel": room.channel, "expiresAtMs": room.expiresAtMs, "state": state(room),
            "closeReason": closeReason(room), "version": room.version, "interaction": interaction(room),
            "interactionId": room.interaction.id, "peerRoomId": room.interaction.peerRoomID,
            "cohosts": room.interaction.seats.map { ["uid": $0.uid, "seatId": $0.id] as [String: Any] },
            "pending": room.pending.map(requestObject),
        ]
    }

    /// A pending request (PK invitation, co-host application or invitation).
    public static func requestObject(_ request: RoomRoomPendingRequest) -> [String: Any] {
        let kind = switch request.kind {
        case .pkInvitation: "pk_invitation"
        case .cohostApplication: "cohost_application"
        case .cohostInvitation: "cohost_invitation"
        default: "unknown"
        }
        return ["id": request.id, "kind": kind, "fromRoomId": request.fromRoomID, "fromUid": request.fromUid,
                "toRoomId": request.toRoomID, "toUid": request.toUid, "expiresAtMs": request.expiresAtMs]
    }

    /// `idle`; `call <call id>` while the host is in a 1v1 call; `pk <peer room>`; `cohost <uids>`.
    public static func interaction(_ room: RoomRoom) -> String {
        switch room.interaction.kind {
        case .call: "call \(room.interaction.id)"
        case .pk: "pk \(room.interaction.peerRoomID)"
        case .cohost: "cohost \(room.interaction.seats.map { String($0.uid) }.joined(separator: ","))"
        default: "idle"
        }
    }

    public static func json(_ room: RoomRoom) -> String {
        (try? JSONSerialization.data(withJSONObject: object(room), options: [.sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// One line; a co-hosted room's seats as `seats=UID:SEAT_ID,…` (what `cohost stop --seat` takes).
    public static func line(_ room: RoomRoom) -> String {
        let seats = room.interaction.kind == .cohost
            ? "  seats=" + room.interaction.seats.map { "\($0.uid):\($0.id)" }.joined(separator: ",") : ""
        return "\(room.roomID)  \(room.name)  owner=\(room.ownerUid)  audience=\(room.audienceCount)  channel=\(room.channel)  \(interaction(room))\(seats)  \(state(room))\(room.state == .closed ? " (\(closeReason(room)))" : "")"
    }

    public static func state(_ room: RoomRoom) -> String { room.state == .closed ? "closed" : "open" }

    public static func closeReason(_ room: RoomRoom) -> String {
        switch room.closeReason {
        case .ownerClosed: "owner_closed"
        case .expired: "expired"
        case .ownerOffline: "owner_offline"
        case .adminClosed: "admin_closed"
        default: ""
        }
    }
}
