import CZeroMQ

/// A libzmq context: the I/O threads and the sockets created from it.
///
/// A context is thread-safe and may be shared; its sockets are not (see ``Socket``). Sockets
/// created through this wrapper close with `LINGER 0`, and the context is created non-blocky, so
/// releasing the context never waits on undelivered messages.
public final class Context: Sendable {
    /// The raw `void*` context. Safe to share: libzmq contexts are thread-safe.
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer

    /// Creates a context.
    /// - Parameters:
    ///   - ioThreads: libzmq I/O threads (one handles about a gigabyte per second).
    ///   - maxSockets: the most sockets this context may hold at once.
    public init(ioThreads: Int = 1, maxSockets: Int = 4096) throws(ZeroMQError) {
        guard let handle = zmq_ctx_new() else { throw ZeroMQError.last("zmq_ctx_new") }
        self.handle = handle
        guard zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(ioThreads)) == 0,
              zmq_ctx_set(handle, ZMQ_MAX_SOCKETS, Int32(maxSockets)) == 0,
              zmq_ctx_set(handle, ZMQ_BLOCKY, 0) == 0
        else {
            let error = ZeroMQError.last("zmq_ctx_set")
            zmq_ctx_term(handle)
            throw error
        }
    }

    /// Makes every blocking call on this context's sockets return `ETERM`, from any thread.
    /// The owners still close their sockets; the context terminates when it is released.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        // Sockets hold a strong reference to their context, so every socket is closed by now.
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}
