/// Appends AccessToken2's little-endian fields to a byte buffer.
///
/// The layout is Agora's packer: integers little-endian, strings and byte blobs as a uint16
/// length followed by the bytes, privilege maps as a uint16 count followed by (uint16 key,
/// uint32 value) pairs in ascending key order.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func uint16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    /// A length-prefixed blob; `what` names the field in the error when it does not fit.
    mutating func blob(_ value: some Collection<UInt8>, _ what: String) throws(TokenError) {
        guard let count = UInt16(exactly: value.count) else {
            throw TokenError(.malformed, "cannot build the token: \(what) is \(value.count) bytes, the format allows at most 65535")
        }
        uint16(count)
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String, _ what: String) throws(TokenError) {
        try blob(value.utf8, what)
    }

    /// Keys ascending, as every reference implementation writes them, so tokens are byte-identical.
    mutating func privileges(_ map: [UInt16: UInt32], _ what: String) throws(TokenError) {
        guard let count = UInt16(exactly: map.count) else {
            throw TokenError(.malformed, "cannot build the token: \(what) has \(map.count) privileges, the format allows at most 65535")
        }
        uint16(count)
        for key in map.keys.sorted() {
            uint16(key)
            uint32(map[key]!)
        }
    }

    mutating func append(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }
}
