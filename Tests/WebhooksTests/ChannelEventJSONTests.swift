import ShowroomWire
import Webhooks
import XCTest

/// The webhook body: exact bytes, round trip, ASCII escaping, and clear errors for bad bodies.
final class ChannelEventJSONTests: XCTestCase {
    func testEncodeWritesTheDocumentedKeysInOrderCompactly() {
        var event = channelEvent(channel: "room-1", sequence: 3)
        event.type = .broadcasterLeft
        event.reason = .kicked
        let text = String(decoding: ChannelEventJSON.encode(event), as: UTF8.self)
        XCTAssertEqual(
            text,
            #"{"noticeId":"room-1-3","eventType":104,"notifyMs":1767000000103,"payload":{"channelName":"room-1","#
                + #""uid":42,"reason":3,"ts":1767000000003,"sequence":3,"edge":"edge-1"}}"#)
    }

    func testRoundTripKeepsEveryField() throws {
        var event = channelEvent(channel: "room-7", sequence: 1, uid: UInt32.max)
        event.sequence = UInt64.max
        event.type = .roleToAudience
        event.reason = .privilegeExpired
        event.atMs = Int64.min
        event.notifiedAtMs = Int64.max
        XCTAssertEqual(try ChannelEventJSON.decode(ChannelEventJSON.encode(event)), event)
    }

    func testARecordedFilesEventCarriesTheFileAndComesBack() throws {
        var event = channelEvent(channel: "room-1", sequence: 4)
        event.type = .recordingFile
        event.recording.recordingID = "rec-0123456789abcdef"
        event.recording.path = "room-1/42/1767000000000-0.webm"
        event.recording.segment = 2
        event.recording.startMs = 1_767_000_000_000
        event.recording.endMs = 1_767_000_020_000
        event.recording.durationMs = 20_000
        event.recording.bytes = UInt64(Int64.max)
        event.recording.codecs = ["vp8", "opus"]
        event.recording.failure = "No space left on device \"disk\""
        let text = String(decoding: ChannelEventJSON.encode(event), as: UTF8.self)
        XCTAssertTrue(text.hasSuffix(#""edge":"edge-1","recording":{"recordingId":"rec-0123456789abcdef","path":"room-1/42/1767000000000-0.webm","#
            + #""segment":2,"startMs":1767000000000,"endMs":1767000020000,"durationMs":20000,"bytes":9223372036854775807,"#
            + #""codecs":["vp8","opus"],"failure":"No space left on device \"disk\""}}}"#), text)
        XCTAssertEqual(try ChannelEventJSON.decode(ChannelEventJSON.encode(event)), event)
    }

    func testNonASCIIAndControlCharactersAreEscapedAndComeBack() throws {
        var event = channelEvent(channel: "房间-\"1\"\\\n\t🎤\u{7}", sequence: 1)
        event.edge = "édge"
        let body = ChannelEventJSON.encode(event)
        XCTAssertTrue(body.allSatisfy { $0 >= 0x20 && $0 < 0x7f }, "the body is printable ASCII")
        let text = String(decoding: body, as: UTF8.self)
        XCTAssertTrue(text.contains(#""channelName":"\u623f\u95f4-\"1\"\\\n\t\ud83c\udfa4\u0007""#), text)
        XCTAssertEqual(try ChannelEventJSON.decode(body), event)
    }

    func testUnknownKeysAndAnyKeyOrderAreAccepted() throws {
        let body = #"{"extra":[1,2],"payload":{"edge":"e","sequence":9,"ts":5,"reason":1,"uid":7,"channelName":"c","#
            + #""more":true},"notifyMs":6,"eventType":999,"noticeId":"c-9"}"#
        let event = try ChannelEventJSON.decode(Array(body.utf8))
        XCTAssertEqual(event.noticeID, "c-9")
        XCTAssertEqual(event.type, .UNRECOGNIZED(999))
        XCTAssertEqual(event.reason, .quit)
        XCTAssertEqual(event.sequence, 9)
        XCTAssertEqual(event.uid, 7)
    }

    func testMalformedBodiesAreRefusedWithMalformedAndTheFieldNamed() {
        let cases: [(body: String, mentions: String)] = [
            ("not json", "not valid JSON"),
            ("", "not valid JSON"),
            ("[1,2]", "body"),
            (#"{"noticeId":"a-1","eventType":103,"notifyMs":1}"#, "'payload' is missing"),
            (
                #"{"noticeId":"a-1","eventType":103,"notifyMs":1,"payload":{"channelName":"a","uid":-1,"reason":0,"#
                    + #""ts":1,"sequence":1,"edge":"e"}}"#,
                "'payload.uid'"
            ),
            (
                #"{"noticeId":7,"eventType":103,"notifyMs":1,"payload":{"channelName":"a","uid":1,"reason":0,"#
                    + #""ts":1,"sequence":1,"edge":"e"}}"#,
                "'noticeId' is not a string"
            ),
        ]
        for (body, mentions) in cases {
            XCTAssertThrowsError(try ChannelEventJSON.decode(Array(body.utf8)), body) { error in
                guard let error = error as? ShowroomError else { return XCTFail("not a ShowroomError: \(error)") }
                XCTAssertEqual(error.code, .malformedMessage, body)
                XCTAssertEqual(error.code.rawValue, 1000)
                XCTAssertTrue(error.message.contains(mentions), "\(body): \(error.message)")
            }
        }
    }

    func testACallEventsJSONHasItsKeysInOrderAndIsASCII() {
        var event = SignalCallNotification()
        event.noticeID = "1001-ab-203"
        event.eventType = 203
        event.notifyMs = 1_767_000_000_123
        event.callID = "1001-ab"
        event.caller = 2001
        event.callee = 1001
        event.type = .audio
        event.channel = "call-1001-cd"
        event.startedAtMs = 1_767_000_000_000
        event.connectedAtMs = 1_767_000_000_090
        event.endedAtMs = 1_767_000_060_000
        event.durationMs = 59_910
        event.endReason = "hungUp"
        event.endedBy = 2001
        event.nodeID = "callsignal-\u{e9}"
        let text = String(decoding: CallEventJSON.encode(event), as: UTF8.self)
        XCTAssertEqual(text, #"{"noticeId":"1001-ab-203","eventType":203,"notifyMs":1767000000123,"payload":{"callId":"1001-ab","caller":2001,"callee":1001,"type":"audio","channelName":"call-1001-cd","startedAtMs":1767000000000,"connectedAtMs":1767000000090,"endedAtMs":1767000060000,"durationMs":59910,"endReason":"hungUp","endedBy":2001,"node":"callsignal-\u00e9"}}"#)
        XCTAssertEqual(WebhookEvent(event).orderKey, "call-1001-cd", "a call's events go in order")
    }
}
