import Foundation
@testable import ServerAPI
import XCTest

/// The hot reads' JSON (``APIJSON``) is what the generated code's `JSONEncoder` (sorted keys)
/// makes of the same answer, byte for byte, whatever the names hold.
final class APIJSONTests: XCTestCase {
    /// Names a business server or a hostile user may give: quotes, backslashes, slashes, every
    /// control character, JSON and HTML syntax, non-ASCII, emoji, joiners, the line separators
    /// JavaScript chokes on, and a lone high byte's worth of Latin-1.
    static let hostile: [String] = [
        "", "plain", "quote \" here", "back\\slash", "a/b</script>", "\\\"\\/", "tab\there\nnew\rline",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{7F}",
        #"{"name":"x"},{"#, "Zoë ÿ 中文 العربية", "emoji 😀👩‍👩‍👧 flag 🇫🇷", "sep \u{2028} \u{2029} bom \u{FEFF}",
        "nul\u{0}inside", String(repeating: "é/\"", count: 200),
    ]

    private static func foundation<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(value))
    }

    func testAChannelsUsersAreEncodedAsJSONEncoderEncodesThem() throws {
        let empty = Components.Schemas.ChannelUsers(exists: false, users: [], audienceTotal: 0, unansweredEdges: [])
        XCTAssertEqual(Array(APIJSON.encode(empty).readableBytesView), try Self.foundation(empty))
        for name in Self.hostile {
            let users = Components.Schemas.ChannelUsers(
                exists: true,
                users: [
                    .init(uid: 1, role: .host, joinedAtMs: 0, edge: name),
                    .init(uid: 4_294_967_295, role: .audience, joinedAtMs: 1_767_000_000_123, edge: "edge-1"),
                    .init(uid: 9, role: .audience, joinedAtMs: -1, edge: name + name),
                ],
                audienceTotal: Int64.max, unansweredEdges: [name, "edge-2"])
            let written = Array(APIJSON.encode(users).readableBytesView)
            XCTAssertEqual(String(decoding: written, as: UTF8.self), String(decoding: try Self.foundation(users), as: UTF8.self))
            // And any JSON parser reads the name back as it was.
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(written)) as? [String: Any])
            let listed = try XCTUnwrap(object["users"] as? [[String: Any]])
            XCTAssertEqual(listed.first?["edge"] as? String, name)
            XCTAssertEqual(object["unanswered_edges"] as? [String], [name, "edge-2"])
            XCTAssertEqual(try JSONDecoder().decode(Components.Schemas.ChannelUsers.self, from: Data(written)), users)
        }
    }

    func testARoomIsEncodedAsJSONEncoderEncodesIt() throws {
        let bare = Components.Schemas.Room(roomId: "r", name: "", ownerUid: 1, channel: "r", createdAtMs: 0, expiresAtMs: 0,
                                           closed: false, audienceCount: 0, version: 0)
        XCTAssertEqual(String(decoding: APIJSON.encode(bare).readableBytesView, as: UTF8.self),
                       String(decoding: try Self.foundation(bare), as: UTF8.self))
        for (n, name) in Self.hostile.enumerated() {
            let room = Components.Schemas.Room(
                roomId: "room-\(n)", name: name, ownerUid: 4_294_967_295, ownerName: name, ownerAvatar: "https://x/\(name).png",
                channel: "show_\(n)", createdAtMs: 1_767_000_000_000, expiresAtMs: 1_767_001_200_000, closed: n % 2 == 0,
                closedAtMs: n % 2 == 0 ? 1_767_000_500_000 : nil, audienceCount: Int64(n * 1000), seats: Int32(n % 9 + 1),
                metadata: #"{"cover":"\#(name)"}"#, interaction: [.none, .pk, .cohost, .call][n % 4],
                pkId: n % 4 == 1 ? "pk-\(n)" : nil, pkPeerRoomId: n % 4 == 1 ? name : nil,
                cohostUids: n % 4 == 2 ? [2, 3, Int64(UInt32.max)] : (n % 4 == 3 ? [] : nil), version: Int64(n))
            let written = Array(APIJSON.encode(room).readableBytesView)
            XCTAssertEqual(String(decoding: written, as: UTF8.self), String(decoding: try Self.foundation(room), as: UTF8.self))
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(written)) as? [String: Any])
            XCTAssertEqual(object["name"] as? String, name)
            XCTAssertEqual(object["metadata"] as? String, #"{"cover":"\#(name)"}"#)
            XCTAssertEqual(try JSONDecoder().decode(Components.Schemas.Room.self, from: Data(written)), room)
        }
    }

    func testIntegersAtTheirBoundsAreWrittenInFull() throws {
        var json = APIJSON()
        json.beginArray()
        for value: Int64 in [0, 9, 10, -1, -9, -10, .min, .max] { json.integer(value) }
        json.endArray()
        XCTAssertEqual(String(decoding: json.buffer.readableBytesView, as: UTF8.self),
                       "[0,9,10,-1,-9,-10,-9223372036854775808,9223372036854775807]")
    }
}
