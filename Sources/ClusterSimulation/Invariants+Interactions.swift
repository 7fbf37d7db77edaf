import Routing
import ShowroomWire

extension Invariants {
    /// The PK and co-host checks, once every fault healed and the cluster settled (`rooms`: each
    /// room as its owner holds it, nil for none; `successors`: as its successor does; `nowMs`: the
    /// true time, which every node's clock is within a few seconds of):
    /// - a room acknowledged created is at its owner, and its successor holds the same record;
    /// - a room is in one interaction at a time: a PK room seats no co-host, a co-hosting room has
    ///   a seat, and no PK start is left half done (an intent expires on its owner's clock);
    /// - a PK is mutual: if room A is in PK X with B, B is open and in PK X with A;
    /// - no pending request outlives its expiry (by more than the clocks' skew).
    static func interactions(rooms: [String: RoomRoom?], successors: [String: RoomRoom?], nowMs: Int64,
                             skewMs: Int64) -> [Violation] {
        var violations: [Violation] = []
        for roomID in rooms.keys.sorted() {
            guard let held = rooms[roomID], let room = held else {
                violations.append(Violation(rule: "acknowledged room lost", detail: "\(roomID) is not at its owner"))
                continue
            }
            if let successor = successors[roomID], successor != room {
                violations.append(Violation(rule: "owner and successor differ", detail:
                    "\(roomID): owner v\(room.version), successor \(successor.map { "v\($0.version)" } ?? "none")"))
            }
            guard room.state == .open else { continue }
            let interaction = room.interaction
            switch interaction.kind {
            case .pk:
                if !interaction.seats.isEmpty {
                    violations.append(Violation(rule: "room in two interactions", detail: "\(roomID) is in PK \(interaction.id) with co-hosts seated"))
                }
                let peer = rooms[interaction.peerRoomID] ?? nil
                if peer?.state != .open || peer?.interaction.kind != .pk || peer?.interaction.id != interaction.id
                    || peer?.interaction.peerRoomID != roomID {
                    violations.append(Violation(rule: "PK one-sided", detail:
                        "\(roomID) is in PK \(interaction.id) with \(interaction.peerRoomID), which is "
                            + (peer.map { "\($0.state) in \($0.interaction.kind) \($0.interaction.id) with '\($0.interaction.peerRoomID)'" } ?? "not held")))
                }
            case .cohost:
                if interaction.seats.isEmpty || !interaction.peerRoomID.isEmpty {
                    violations.append(Violation(rule: "room in two interactions", detail:
                        "\(roomID) co-hosts with \(interaction.seats.count) seats, peer '\(interaction.peerRoomID)'"))
                }
            default:
                if !interaction.seats.isEmpty {
                    violations.append(Violation(rule: "room in two interactions", detail: "\(roomID) is \(interaction.kind) with co-hosts seated"))
                }
            }
            if room.hasPkIntent {
                violations.append(Violation(rule: "PK start left half done", detail:
                    "\(roomID) still holds the intent of PK \(room.pkIntent.id) with \(room.pkIntent.peerRoomID)"))
            }
            for request in room.pending where request.expiresAtMs + skewMs < nowMs {
                violations.append(Violation(rule: "pending request outlived its expiry", detail:
                    "\(roomID) holds \(request.kind) \(request.id), expired at \(request.expiresAtMs), now \(nowMs)"))
            }
        }
        return violations
    }

    /// The rooms of `roomIDs` as their owners and successors hold them, for ``interactions(rooms:successors:nowMs:skewMs:)``.
    static func roomsAtHolders(_ roomIDs: [String], _ cluster: SimulatedCluster) -> (rooms: [String: RoomRoom?], successors: [String: RoomRoom?]) {
        let ring = OwnerRing(.coordinator, memberIDs: cluster.coordinatorIDs)
        var rooms: [String: RoomRoom?] = [:]
        var successors: [String: RoomRoom?] = [:]
        for roomID in roomIDs {
            let holders = ring.holders(of: roomID, count: 2)
            rooms[roomID] = .some(cluster.room(roomID, at: holders[0]))
            if holders.count > 1 { successors[roomID] = .some(cluster.room(roomID, at: holders[1])) }
        }
        return (rooms, successors)
    }
}
