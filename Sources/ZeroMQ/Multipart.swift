import CZeroMQ

/// The frames of one multipart message, in storage that is reused from message to message.
///
/// A `Multipart` is the receive buffer and the send source of the hot path: receiving into it
/// allocates nothing once its capacity is reached, and sending from it sends *references* to its
/// frames (`zmq_msg_copy`), so one received frame can be forwarded to many peers without its
/// bytes being copied. It is confined to one thread like the socket it is used with.
public final class Multipart {
    private var frames: UnsafeMutablePointer<zmq_msg_t>
    private var capacity: Int
    /// Number of frames held.
    public private(set) var count = 0

    /// Creates an empty set of frames with room for `capacity` before it grows.
    public init(capacity: Int = 4) {
        self.capacity = max(capacity, 1)
        frames = .allocate(capacity: self.capacity)
    }

    /// Creates frames holding copies of `parts`.
    public convenience init(_ parts: [[UInt8]]) {
        self.init(capacity: parts.count)
        for part in parts { append(part) }
    }

    deinit {
        removeAll()
        frames.deallocate()
    }

    /// True when no frame is held.
    public var isEmpty: Bool { count == 0 }

    /// Closes every frame; the storage is kept for reuse.
    public func removeAll() {
        for i in 0..<count { zmq_msg_close(frames + i) }
        count = 0
    }

    /// Appends a frame holding a copy of `bytes`.
    public func append(bytes: UnsafeRawBufferPointer) {
        let slot = nextSlot()
        zmq_msg_init_size(slot, bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            zmq_msg_data(slot).copyMemory(from: base, byteCount: bytes.count)
        }
        count += 1
    }

    /// Appends a frame holding a copy of `bytes`.
    public func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append(bytes: $0) }
    }

    /// Appends a frame that shares the content of `other`'s frame `index` (no byte copy for
    /// frames over 33 bytes).
    public func append(referenceTo index: Int, of other: Multipart) {
        precondition(index >= 0 && index < other.count, "frame \(index) out of 0..<\(other.count)")
        let slot = nextSlot()
        zmq_msg_init(slot)
        // `other.frames` is read after growing, in case `other` is `self`.
        zmq_msg_copy(slot, other.frames + index)
        count += 1
    }

    /// Appends a frame, taking ownership of it.
    public func append(_ message: consuming Message) {
        let slot = nextSlot()
        zmq_msg_init(slot)
        zmq_msg_move(slot, &message.raw)
        count += 1
    }

    /// Size in bytes of frame `index`.
    public func size(of index: Int) -> Int {
        zmq_msg_size(frame(index))
    }

    /// The descriptor of the TCP connection frame `index` was received on (`ZMQ_SRCFD`), or `nil`
    /// for a frame that was not received from a stream connection. The descriptor belongs to
    /// libzmq's I/O thread and may be closed and reused as soon as the peer goes: use it to
    /// recognise a connection, never to read or write.
    public func sourceDescriptor(of index: Int) -> Int32? {
        let fd = zmq_msg_get(frame(index), ZMQ_SRCFD)
        return fd >= 0 ? fd : nil
    }

    /// Calls `body` with the bytes of frame `index`, valid only inside the call.
    public func withBytes<R, E: Error>(
        of index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let f = frame(index)
        return try body(UnsafeRawBufferPointer(start: zmq_msg_data(f), count: zmq_msg_size(f)))
    }

    /// A copy of the bytes of frame `index`.
    public func bytes(of index: Int) -> [UInt8] {
        withBytes(of: index) { Array($0) }
    }

    /// Copies of all frames' bytes.
    public var allBytes: [[UInt8]] {
        (0..<count).map { bytes(of: $0) }
    }

    /// The `zmq_msg_t` of frame `index`, for the socket.
    func frame(_ index: Int) -> UnsafeMutablePointer<zmq_msg_t> {
        precondition(index >= 0 && index < count, "frame \(index) out of 0..<\(count)")
        return frames + index
    }

    /// Storage for one more frame (uninitialised); the caller initialises it and bumps `count`.
    private func nextSlot() -> UnsafeMutablePointer<zmq_msg_t> {
        if count == capacity {
            let grown = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: capacity * 2)
            // A bitwise move keeps each frame's single owner: the old storage is not closed.
            grown.moveInitialize(from: frames, count: count)
            frames.deallocate()
            frames = grown
            capacity *= 2
        }
        return frames + count
    }

    /// Receives into the next slot; on failure the slot is left unused.
    func receiveFrame(from socket: UnsafeMutableRawPointer, flags: Int32) -> (ok: Bool, more: Bool) {
        let slot = nextSlot()
        zmq_msg_init(slot)
        if zmq_msg_recv(slot, socket, flags) < 0 {
            zmq_msg_close(slot)
            return (false, false)
        }
        count += 1
        return (true, zmq_msg_more(slot) == 1)
    }
}
