import Edge
import ShowroomWire

/// Where the edge's loop hands what the room-coordinators are to hear; both are called on the
/// edge's loop and pass the data on to the node's loop.
struct CoordinatorReports: Sendable {
    /// Channel activities, in the order the plane saw them, times on the wall clock.
    var activities: @Sendable ([RoomChannelActivity]) -> Void
    /// Every hosted channel, every second and soon after a change.
    var summary: @Sendable ([ChannelSummary]) -> Void
    /// Asks the channel's owner coordinator whether this edge may host a channel it does not host
    /// yet; the answer comes back through ``EdgeServer/claimAnswered(_:_:)``.
    var claim: @Sendable (_ channel: String) -> Void
}
