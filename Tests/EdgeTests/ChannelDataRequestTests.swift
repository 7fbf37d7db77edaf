import Edge
import Foundation
import ShowroomWire
import XCTest

/// ``EdgeCodec/channelData(_:)``: a business server's message to a channel's users, checked
/// before the plane sees it.
final class ChannelDataRequestTests: XCTestCase {
    private func message(_ channel: String, uids: [UInt32] = [], data: [UInt8] = []) -> RoomChannelDataRequest {
        var message = RoomChannelDataRequest()
        message.channel = channel
        message.uids = uids
        message.data = Data(data)
        return message
    }

    func testAMessageNamesAValidChannelAndAtMostAHundredUids() throws {
        let request = message("show", uids: [3, 1, 3], data: [1, 2, 3])
        let checked = try EdgeCodec.channelData(request)
        XCTAssertEqual(checked.channel, "show")
        XCTAssertEqual(checked.uids, [1, 3])
        XCTAssertEqual(checked.data, [1, 2, 3])
        XCTAssertEqual(try EdgeCodec.channelData(message("show")).uids, [], "no uid: everyone")

        let hostile = ["", String(repeating: "x", count: 65), "bad name\u{0}"].map { message($0) }
            + [message("show", uids: Array(0...100))]
        for request in hostile {
            XCTAssertThrowsError(try EdgeCodec.channelData(request), "\(request.channel) \(request.uids.count)") { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
            }
        }
    }
}
