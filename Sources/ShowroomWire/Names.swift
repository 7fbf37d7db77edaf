/// What a valid name is, in one place for every process and the SDK: channel names (edges, channel
/// placement, rooms), room ids, display names (rooms, their owners, users in chat) and avatars.
///
/// Every check throws ``ShowroomError`` `INVALID_ARGUMENT` (1007) with a message naming the field,
/// what was wrong (its length or the offending byte and where) and the rule, without echoing more
/// than a short, escaped prefix of the value: a hostile value must not travel back whole in the
/// error, nor into logs.
///
/// ```swift
/// try Names.validateChannel(request.channel)                  // "channel ..." on failure
/// try Names.validateDisplayName(request.name, field: "name")  // rooms
/// ```
public enum Names {
    /// Longest channel name, in bytes (the vendors' 64-byte rule).
    public static let maxChannelNameBytes = 64
    /// Longest room id, in bytes.
    public static let maxRoomIDBytes = 64
    /// Longest display name (room name, owner name, user name), in UTF-8 bytes: 64 characters of
    /// CJK (3 bytes each) or emoji (4 bytes) fit.
    public static let maxDisplayNameBytes = 256
    /// Longest display name in characters, as people count them.
    public static let maxDisplayNameCharacters = 64
    /// Longest avatar (a URL or an app-defined key), in UTF-8 bytes.
    public static let maxAvatarBytes = 512

    /// The punctuation a channel name may hold besides a-z, A-Z, 0-9 and space.
    public static let channelPunctuation = "!#$%&()+-:;<=.>?@[]^_{|}~,"

    /// What every 1v1 call's private channel name starts with: the call-signal role mints them
    /// (`call-<callee uid>-` and 32 random hex digits), and edges admit only the tokens minted for
    /// such a channel and uid, never a wildcard one (`CHANNEL_PRIVATE`).
    public static let callChannelPrefix = "call-"

    /// Whether `name` is a 1v1 call's private channel.
    public static func isCallChannel(_ name: String) -> Bool { name.hasPrefix(callChannelPrefix) }

    /// A call channel's name for a call to `callee`: `call-<callee>-<random>`, so that whoever sees
    /// the channel (a coordinator with its edges' reports) finds the call's owner.
    public static func callChannel(callee: UInt32, random: String) -> String { "\(callChannelPrefix)\(callee)-\(random)" }

    /// The callee a call channel's name carries, or nil for another channel.
    public static func callee(ofCallChannel name: String) -> UInt32? {
        guard isCallChannel(name) else { return nil }
        let rest = name.dropFirst(callChannelPrefix.count)
        guard let dash = rest.firstIndex(of: "-") else { return nil }
        return UInt32(rest[..<dash])
    }
    /// The channel-name rule in words, for messages.
    public static let channelRule =
        "a channel name is 1 – 64 bytes of a-z A-Z 0-9 space and \(channelPunctuation)"

    private static let channelBytes: [Bool] = {
        var allowed = [Bool](repeating: false, count: 256)
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { allowed[Int(byte)] = true }
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { allowed[Int(byte)] = true }
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { allowed[Int(byte)] = true }
        allowed[Int(UInt8(ascii: " "))] = true
        for byte in channelPunctuation.utf8 { allowed[Int(byte)] = true }
        return allowed
    }()

    // MARK: - Channels

