import ShowroomWire

/// The rules for the names a room is created with: its id, display name and channel.
enum RoomNames {
    /// Characters of generated room ids.
    static let generatedAlphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    /// Length of generated room ids.
    static let generatedLength = 12
    /// Longest room id, in characters of [A-Za-z0-9_-].
    static let maxRoomIDLength = 64
    /// Longest room name, in characters after trimming.
    static let maxNameLength = 64
    /// Longest channel name, in UTF-8 bytes (what the RTC channels accept).
    static let maxChannelBytes = 64

    /// A new room id: 12 characters [a-z0-9].
    static func generateRoomID(using generator: inout some RandomNumberGenerator) -> String {
        var id = ""
        id.reserveCapacity(generatedLength)
        for _ in 0..<generatedLength {
            id.append(generatedAlphabet[Int.random(in: 0..<generatedAlphabet.count, using: &generator)])
        }
        return id
    }

    /// Refuses a room id outside [A-Za-z0-9_-]{1,64}.
    static func validate(roomID: String) throws(ShowroomError) {
        guard roomID.utf8.count <= maxRoomIDLength,
              roomID.utf8.allSatisfy({ byte in
                  switch byte {
                  case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                       UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                      return true
                  default:
                      return false
                  }
              })
        else {
            throw .invalidArgument(
                "room_id '\(roomID)' is not allowed; use 1 – \(maxRoomIDLength) characters of A-Z, a-z, 0-9, '_' and '-', or leave it empty to get one made")
        }
    }

    /// The display name trimmed of surrounding white space, or the refusal of one that is empty or too long.
    static func validated(name: String) throws(ShowroomError) -> String {
        let trimmed = name.trimmedOfWhitespace
        guard !trimmed.isEmpty else { throw .invalidArgument("name is empty; give the room a name of 1 – \(maxNameLength) characters") }
        guard trimmed.count <= maxNameLength else {
            throw .invalidArgument("name has \(trimmed.count) characters; a room name has at most \(maxNameLength)")
        }
        return trimmed
    }

    /// Refuses a channel name longer than 64 UTF-8 bytes or holding control characters.
    static func validate(channel: String) throws(ShowroomError) {
        guard !channel.isEmpty, channel.utf8.count <= maxChannelBytes else {
            throw .invalidArgument(
                "channel is \(channel.utf8.count) bytes; give 1 – \(maxChannelBytes) UTF-8 bytes, or leave it empty to use the room id")
        }
        guard !channel.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArgument("channel '\(channel.debugDescription)' holds control characters; use printable characters only")
        }
    }
}

extension String {
    /// The string without white space (and newlines) at either end.
    var trimmedOfWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
