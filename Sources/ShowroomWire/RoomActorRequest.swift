import SwiftProtobuf

/// A PK or co-host request: it names the room, the uid acting, and that uid's RTC token for the
/// room's channel, which the room's coordinator checks.
public protocol RoomActorRequest: SwiftProtobuf.Message, Sendable {
    /// The room acted in.
    var roomID: String { get set }
    /// The uid acting.
    var uid: UInt32 { get set }
    /// The uid's token for the room's channel.
    var token: String { get set }
}

extension RoomActorRequest {
    /// This request with its room, actor and token set.
    public func acting(in roomID: String, as uid: UInt32, token: String) -> Self {
        var request = self
        request.roomID = roomID
        request.uid = uid
        request.token = token
        return request
    }
}

extension RoomPkInviteRequest: RoomActorRequest {}
extension RoomPkAnswerRequest: RoomActorRequest {}
extension RoomPkStopRequest: RoomActorRequest {}
extension RoomPkMatchRequest: RoomActorRequest {}
extension RoomCoHostApplyRequest: RoomActorRequest {}
extension RoomCoHostInviteRequest: RoomActorRequest {}
extension RoomCoHostAnswerRequest: RoomActorRequest {}
extension RoomCoHostStopRequest: RoomActorRequest {}
