import CZlib

/// zlib streams for the token body: deflate exactly as the reference builders do (zlib's
/// `compress` at the default level, so tokens come out byte-identical) and a bounded inflate.
enum Zlib {
    /// Inflated bodies larger than this are refused: real tokens are a few hundred bytes, and the
    /// bound keeps a hostile token from making the verifier allocate without limit.
    static let maxInflatedSize = 64 * 1024

    static func deflate(_ input: [UInt8]) -> [UInt8] {
        var capacity = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { source in
                compress2(out.baseAddress, &capacity, source.baseAddress, uLong(source.count), Z_DEFAULT_COMPRESSION)
            }
        }
        // compressBound guarantees room and the level is valid, so only Z_MEM_ERROR remains.
        precondition(status == Z_OK, "zlib compress2 failed with status \(status) (out of memory)")
        output.removeSubrange(Int(capacity)...)
        return output
    }

    /// Inflates one complete zlib stream that must fill `input` exactly.
    static func inflate(_ input: [UInt8]) throws(TokenError) -> [UInt8] {
        var size = max(1024, min(maxInflatedSize, input.count * 8))
        while true {
            var output = [UInt8](repeating: 0, count: size)
            var produced = uLong(size)
            var consumed = uLong(input.count)
            let status = output.withUnsafeMutableBufferPointer { out in
                input.withUnsafeBufferPointer { source in
                    uncompress2(out.baseAddress, &produced, source.baseAddress, &consumed)
                }
            }
            switch status {
            case Z_OK:
                guard consumed == uLong(input.count) else {
                    throw TokenError(
                        .malformed,
                        "\(uLong(input.count) - consumed) unexpected bytes follow its zlib data")
                }
                output.removeSubrange(Int(produced)...)
                return output
            case Z_BUF_ERROR where size < maxInflatedSize:
                size = min(maxInflatedSize, size * 4)
            case Z_BUF_ERROR:
                throw TokenError(.malformed, "its content inflates to more than \(maxInflatedSize) bytes")
            case Z_MEM_ERROR:
                throw TokenError(.malformed, "it could not be inflated: out of memory")
            default:
                throw TokenError(
                    .malformed,
                    "the text after \"007\" is not zlib-compressed data (or it was cut short)")
            }
        }
    }
}
