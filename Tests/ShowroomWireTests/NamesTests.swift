import ShowroomWire
import SwiftProtobuf
import XCTest

final class NamesTests: XCTestCase {
    /// The refusal of `body`, failing the test if it does not throw INVALID_ARGUMENT.
    private func refusal(_ body: () throws(ShowroomError) -> Void, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            try body()
            XCTFail("accepted", file: file, line: line)
            return ""
        } catch {
            XCTAssertEqual(error.code, .invalidArgument, file: file, line: line)
            XCTAssertLessThan(error.message.utf8.count, 400, "the message must not echo the value", file: file, line: line)
            return error.message
        }
    }

    // MARK: Channels

    func testChannelNamesOfTheAllowedCharactersUpTo64BytesPass() throws {
        let every = "azAZ09 " + Names.channelPunctuation
        for name in ["a", "room-1", "Friday show", every, String(repeating: "x", count: 64)] {
            XCTAssertNoThrow(try Names.validateChannel(name), name)
            XCTAssertTrue(Names.isValidChannel(name), name)
        }
    }

    func testEmptyChannelNameIsRefused() {
        let message = refusal { () throws(ShowroomError) in try Names.validateChannel("") }
        XCTAssertTrue(message.hasPrefix("channel is empty"), message)
        XCTAssertFalse(Names.isValidChannel(""))
    }

    func testChannelNameOf65BytesIsRefusedWithItsLength() {
        let message = refusal { () throws(ShowroomError) in try Names.validateChannel(String(repeating: "x", count: 65)) }
        XCTAssertTrue(message.hasPrefix("channel is 65 bytes;"), message)
        XCTAssertTrue(message.contains("1 – 64 bytes"), message)
    }

    func testMegabyteChannelNameIsRefusedWithoutEchoingIt() {
        let huge = String(repeating: "a", count: 1 << 20)
        let message = refusal { () throws(ShowroomError) in try Names.validateChannel(huge, field: "media header channel") }
        XCTAssertTrue(message.hasPrefix("media header channel is 1048576 bytes;"), message)
        XCTAssertFalse(Names.isValidChannel(huge))
    }

    func testChannelNameWithNULIsRefusedNamingTheByte() {
        let message = refusal { () throws(ShowroomError) in try Names.validateChannel("abc\u{0}def") }
        XCTAssertTrue(message.contains("byte 0x00 (NUL) at byte 3"), message)
        XCTAssertTrue(message.contains("'abc\\x00def'"), message)
    }

    func testChannelNameWithControlSlashQuoteOrNonASCIIIsRefused() {
        for (name, byte) in [("a\nb", "0x0A"), ("a/b", "0x2F ('/')"), ("a'b", "0x27"), ("a\"b", "0x22"), ("é", "0xC3"), ("a\u{7F}", "0x7F")] {
            let message = refusal { () throws(ShowroomError) in try Names.validateChannel(name) }
            XCTAssertTrue(message.contains("byte \(byte)"), "\(name): \(message)")
            XCTAssertFalse(Names.isValidChannel(name), name)
        }
    }

    /// Invalid UTF-8 cannot reach a Swift string through protobuf: swift-protobuf refuses the
    /// message (the edge answers MALFORMED_MESSAGE before any name is looked at).
    func testInvalidUTF8ChannelNameDoesNotDecode() throws {
        // JoinChannelRequest field 1 (channel), length 2, bytes 0xFF 0xFE.
        let bytes: [UInt8] = [0x0A, 0x02, 0xFF, 0xFE]
        XCTAssertThrowsError(try EdgeJoinChannelRequest(serializedBytes: bytes))
    }

    // MARK: Rooms

    func testRoomIDs() {
        XCTAssertNoThrow(try Names.validateRoomID("abc_DEF-123"))
        XCTAssertNoThrow(try Names.validateRoomID(String(repeating: "r", count: 64)))
        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateRoomID("") }.hasPrefix("room_id is empty"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateRoomID(String(repeating: "r", count: 65)) }
            .hasPrefix("room_id is 65 bytes"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateRoomID(String(repeating: "r", count: 1 << 20)) }
            .hasPrefix("room_id is 1048576 bytes"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateRoomID("a b") }.contains("byte 0x20 at byte 1"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateRoomID("a\u{0}") }.contains("(NUL) at byte 1"))
    }

    func testDisplayNamesAllow64CharactersOfAnyScriptButNoControlCharacters() {
        XCTAssertNoThrow(try Names.validateDisplayName("Friday show", field: "name", allowEmpty: false))
        XCTAssertNoThrow(try Names.validateDisplayName(String(repeating: "秀", count: 64), field: "name", allowEmpty: false))
        XCTAssertNoThrow(try Names.validateDisplayName(String(repeating: "🎤", count: 64), field: "name", allowEmpty: false))
        XCTAssertNoThrow(try Names.validateDisplayName("", field: "owner_name", allowEmpty: true))

        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateDisplayName("", field: "name", allowEmpty: false) }
            .hasPrefix("name is empty"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in
            try Names.validateDisplayName(String(repeating: "x", count: 65), field: "user_name", allowEmpty: true)
        }.hasPrefix("user_name is 65 characters"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in
            try Names.validateDisplayName(String(repeating: "🎤", count: 65), field: "owner_name", allowEmpty: true)
        }.hasPrefix("owner_name is 260 bytes"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in
            try Names.validateDisplayName(String(repeating: "x", count: 1 << 20), field: "name", allowEmpty: false)
        }.hasPrefix("name is 1048576 bytes"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in
            try Names.validateDisplayName("ab\u{0}", field: "user_name", allowEmpty: true)
        }.contains("control character U+0000 at byte 2"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in
            try Names.validateDisplayName("秀\n", field: "name", allowEmpty: false)
        }.contains("control character U+000A at byte 3"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in
            try Names.validateDisplayName("a\u{85}", field: "name", allowEmpty: false)
        }.contains("U+0085"))
    }

    func testAvatars() {
        XCTAssertNoThrow(try Names.validateAvatar(""))
        XCTAssertNoThrow(try Names.validateAvatar("https://example.com/a/" + String(repeating: "x", count: 490)))
        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateAvatar(String(repeating: "x", count: 513)) }
            .hasPrefix("owner_avatar is 513 bytes"))
        XCTAssertTrue(refusal { () throws(ShowroomError) in try Names.validateAvatar("https://x/\u{0}") }
            .contains("U+0000"))
    }
}
