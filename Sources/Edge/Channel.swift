/// One channel hosted by the edge, as ``ChannelPlane`` keeps it: its connections and its tracks.
struct Channel<Frame> {
    let name: String
    let createdAt: Duration
    var connections: [SessionID: ChannelMembership] = [:]
    /// Sessions in join order: events go out in this order, deterministically.
    var order: [SessionID] = []
    var sessionByUID: [UInt32: SessionID] = [:]
    var broadcasters = 0
    var tracks: [TrackKey: TrackForwarder<Frame>] = [:]
    var volume = VolumeMeter()
    /// Its creation was reported (``ChannelActivity/Kind/channelCreated``): a join succeeded. A
    /// channel made for a refused join is never reported, nor its end.
    var reported = false

    init(name: String, createdAt: Duration) {
        self.name = name
        self.createdAt = createdAt
    }

    /// Published track keys, sorted.
    var trackKeys: [TrackKey] { tracks.keys.sorted() }

    /// Sessions of broadcasters, in join order.
    var broadcasterSessions: [SessionID] {
        order.filter { connections[$0]?.role == .broadcaster }
    }
}

extension Channel: Sendable where Frame: Sendable {}
