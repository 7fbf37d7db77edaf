/// The client↔edge protocol over WebSocket: one binary message carries what one ZeroMQ message
/// carries after its routing id — an envelope, and for a media frame its payload — as
/// `[envelope length: u32, big-endian][envelope][payload]`. A control message has no payload.
/// The envelopes, kinds and rules are those of the ZeroMQ client face (`proto/README.md`).
public enum WebSocketFraming {
    /// The bytes before the envelope.
    public static let prefixBytes = 4

    /// The size of the message of `envelope` and `payload`.
    public static func size(envelope: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer? = nil) -> Int {
        prefixBytes + envelope.count + (payload?.count ?? 0)
    }

    /// Writes one message — the length prefix, `envelope`, then `payload` (none for a control
    /// message) — piece by piece to `append`, so a caller fills whatever buffer it sends from.
    public static func write(envelope: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer? = nil,
                             to append: (UnsafeRawBufferPointer) -> Void) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: envelope.count).bigEndian) { append($0) }
        append(envelope)
        if let payload { append(payload) }
    }

    /// One message as bytes (``write(envelope:payload:to:)``).
    public static func message(envelope: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size(envelope: envelope, payload: payload))
        write(envelope: envelope, payload: payload) { bytes += $0 }
        return bytes
    }

    /// Where the envelope and the payload of `message` are, checked: the length prefix is there
    /// and names an envelope of at least one byte within the message.
    ///
    /// - Returns: The ranges of the envelope and the payload (empty: a control message).
    /// - Throws: `MALFORMED`, saying what is wrong.
    public static func parts(of message: UnsafeRawBufferPointer) throws(ShowroomError) -> (envelope: Range<Int>, payload: Range<Int>) {
        guard message.count >= prefixBytes else {
            throw .malformed("a WebSocket message starts with the envelope's length (4 bytes, big-endian); this one has \(message.count) bytes")
        }
        let length = Int(message[0]) << 24 | Int(message[1]) << 16 | Int(message[2]) << 8 | Int(message[3])
        guard length > 0, length <= message.count - prefixBytes else {
            throw .malformed("the envelope length \(length) does not fit a \(message.count)-byte WebSocket message")
        }
        let end = prefixBytes + length
        return (prefixBytes..<end, end..<message.count)
    }
}