    /// True when `name` is a valid channel name (see ``channelRule``).
    public static func isValidChannel(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            bytes.count >= 1 && bytes.count <= maxChannelNameBytes && bytes.allSatisfy { channelBytes[Int($0)] }
        }
    }

    /// Refuses anything but a valid channel name: 1 – 64 bytes of a-z A-Z 0-9 space and
    /// `!#$%&()+-:;<=.>?@[]^_{|}~,`. The empty name is never a channel (inside a token it is the
    /// wildcard, which is not checked here).
    ///
    /// - Parameters:
    ///   - name: The channel name.
    ///   - field: The field named in the error, e.g. `channel` or `media header channel`.
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT`.
    public static func validateChannel(_ name: String, field: String = "channel") throws(ShowroomError) {
        var name = name
        let problem: String? = name.withUTF8 { bytes in
            if bytes.isEmpty { return "is empty" }
            if bytes.count > maxChannelNameBytes { return "is \(bytes.count) bytes" }
            if let offset = bytes.firstIndex(where: { !channelBytes[Int($0)] }) {
                return "holds \(describe(byte: bytes[offset])) at byte \(offset) (\(preview(bytes)))"
            }
            return nil
        }
        if let problem { throw .invalidArgument("\(field) \(problem); \(channelRule)") }
    }

    // MARK: - Rooms

    /// Refuses a room id that is not 1 – 64 bytes of A-Z a-z 0-9 `_` `-`.
    ///
    /// - Parameters:
    ///   - id: The room id.
    ///   - field: The field named in the error.
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT`.
    public static func validateRoomID(_ id: String, field: String = "room_id") throws(ShowroomError) {
        var id = id
        let problem: String? = id.withUTF8 { bytes in
            if bytes.isEmpty { return "is empty" }
            if bytes.count > maxRoomIDBytes { return "is \(bytes.count) bytes" }
            let offset = bytes.firstIndex { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return false
                default:
                    return true
                }
            }
            if let offset { return "holds \(describe(byte: bytes[offset])) at byte \(offset) (\(preview(bytes)))" }
            return nil
        }
        if let problem {
            throw .invalidArgument(
                "\(field) \(problem); a room id is 1 – \(maxRoomIDBytes) bytes of A-Z a-z 0-9 '_' and '-'")
        }
    }

    /// Refuses a display name (room name, owner name, user name) longer than
    /// ``maxDisplayNameBytes`` UTF-8 bytes or ``maxDisplayNameCharacters`` characters, or holding
    /// control characters (C0, DEL, C1: newlines and NUL included).
    ///
    /// - Parameters:
    ///   - name: The name.
    ///   - field: The field named in the error, e.g. `name`, `owner_name`, `user_name`.
    ///   - allowEmpty: Whether the empty name is accepted (optional fields).
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT`.
    public static func validateDisplayName(_ name: String, field: String, allowEmpty: Bool) throws(ShowroomError) {
        let rule = "\(field) is \(allowEmpty ? "empty or " : "")1 – \(maxDisplayNameCharacters) characters "
            + "(at most \(maxDisplayNameBytes) bytes of UTF-8) without control characters"
        let bytes = name.utf8.count
        if bytes == 0 {
            if allowEmpty { return }
            throw .invalidArgument("\(field) is empty; \(rule)")
        }
        if bytes > maxDisplayNameBytes { throw .invalidArgument("\(field) is \(bytes) bytes; \(rule)") }
        try refuseControlCharacters(name, field: field, rule: rule)
        let characters = name.count
        if characters > maxDisplayNameCharacters {
            throw .invalidArgument("\(field) is \(characters) characters; \(rule)")
        }
    }

    /// Refuses an avatar (a URL or an app-defined key; may be empty) longer than
    /// ``maxAvatarBytes`` UTF-8 bytes or holding control characters.
    ///
    /// - Parameters:
    ///   - avatar: The avatar.
    ///   - field: The field named in the error.
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT`.
    public static func validateAvatar(_ avatar: String, field: String = "owner_avatar") throws(ShowroomError) {
        let rule = "\(field) is empty or at most \(maxAvatarBytes) bytes of UTF-8 without control characters"
        let bytes = avatar.utf8.count
        if bytes > maxAvatarBytes { throw .invalidArgument("\(field) is \(bytes) bytes; \(rule)") }
        try refuseControlCharacters(avatar, field: field, rule: rule)
    }

    // MARK: - Helpers

    private static func refuseControlCharacters(_ text: String, field: String, rule: String) throws(ShowroomError) {
        var offset = 0
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                throw .invalidArgument("\(field) holds control character \(code) at byte \(offset); \(rule)")
            }
            offset += UTF8.width(scalar)
        }
    }

    /// "byte 0x00 (NUL)", "byte 0x2F ('/')", for messages.
    private static func describe(byte: UInt8) -> String {
        let hex = "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        switch byte {
        case 0: return "byte \(hex) (NUL)"
        case 0x21...0x7E: return "byte \(hex) ('\(Character(Unicode.Scalar(byte)))')"
        default: return "byte \(hex)"
        }
    }

    /// The first bytes of a value, printable ASCII kept and the rest escaped as `\xNN`, for messages.
    static func preview(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int = 32) -> String {
        var text = "'"
        for byte in bytes.prefix(limit) {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "'") {
                text.append(Character(Unicode.Scalar(byte)))
            } else {
                text += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return text + (bytes.count > limit ? "'…" : "'")
    }
}
