import Edge
import ShowroomWire

/// Where the edge's shell hands what the room-coordinators are to hear: called on the edge's
/// thread, they pass it on to the coordinator link (on the node's loop in the edge's process,
/// see ``EdgeOnNodeLoop/reports(to:edgeLoop:)``; directly on one thread in process).
struct CoordinatorReports: Sendable {
    /// Channel activities, in the order the plane saw them, times on the wall clock.
    var activities: @Sendable ([RoomChannelActivity]) -> Void
    /// Every hosted channel, every second and soon after a change.
    var summary: @Sendable ([ChannelSummary]) -> Void
    /// Asks the channel's owner coordinator whether this edge may host a channel it does not host
    /// yet; the answer comes back through ``EdgeServer/claimAnswered(_:_:)``.
    var claim: @Sendable (_ channel: String) -> Void
    /// Asks a coordinator where a forward's destination channel is hosted (`CHANNEL_PLACE` with
    /// the destination token); the answer comes back through ``EdgeServer/forwardPlaced(_:_:)``.
    var place: @Sendable (_ placement: ForwardPlacement) -> Void
    /// The edge drains: every report from now on says so; `announced` runs on the edge's thread
    /// once every alive coordinator has heard it (or did not answer within a second).
    var draining: @Sendable (_ announced: @escaping () -> Void) -> Void = { $0() }
}

/// A forward destination's placement request, carried to the node's loop and back with its answer.
struct ForwardPlacement: Sendable {
    var key: ForwardKey
    var destination: String
    var token: String
    var attempt: UInt64
    /// The edge that failed it last time: the coordinator places the channel elsewhere.
    var unreachableEdge: String?
}
