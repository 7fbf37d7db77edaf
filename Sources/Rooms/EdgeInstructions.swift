import ShowroomWire

/// A PK forward a room's owner has an edge run: the room's host (`uid`, publishing in `channel`
/// on `edge`) sent into the peer room's channel (`destination`).
public struct PKForward: Sendable, Equatable {
    /// The edge hosting the room's channel, which runs the forward.
    public var edge: String
    /// The room's channel.
    public var channel: String
    /// The room's host.
    public var uid: UInt32
    /// The peer room's channel.
    public var destination: String

    /// A forward of `uid` from `channel` on `edge` into `destination`.
    public init(edge: String, channel: String, uid: UInt32, destination: String) {
        self.edge = edge
        self.channel = channel
        self.uid = uid
        self.destination = destination
    }
}

/// What a coordinator tells the edges about the rooms it owns, as a pure value: each room's stage
/// (who may publish in its channel), sent when it changes and all of them now and then so an edge
/// that started since (or missed one) catches up; and the PK forwards that carry a host's media
/// into the peer's channel, started and stopped as PKs begin and end. The shell sends what this
/// returns and reports back which forwards an edge started.
public struct EdgeInstructions: Sendable, Equatable {
    /// What an edge was last sent of a channel's stage.
    struct SentStage: Equatable {
        var uids: [UInt32]
        var removed: Bool
    }

    /// What each room's channel's stage was last sent as, by channel.
    private var sentStages: [String: SentStage] = [:]
    /// Ticks since every stage was last sent.
    private var ticksSinceRefresh = 0
    /// Every stage goes to every edge this often, in ticks.
    public let refreshTicks: Int
    /// The PK forwards edges were told to run, by the room whose host is forwarded.
    public private(set) var forwards: [String: PKForward] = [:]

    /// Instructions refreshed every `refreshTicks` ticks.
    public init(refreshTicks: Int = 5) {
        self.refreshTicks = max(1, refreshTicks)
    }

    /// How many channels' stages were sent.
    public var stagesSent: Int { sentStages.count }

    /// The stage of a room as edges get it.
    public static func stage(of room: RoomRoom) -> RoomStage {
        RoomStage.with {
            $0.channel = room.channel
            $0.roomID = room.roomID
            $0.uids = RoomRegistry.stage(of: room)
            $0.version = room.version
            $0.removed = room.state != .open
        }
    }

    /// The stages to send of the rooms among `rooms` that this coordinator `owns`: those whose
    /// stage changed since it was last sent (`onlyChanged`), or all of them.
    public mutating func stages(of rooms: some Sequence<RoomRoom>, onlyChanged: Bool,
                                owns: (String) -> Bool) -> [RoomStage] {
        var stages: [RoomStage] = []
        for room in rooms where owns(room.roomID) {
            let stage = Self.stage(of: room)
            let sent = SentStage(uids: stage.uids, removed: stage.removed)
            if onlyChanged, sentStages[room.channel] == sent { continue }
            sentStages[room.channel] = sent
            stages.append(stage)
        }
        return stages
    }

    /// One tick passed: true when every stage is due to be sent again.
    public mutating func tick() -> Bool {
        ticksSinceRefresh += 1
        guard ticksSinceRefresh >= refreshTicks else { return false }
        ticksSinceRefresh = 0
        return true
    }

    /// A channel is told no more (its room was purged, or is held here no longer).
    public mutating func forgetStage(of channel: String) {
        sentStages[channel] = nil
    }

    /// The forwards `rooms` need: each open room this coordinator owns that is in a PK with media
    /// mode forward, whose channel `origin` places on an edge.
    public static func wantedForwards(of rooms: some Sequence<RoomRoom>, owns: (String) -> Bool,
                                      origin: (String) -> String?) -> [String: PKForward] {
        var wanted: [String: PKForward] = [:]
        for room in rooms where room.state == .open && owns(room.roomID) {
            guard room.interaction.kind == .pk, room.interaction.mediaMode == .forward,
                  let edge = origin(room.channel)
            else { continue }
            wanted[room.roomID] = PKForward(edge: edge, channel: room.channel, uid: room.ownerUid,
                                            destination: room.interaction.peerChannel)
        }
        return wanted
    }

    /// What to tell edges so that the forwards running are `wanted`: running ones that differ are
    /// stopped (and forgotten now), wanted ones not running are to be started (and noted once an
    /// edge answers, ``started(_:for:)``). Both in room order.
    public mutating func reconcile(wanted: [String: PKForward]) -> (stop: [PKForward], start: [(roomID: String, forward: PKForward)]) {
        var stop: [PKForward] = []
        for roomID in forwards.keys.sorted() where wanted[roomID] != forwards[roomID] {
            stop.append(forwards.removeValue(forKey: roomID)!)
        }
        let start = wanted.keys.sorted().filter { forwards[$0] != wanted[$0] }.map { ($0, wanted[$0]!) }
        return (stop, start)
    }

    /// An edge started `forward` for `roomID` (or it was already running there).
    public mutating func started(_ forward: PKForward, for roomID: String) {
        forwards[roomID] = forward
    }
}
