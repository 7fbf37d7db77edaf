// Pure: no I/O, no clock.
import ShowroomWire

extension ChannelDirectory {
    /// The most edges a placement request may prefer.
    public static let maxPreferredEdges = 4

    /// What a placement request needs before it is placed, for the edge its client could not reach.
    public enum PlacementProbe: Sendable, Equatable {
        /// Nothing: the client reached its edges, or the edge it names is not known here (placed
        /// as ``ChannelDirectory/placement(for:edges:nowMs:)`` decides).
        case none
        /// Placed at once avoiding `edge`: this coordinator's connection to it broke too (its
        /// process died), so no probe is needed.
        case avoid(edge: String)
        /// `edge` is asked at its cluster endpoint `endpoint` whether it answers; placed avoiding
        /// it when it does not.
        case probe(edge: String, endpoint: String)
    }

    /// Checks a placement request's channel and preferred edges (at most ``maxPreferredEdges``,
    /// each a node id of 1–64 bytes).
    /// - Throws: `INVALID_ARGUMENT`.
    public static func check(_ request: RoomPlaceChannelRequest) throws(ShowroomError) {
        try Names.validateChannel(request.channel)
        guard request.preferredEdges.count <= maxPreferredEdges,
              request.preferredEdges.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
            throw .invalidArgument(
                "a placement prefers at most \(maxPreferredEdges) edges, each a node id of 1–64 bytes; got \(request.preferredEdges.count)")
        }
    }

    /// Checks a claim's channel and claiming edge (a node id of 1–64 bytes).
    /// - Throws: `INVALID_ARGUMENT`.
    public static func check(_ request: RoomClaimChannelRequest) throws(ShowroomError) {
        try Names.validateChannel(request.channel)
        guard !request.edgeID.isEmpty, request.edgeID.utf8.count <= 64 else {
            throw .invalidArgument("a channel claim names the claiming edge's node id (1–64 bytes)")
        }
    }

    /// What `request` needs before it is placed. A client that could not reach an edge has it
    /// checked: if this coordinator cannot reach it either, nothing is placed there, whether it is
    /// the channel's placement or only a host it reported (a coordinator with no placement for
    /// the channel, just restarted, say, would otherwise send the client back to the edge it
    /// lost), and the channel moves now rather than when the membership declares the edge dead.
    /// `endpoint`: a member's cluster endpoint, if known; `linkBroken`: whether the connection to
    /// an endpoint broke.
    public static func probe(for request: RoomPlaceChannelRequest, endpoint: (String) -> String?,
                             linkBroken: (String) -> Bool) -> PlacementProbe {
        let edge = request.unreachableEdge
        guard !edge.isEmpty, let address = endpoint(edge) else { return .none }
        return linkBroken(address) ? .avoid(edge: edge) : .probe(edge: edge, endpoint: address)
    }
}
