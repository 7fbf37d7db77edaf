import ShowroomWire

extension RoomChannelStatus {
    /// Channel `channel` as edge `edge` reports it to the coordinators: its subscribers there, its
    /// publishers, and the origin it relays (empty: the edge is its origin).
    public static func reported(_ channel: String, edge: String, subscribers: UInt32 = 0, publishers: [UInt32] = [],
                                origin: String = "") -> RoomChannelStatus {
        RoomChannelStatus.with {
            $0.name = channel
            $0.edge = edge
            $0.subscribers = subscribers
            $0.publishers = publishers
            $0.originEdge = origin
        }
    }
}
