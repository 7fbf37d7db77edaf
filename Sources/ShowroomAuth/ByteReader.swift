/// Reads AccessToken2's little-endian fields from a byte buffer, failing with
/// ``TokenError/Code/malformed`` (naming the field and offset) when the bytes run out.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }

    mutating func uint16(_ what: String) throws(TokenError) -> UInt16 {
        let raw = try take(2, what)
        return UInt16(raw[raw.startIndex]) | UInt16(raw[raw.startIndex + 1]) << 8
    }

    mutating func uint32(_ what: String) throws(TokenError) -> UInt32 {
        let raw = try take(4, what)
        var value: UInt32 = 0
        for (index, byte) in raw.enumerated() {
            value |= UInt32(byte) << UInt32(8 * index)
        }
        return value
    }

    mutating func blob(_ what: String) throws(TokenError) -> [UInt8] {
        let count = try uint16("length of \(what)")
        return Array(try take(Int(count), what))
    }

    /// A length-prefixed string that must be valid UTF-8: names are compared byte for byte, so a
    /// lossy decoding could make two different names look equal.
    mutating func string(_ what: String) throws(TokenError) -> String {
        let raw = try blob(what)
        guard let value = String(validating: raw, as: UTF8.self) else {
            throw TokenError(.malformed, "\(what) is not valid UTF-8")
        }
        return value
    }

    mutating func privileges(_ what: String) throws(TokenError) -> [UInt16: UInt32] {
        let count = try uint16("number of \(what)")
        var map: [UInt16: UInt32] = [:]
        for _ in 0..<count {
            let key = try uint16("key of \(what)")
            map[key] = try uint32("expire of \(what)")
        }
        return map
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    private mutating func take(_ count: Int, _ what: String) throws(TokenError) -> ArraySlice<UInt8> {
        guard count <= remaining else {
            throw TokenError(
                .malformed,
                "its content ends at byte \(bytes.count) while reading \(what) "
                    + "(\(count) bytes at offset \(offset)); the token was cut short or is not an AccessToken2 token")
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }
}
