import ShowroomWire

/// The rules for the names a room is created with: its id, display name and channel.
enum RoomNames {
    /// Characters of generated room ids.
    static let generatedAlphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    /// Length of generated room ids.
    static let generatedLength = 12
    /// A new room id: 12 characters [a-z0-9].
    static func generateRoomID(using generator: inout some RandomNumberGenerator) -> String {
        var id = ""
        id.reserveCapacity(generatedLength)
        for _ in 0..<generatedLength {
            id.append(generatedAlphabet[Int.random(in: 0..<generatedAlphabet.count, using: &generator)])
        }
        return id
    }

    /// The display name trimmed of surrounding white space, or the refusal of one that is empty,
    /// too long or holds control characters (``Names/validateDisplayName(_:field:allowEmpty:)``).
    static func validated(name: String) throws(ShowroomError) -> String {
        // The bound comes first: trimming a megabyte of hostile text is work for nothing.
        guard name.utf8.count <= 4 * Names.maxDisplayNameBytes else {
            throw .invalidArgument("name is \(name.utf8.count) bytes; a room name is 1 – \(Names.maxDisplayNameCharacters) characters (at most \(Names.maxDisplayNameBytes) bytes of UTF-8)")
        }
        let trimmed = name.trimmedOfWhitespace
        try Names.validateDisplayName(trimmed, field: "name", allowEmpty: false)
        return trimmed
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
