import Foundation
import ShowroomWire

/// A channel event as JSON: the webhook body, also what `showroomctl events` prints.
///
/// ```json
/// {"noticeId":"room-1-3","eventType":103,"notifyMs":1767000000123,"payload":{"channelName":"room-1",
///  "uid":42,"reason":0,"ts":1767000000100,"sequence":3,"edge":"edge-1"}}
/// ```
///
/// Keys come in this order, without spaces; every character outside printable ASCII is escaped
/// (`\n`, `\t`, or `\uXXXX` with UTF-16 surrogate pairs), so the body is ASCII whatever the
/// channel or edge names hold. `eventType`
/// and `reason` are the numbers of `ChannelEventType` and `ChannelLeaveReason`; `ts` is when the
/// edge saw the event and `notifyMs` when the coordinator numbered it (ms since the Unix epoch).
/// A recording's events (121 a finished file, 122 a failure) add `recording` to the payload.
public enum ChannelEventJSON {
    /// The compact, ASCII-only JSON of `event`.
    public static func encode(_ event: RoomChannelEvent) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(160 + 2 * (event.noticeID.utf8.count + event.channel.utf8.count + event.edge.utf8.count))
        out.append(contentsOf: #"{"noticeId":"#.utf8)
        appendString(event.noticeID, to: &out)
        out.append(contentsOf: #","eventType":"#.utf8)
        out.append(contentsOf: String(event.type.rawValue).utf8)
        out.append(contentsOf: #","notifyMs":"#.utf8)
        out.append(contentsOf: String(event.notifiedAtMs).utf8)
        out.append(contentsOf: #","payload":{"channelName":"#.utf8)
        appendString(event.channel, to: &out)
        out.append(contentsOf: #","uid":"#.utf8)
        out.append(contentsOf: String(event.uid).utf8)
        out.append(contentsOf: #","reason":"#.utf8)
        out.append(contentsOf: String(event.reason.rawValue).utf8)
        out.append(contentsOf: #","ts":"#.utf8)
        out.append(contentsOf: String(event.atMs).utf8)
        out.append(contentsOf: #","sequence":"#.utf8)
        out.append(contentsOf: String(event.sequence).utf8)
        out.append(contentsOf: #","edge":"#.utf8)
        appendString(event.edge, to: &out)
        if event.hasRecording { appendRecording(event.recording, to: &out) }
        out.append(contentsOf: "}}".utf8)
        return out
    }

    /// A recorded file (events 121 and 122) in the payload:
    /// `"recording":{"recordingId":…,"path":…,"segment":…,"startMs":…,"endMs":…,"durationMs":…,"bytes":…,"codecs":[…],"failure":…}`.
    private static func appendRecording(_ file: RoomRecordingFile, to out: inout [UInt8]) {
        out.append(contentsOf: #","recording":{"recordingId":"#.utf8)
        appendString(file.recordingID, to: &out)
        out.append(contentsOf: #","path":"#.utf8)
        appendString(file.path, to: &out)
        for (key, value) in [("segment", Int64(file.segment)), ("startMs", file.startMs), ("endMs", file.endMs),
                             ("durationMs", file.durationMs), ("bytes", Int64(clamping: file.bytes))] {
            out.append(contentsOf: ",\"\(key)\":\(value)".utf8)
        }
        out.append(contentsOf: #","codecs":["#.utf8)
        for (index, codec) in file.codecs.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(codec, to: &out)
        }
        out.append(contentsOf: #"],"failure":"#.utf8)
        appendString(file.failure, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// The event in a webhook body. Keys may come in any order; unknown keys are ignored, so
    /// receivers keep working when fields are added.
    ///
    /// - Throws: `MALFORMED_MESSAGE` (1000) when the body is not JSON, lacks a field, or has a
    ///   field of the wrong type or out of range; the message names the field.
    public static func decode(_ body: some Sequence<UInt8>) throws(ShowroomError) -> RoomChannelEvent {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(body))
        } catch let error as DecodingError {
            throw .malformed("channel event JSON: \(describe(error))")
        } catch {
            throw .malformed("channel event JSON: \(error)")
        }
        guard let uid = UInt32(exactly: document.payload.uid) else {
            throw .malformed("channel event JSON: 'payload.uid' is \(document.payload.uid), outside 0...\(UInt32.max)")
        }
        var event = RoomChannelEvent()
        event.noticeID = document.noticeId
        event.type = RoomChannelEventType(rawValue: Int(document.eventType)) ?? .UNRECOGNIZED(Int(document.eventType))
        event.notifiedAtMs = document.notifyMs
        event.channel = document.payload.channelName
        event.uid = uid
        event.reason = RoomChannelLeaveReason(rawValue: Int(document.payload.reason))
            ?? .UNRECOGNIZED(Int(document.payload.reason))
        event.atMs = document.payload.ts
        event.sequence = document.payload.sequence
        event.edge = document.payload.edge
        if let recording = document.payload.recording {
            event.recording.recordingID = recording.recordingId
            event.recording.path = recording.path
            event.recording.segment = recording.segment
            event.recording.startMs = recording.startMs
            event.recording.endMs = recording.endMs
            event.recording.durationMs = recording.durationMs
            event.recording.bytes = recording.bytes
            event.recording.codecs = recording.codecs
            event.recording.failure = recording.failure
        }
        return event
    }

    /// The body's shape, for decoding only (encoding is by hand, to fix key order and escaping).
    private struct Document: Decodable {
        struct Payload: Decodable {
            var channelName: String
            var uid: Int64
            var reason: Int32
            var ts: Int64
            var sequence: UInt64
            var edge: String
            var recording: Recording?
        }

        struct Recording: Decodable {
            var recordingId: String
            var path: String
            var segment: UInt32
            var startMs: Int64
            var endMs: Int64
            var durationMs: Int64
            var bytes: UInt64
            var codecs: [String]
            var failure: String
        }

        var noticeId: String
        var eventType: Int32
        var notifyMs: Int64
        var payload: Payload
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (last.map { [$0] } ?? [])
            return keys.isEmpty ? "the body" : "'" + keys.map(\.stringValue).joined(separator: ".") + "'"
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context, key)) is missing"
        case .typeMismatch(let type, let context):
            return "\(path(context)) is not \(describe(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context)) is null, expected \(describe(type))"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            // Foundation reports numbers out of range for their type without a path.
            return "the body is not valid JSON, or a number is out of range for its field"
        case .dataCorrupted(let context):
            return "\(path(context)) is invalid (\(context.debugDescription))"
        @unknown default:
            return "\(error)"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int32.Type, is Int64.Type, is UInt32.Type, is UInt64.Type: "an integer"
        default: "an object"
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string literal made of printable ASCII only.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append(contentsOf: #"\""#.utf8)
            case "\\": out.append(contentsOf: #"\\"#.utf8)
            case "\n": out.append(contentsOf: #"\n"#.utf8)
            case "\r": out.append(contentsOf: #"\r"#.utf8)
            case "\t": out.append(contentsOf: #"\t"#.utf8)
            case " "..."~": out.append(UInt8(scalar.value))
            default:
                for unit in String(scalar).utf16 {
                    out.append(contentsOf: #"\u"#.utf8)
                    for shift in stride(from: 12, through: 0, by: -4) {
                        out.append(hexDigits[Int((unit >> UInt16(shift)) & 0xf)])
                    }
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
