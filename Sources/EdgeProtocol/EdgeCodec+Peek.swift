import ShowroomWire

extension EdgeCodec {
    /// The routing fields of an envelope (`kind`, `request_id`, `is_response`), read without
    /// decoding or copying the rest: how an edge answers a message it will not read in full (one
    /// over ``EdgeLimits/maxMessageBytes``) with the request's own id.
    ///
    /// Only the protobuf wire format is walked; a field that does not parse ends the walk with
    /// what was found so far, so this never fails and never reads past `bytes`.
    ///
    /// - Parameter bytes: Frame 0 of a message (the envelope), without the routing id.
    /// - Returns: An envelope with only those three fields set.
    public static func peekEnvelope(_ bytes: UnsafeRawBufferPointer) -> WireEnvelope {
        var envelope = WireEnvelope()
        var reader = WireReader(bytes: bytes)
        while let key = reader.varint() {
            let field = key >> 3
            switch key & 7 {
            case 0:
                guard let value = reader.varint() else { return envelope }
                switch field {
                case 1: envelope.kind = WireMessageKind(rawValue: Int(truncatingIfNeeded: Int32(truncatingIfNeeded: value))) ?? .unspecified
                case 2: envelope.requestID = value
                case 3: envelope.isResponse = value != 0
                default: break
                }
            case 1:
                guard reader.skip(8) else { return envelope }
            case 2:
                guard let length = reader.varint(), length <= UInt64(Int.max), reader.skip(Int(length)) else { return envelope }
            case 5:
                guard reader.skip(4) else { return envelope }
            default:
                return envelope
            }
        }
        return envelope
    }
}

/// A bounds-checked cursor over protobuf wire bytes.
private struct WireReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The next base-128 varint (at most 10 bytes), or nil at the end or on a malformed one.
    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// Skips `count` bytes; false if fewer are left.
    mutating func skip(_ count: Int) -> Bool {
        guard count <= bytes.count - offset else { return false }
        offset += count
        return true
    }
}
