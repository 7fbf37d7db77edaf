import CZeroMQ

/// One message frame, owning a `zmq_msg_t`.
///
/// `Message` is non-copyable because copying a `zmq_msg_t` bit for bit duplicates its
/// reference-counted content pointer, and closing both copies frees it twice. Use
/// ``copy()`` for a second reference to the same bytes (libzmq shares frames over 33 bytes by
/// reference count instead of copying them).
public struct Message: ~Copyable {
    var raw = zmq_msg_t()

    /// An empty frame.
    public init() {
        zmq_msg_init(&raw)
    }

    /// A frame holding a copy of `bytes`.
    public init(bytes: UnsafeRawBufferPointer) {
        zmq_msg_init_size(&raw, bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            zmq_msg_data(&raw).copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// A frame holding a copy of `bytes`.
    public init(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        zmq_msg_init_size(&raw, array.count)
        let data = zmq_msg_data(&raw)
        array.withUnsafeBytes { source in
            if let base = source.baseAddress, source.count > 0 {
                data?.copyMemory(from: base, byteCount: source.count)
            }
        }
    }

    /// A second reference to the same content; the bytes are not copied.
    public mutating func copy() -> Message {
        var other = Message()
        zmq_msg_copy(&other.raw, &raw)
        return other
    }

    /// Size of the frame in bytes.
    public mutating func count() -> Int {
        zmq_msg_size(&raw)
    }

    /// Calls `body` with the frame's bytes, valid only inside the call.
    public mutating func withUnsafeBytes<R, E: Error>(
        _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: zmq_msg_data(&raw), count: zmq_msg_size(&raw)))
    }

    /// A copy of the frame's bytes.
    public mutating func bytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// True if more frames of the same multipart message follow this received frame.
    public mutating func hasMore() -> Bool {
        zmq_msg_more(&raw) == 1
    }

    deinit {
        var raw = raw
        zmq_msg_close(&raw)
    }
}
