import Hummingbird

/// JSON written straight into a `ByteBuffer`, for the answers read most often (a room, a channel's
/// users), where Foundation's `JSONEncoder` took about a fifth of the coordinator's time. The bytes
/// are those `JSONEncoder` with `.sortedKeys` makes of the same value: keys in sorted order (the
/// caller writes them so), nil fields left out, `"` `\` `/` and control characters escaped as it
/// escapes them, everything else as its UTF-8.
struct APIJSON {
    /// What is written so far (an array: appending a byte to it costs less than to a ByteBuffer).
    private(set) var bytes: [UInt8] = []
    /// Whether the next member or element needs a comma before it.
    private var afterValue = false

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// What is written, in one buffer.
    var buffer: ByteBuffer { ByteBuffer(bytes: bytes) }

    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        afterValue = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        afterValue = false
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// A member's key; `key` is plain ASCII that needs no escaping (the document's field names).
    mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        write(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                writeEscaped(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    mutating func integer(_ value: Int64) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // The magnitude's digits (at most 20: Int64.min's magnitude fits a UInt64), last first
        // from the end of a buffer on the stack, then appended at once rather than a byte at a time.
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
        afterValue = true
    }

    mutating func bool(_ value: Bool) {
        separate()
        write(value ? "true" : "false")
        afterValue = true
    }

    mutating func field(_ name: StaticString, _ value: String) { key(name); string(value) }
    mutating func field(_ name: StaticString, _ value: Int64) { key(name); integer(value) }
    mutating func field(_ name: StaticString, _ value: Bool) { key(name); bool(value) }

    /// A member left out when `value` is nil, as `JSONEncoder` leaves out a nil optional.
    mutating func field(_ name: StaticString, ifPresent value: String?) { if let value { field(name, value) } }
    mutating func field(_ name: StaticString, ifPresent value: Int64?) { if let value { field(name, value) } }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func writeEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): write("\\\"")
        case UInt8(ascii: "\\"): write("\\\\")
        case UInt8(ascii: "/"): write("\\/")
        case 0x08: write("\\b")
        case 0x09: write("\\t")
        case 0x0A: write("\\n")
        case 0x0C: write("\\f")
        case 0x0D: write("\\r")
        default:
            write("\\u00")
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }
}

extension APIJSON {
    /// A channel's users (`ChannelUsers`).
    static func encode(_ users: Components.Schemas.ChannelUsers) -> ByteBuffer {
        var json = APIJSON(capacity: 64 + users.users.count * 80)
        json.beginObject()
        json.field("audience_total", users.audienceTotal)
        json.field("exists", users.exists)
        json.key("unanswered_edges")
        json.beginArray()
        for edge in users.unansweredEdges { json.string(edge) }
        json.endArray()
        json.key("users")
        json.beginArray()
        for user in users.users {
            json.beginObject()
            json.field("edge", user.edge)
            json.field("joined_at_ms", user.joinedAtMs)
            json.field("role", user.role.rawValue)
            json.field("uid", user.uid)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.buffer
    }

    /// A room (`Room`).
    static func encode(_ room: Components.Schemas.Room) -> ByteBuffer {
        var json = APIJSON(capacity: 256 + room.name.utf8.count + (room.metadata?.utf8.count ?? 0))
        json.beginObject()
        json.field("audience_count", room.audienceCount)
        json.field("channel", room.channel)
        json.field("closed", room.closed)
        json.field("closed_at_ms", ifPresent: room.closedAtMs)
        if let uids = room.cohostUids {
            json.key("cohost_uids")
            json.beginArray()
            for uid in uids { json.integer(uid) }
            json.endArray()
        }
        json.field("created_at_ms", room.createdAtMs)
        json.field("expires_at_ms", room.expiresAtMs)
        json.field("interaction", ifPresent: room.interaction?.rawValue)
        json.field("metadata", ifPresent: room.metadata)
        json.field("name", room.name)
        json.field("owner_avatar", ifPresent: room.ownerAvatar)
        json.field("owner_name", ifPresent: room.ownerName)
        json.field("owner_uid", room.ownerUid)
        json.field("pk_id", ifPresent: room.pkId)
        json.field("pk_peer_room_id", ifPresent: room.pkPeerRoomId)
        json.field("room_id", room.roomId)
        json.field("seats", ifPresent: room.seats.map(Int64.init))
        json.field("version", room.version)
        json.endObject()
        return json.buffer
    }
}
