import ShowroomWire
import SwiftProtobuf
import XCTest

@testable import Rooms

/// Found by fuzzing: two copies of one ban that differ only in a field this build does not know
/// made every repeated merge report a change (and be persisted and replicated again).
final class BanMergeTests: XCTestCase {
    func testMergingTheSameBatchTwiceChangesNothing() throws {
        var plain = RoomBan()
        plain.channel = "show"
        plain.uid = 7
        plain.privileges = [1]
        plain.untilMs = 5_000
        // The same ban with an unknown field 7 (varint 1), as a newer coordinator might send it.
        var bytes: [UInt8] = try plain.serializedBytes()
        bytes += [0x38, 0x01]
        let newer = try RoomBan(serializedBytes: bytes)
        XCTAssertNotEqual(newer, plain, "the unknown field is kept by protobuf")

        var list = BanList()
        XCTAssertEqual(list.merge([plain, newer]).count, 1)
        XCTAssertEqual(list.merge([plain, newer]), [], "the second merge of the same batch changes nothing")
        XCTAssertEqual(list.merge([newer, plain]), [], "nor does the same batch in another order")
    }
}
