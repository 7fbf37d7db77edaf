import Rooms
import ShowroomWire
import XCTest

final class ChannelRoomsTests: XCTestCase {
    /// Channels get the open room whose channel they are; a channel already named keeps its room,
    /// a closed room names nothing, and a channel without a room stays without one.
    func testChannelsAreNamedAfterTheirOpenRooms() {
        func channel(_ name: String, roomID: String = "") -> RoomChannelStatus {
            var channel = RoomChannelStatus()
            channel.name = name
            channel.edge = "edge-1"
            channel.roomID = roomID
            return channel
        }
        func room(_ id: String, channel: String, state: RoomRoomState = .open) -> RoomRoom {
            var room = RoomRoom()
            room.roomID = id
            room.name = "Show \(id)"
            room.channel = channel
            room.state = state
            return room
        }
        let named = RoomChannelStatus.naming(
            [channel("a"), channel("b", roomID: "kept"), channel("c"), channel("d")],
            after: [room("r-a", channel: "a"), room("r-b", channel: "b"), room("r-c", channel: "c", state: .closed)])
        XCTAssertEqual(named.map(\.roomID), ["r-a", "kept", "", ""])
        XCTAssertEqual(named.map(\.roomName), ["Show r-a", "", "", ""])
        XCTAssertEqual(named.map(\.name), ["a", "b", "c", "d"])
    }
}
