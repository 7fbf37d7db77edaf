import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket types the cluster uses. Draft types (RADIO/DISH, CLIENT/SERVER) are deliberately
/// absent: Debian's libzmq has no draft API and aborts on them.
public enum SocketType: Int32, Sendable, CustomStringConvertible {
    case pair = 0  // ZMQ_PAIR
    case pub = 1  // ZMQ_PUB
    case sub = 2  // ZMQ_SUB
    case req = 3  // ZMQ_REQ
    case rep = 4  // ZMQ_REP
    case dealer = 5  // ZMQ_DEALER
    case router = 6  // ZMQ_ROUTER
    case pull = 7  // ZMQ_PULL
    case push = 8  // ZMQ_PUSH
    case xpub = 9  // ZMQ_XPUB
    case xsub = 10  // ZMQ_XSUB

    public var description: String {
        switch self {
        case .pair: "PAIR"
        case .pub: "PUB"
        case .sub: "SUB"
        case .req: "REQ"
        case .rep: "REP"
        case .dealer: "DEALER"
        case .router: "ROUTER"
        case .pull: "PULL"
        case .push: "PUSH"
        case .xpub: "XPUB"
        case .xsub: "XSUB"
        }
    }
}

/// What happened to a non-blocking send. The two refusals are normal events on a busy or changing
/// cluster, so they are values the caller must look at, not errors.
public enum SendOutcome: Sendable, Equatable {
    /// The message was queued whole.
    case sent
    /// The peer (or every peer) is at its high-water mark (`EAGAIN`); nothing was queued.
    case wouldBlock
    /// No peer has that routing id (`EHOSTUNREACH`, ROUTER with `ROUTER_MANDATORY`); nothing was
    /// queued.
    case hostUnreachable
}

/// Readiness conditions of a socket (`ZMQ_POLLIN`, `ZMQ_POLLOUT`, `ZMQ_POLLERR`).
public struct PollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    /// A message can be received.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition (plain file descriptors only).
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}

/// A ZeroMQ socket, confined to the thread that created it.
///
/// libzmq sockets are not thread-safe, so `Socket` is not `Sendable` and every call checks that
/// it runs on the owning thread. Sends never block: they report a full peer or an unknown peer as
/// a ``SendOutcome``. The socket is closed with `LINGER 0` (set at creation), so closing it never
/// waits for undelivered messages.
public final class Socket {
    /// The socket's type.
    public let type: SocketType
    let handle: UnsafeMutableRawPointer
    private let context: Context  // keeps the context alive until this socket is closed
    private let owner = OwningThread("ZeroMQ socket")
    private(set) var isClosed = false
    /// Set by every operation on the socket and cleared by the ``EventLoop`` when it re-reads
    /// `ZMQ_EVENTS`: any libzmq call may consume the socket's edge-triggered notification, so a
    /// used socket must be checked again before the loop sleeps.
    var usedSinceEventCheck = false
    /// Called by the first use after that check: the loop watching the socket queues it then.
    var onUseAfterEventCheck: (() -> Void)?
    /// Scratch frame for sends of shared references; reused so forwarding allocates nothing.
    private let scratch = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)

    /// Creates a socket of `type` in `context`, owned by the calling thread.
    public init(_ type: SocketType, context: Context) throws(ZeroMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            scratch.deallocate()
            throw ZeroMQError.last("zmq_socket \(type)")
        }
        self.type = type
        self.handle = handle
        self.context = context
        var zero: Int32 = 0
        zmq_setsockopt(handle, ZMQ_LINGER, &zero, MemoryLayout<Int32>.size)
    }

    /// Checks that the caller owns the socket and notes the use for the event loop.
    @inline(__always)
    private func use() {
        owner.check()
        noteUse()
    }

    private func noteUse() {
        guard !usedSinceEventCheck else { return }
        usedSinceEventCheck = true
        onUseAfterEventCheck?()
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// The raw libzmq socket, for C code the wrapper does not cover (and for measuring the wrapper
    /// against plain C). The thread rule still holds: use it on the owning thread only.
    public var unsafeHandle: UnsafeMutableRawPointer {
        use()
        return handle
    }

    /// Closes the socket; unsent messages are dropped. Safe to call twice.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        noteUse()  // so a loop that still has it registered notices
        zmq_close(handle)
    }

    // MARK: Endpoints

    /// Binds to `endpoint` (`tcp://127.0.0.1:*` picks an ephemeral port) and returns the endpoint
    /// actually bound.
    @discardableResult
    public func bind(_ endpoint: String) throws(ZeroMQError) -> String {
        use()
        guard zmq_bind(handle, endpoint) == 0 else { throw ZeroMQError.last("bind \(endpoint)") }
        return try lastEndpoint()
    }

    /// Connects to `endpoint`; the connection is made (and remade) in the background.
    public func connect(_ endpoint: String) throws(ZeroMQError) {
        use()
        guard zmq_connect(handle, endpoint) == 0 else { throw ZeroMQError.last("connect \(endpoint)") }
    }

    /// Stops listening on `endpoint`.
    public func unbind(_ endpoint: String) throws(ZeroMQError) {
        use()
        guard zmq_unbind(handle, endpoint) == 0 else { throw ZeroMQError.last("unbind \(endpoint)") }
    }

    /// Drops the connection to `endpoint`.
    public func disconnect(_ endpoint: String) throws(ZeroMQError) {
        use()
        guard zmq_disconnect(handle, endpoint) == 0 else {
            throw ZeroMQError.last("disconnect \(endpoint)")
        }
    }

    /// The endpoint most recently bound or connected (`ZMQ_LAST_ENDPOINT`).
    public func lastEndpoint() throws(ZeroMQError) -> String {
        use()
        var buffer = [CChar](repeating: 0, count: 256)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else {
            throw ZeroMQError.last("getsockopt LAST_ENDPOINT")
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    // MARK: Options

    /// Sets an integer option (see ``SocketOption``).
    public func set(_ option: SocketOption, _ value: Int32) throws(ZeroMQError) {
        use()
        var v = value
        guard zmq_setsockopt(handle, option.rawValue, &v, MemoryLayout<Int32>.size) == 0 else {
            throw ZeroMQError.last("setsockopt \(option) = \(value)")
        }
    }

    /// Sets a 64-bit integer option (`MAXMSGSIZE`).
    public func set(_ option: SocketOption, int64 value: Int64) throws(ZeroMQError) {
        use()
        var v = value
        guard zmq_setsockopt(handle, option.rawValue, &v, MemoryLayout<Int64>.size) == 0 else {
            throw ZeroMQError.last("setsockopt \(option) = \(value)")
        }
    }

    /// Sets a binary option (`ROUTING_ID`, `SUBSCRIBE`, `UNSUBSCRIBE`).
    public func set(_ option: SocketOption, bytes: [UInt8]) throws(ZeroMQError) {
        use()
        let rc = bytes.withUnsafeBytes { zmq_setsockopt(handle, option.rawValue, $0.baseAddress, $0.count) }
        guard rc == 0 else { throw ZeroMQError.last("setsockopt \(option)") }
    }

    /// Reads an integer option.
    public func get(_ option: SocketOption) throws(ZeroMQError) -> Int32 {
        use()
        var v: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, option.rawValue, &v, &size) == 0 else {
            throw ZeroMQError.last("getsockopt \(option)")
        }
        return v
    }

    /// Sets both high-water marks (messages queued per peer before sends report ``SendOutcome/wouldBlock``).
    public func setHighWaterMarks(send: Int32, receive: Int32) throws(ZeroMQError) {
        try set(.sendHighWaterMark, send)
        try set(.receiveHighWaterMark, receive)
    }

    /// Limits the size of a received message: a peer sending a larger one is disconnected.
    public func setMaxMessageSize(_ bytes: Int64) throws(ZeroMQError) {
        try set(.maxMessageSize, int64: bytes)
    }

    /// Sets the routing id this socket presents to a ROUTER peer (set before connecting).
    public func setRoutingID(_ id: [UInt8]) throws(ZeroMQError) {
        try set(.routingID, bytes: id)
    }

    /// ZMTP heartbeats: ping every `interval` ms, drop the connection after `timeout` ms without
    /// traffic, and ask the peer to drop it after `ttl` ms.
    public func setHeartbeat(intervalMs: Int32, timeoutMs: Int32, ttlMs: Int32) throws(ZeroMQError) {
        try set(.heartbeatInterval, intervalMs)
        try set(.heartbeatTimeout, timeoutMs)
        try set(.heartbeatTTL, ttlMs)
    }

    /// TCP keepalive: enabled with probes after `idle` s, every `interval` s, `count` times.
    public func setTCPKeepalive(idleSeconds: Int32, intervalSeconds: Int32, count: Int32) throws(ZeroMQError) {
        try set(.tcpKeepalive, 1)
        try set(.tcpKeepaliveIdle, idleSeconds)
        try set(.tcpKeepaliveInterval, intervalSeconds)
        try set(.tcpKeepaliveCount, count)
    }

    /// Subscribes a SUB socket to messages whose first frame starts with `prefix` (empty: all).
    public func subscribe(_ prefix: [UInt8] = []) throws(ZeroMQError) {
        try set(.subscribe, bytes: prefix)
    }

    /// Readiness right now (`ZMQ_EVENTS`). libzmq's notification fd is edge-triggered, so a loop
    /// that waits on it must re-read this after every send and receive; ``EventLoop`` does.
    public func events() throws(ZeroMQError) -> PollEvents {
        PollEvents(rawValue: Int16(try get(.events)))
    }

    /// Waits up to `timeout` for the socket to become ready for `events`, and returns the events
    /// that are ready (empty on timeout). For threads that own a single socket; an
    /// ``EventLoop`` polls its sockets itself.
    public func poll(_ events: PollEvents = .readable, timeout: Duration) throws(ZeroMQError) -> PollEvents {
        use()
        var item = zmq_pollitem_t(socket: handle, fd: 0, events: events.rawValue, revents: 0)
        while zmq_poll(&item, 1, Int(timeout.milliseconds)) < 0 {
            let error = zmq_errno()
            if error != EINTR { throw ZeroMQError(errno: error, operation: "poll on \(type)") }
        }
        return PollEvents(rawValue: item.revents)
    }

    // MARK: Sending

    /// Sends one frame copied from `bytes`, never blocking.
    public func send(bytes: UnsafeRawBufferPointer, more: Bool = false) throws(ZeroMQError) -> SendOutcome {
        use()
        let flags = ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)
        if zmq_send(handle, bytes.baseAddress, bytes.count, flags) >= 0 { return .sent }
        return try refusal("send")
    }

    /// Sends one frame copied from `bytes`, never blocking.
    public func send(_ bytes: [UInt8], more: Bool = false) throws(ZeroMQError) -> SendOutcome {
        // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(ZeroMQError) in try send(bytes: buffer, more: more) }
        }.get()
    }

    /// Sends `frames` as one multipart message, never blocking.
    public func send(frames: [[UInt8]]) throws(ZeroMQError) -> SendOutcome {
        precondition(!frames.isEmpty, "a message has at least one frame")
        let first = try send(frames[0], more: frames.count > 1)
        guard first == .sent else { return first }
        for i in frames.indices.dropFirst() {
            try sendContinuation { (handle) in
                frames[i].withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, Self.flags(more: i < frames.count - 1)) }
            }
        }
        return .sent
    }

    /// Sends a frame, taking ownership of it. The frame is sent without copying its bytes.
    public func send(_ message: consuming Message, more: Bool = false) throws(ZeroMQError) -> SendOutcome {
        use()
        if zmq_msg_send(&message.raw, handle, Self.flags(more: more)) >= 0 { return .sent }
        return try refusal("send")
    }

    /// Sends frames `from...` of `parts` as one multipart message, as shared references: `parts`
    /// is left intact so it can be sent again to other peers.
    public func send(_ parts: Multipart, from start: Int = 0) throws(ZeroMQError) -> SendOutcome {
        use()
        precondition(start < parts.count, "no frame to send")
        zmq_msg_init(scratch)
        zmq_msg_copy(scratch, parts.frame(start))
        if zmq_msg_send(scratch, handle, Self.flags(more: start < parts.count - 1)) < 0 {
            zmq_msg_close(scratch)
            return try refusal("send")
        }
        try sendRest(of: parts, after: start)
        return .sent
    }

    /// Sends `parts` (frames `from...`) to the peer with `routingID`, through a ROUTER: the
    /// fan-out primitive. The frames are shared references, never copies of their bytes.
    /// Returns ``SendOutcome/wouldBlock`` when that peer is at its high-water mark and
    /// ``SendOutcome/hostUnreachable`` when no such peer is connected (with `ROUTER_MANDATORY`).
    public func send(to routingID: UnsafeRawBufferPointer, _ parts: Multipart, from start: Int = 0) throws(ZeroMQError) -> SendOutcome {
        use()
        precondition(start < parts.count, "no frame to send")
        if zmq_send(handle, routingID.baseAddress, routingID.count, ZMQ_DONTWAIT | ZMQ_SNDMORE) < 0 {
            return try refusal("send to peer")
        }
        try sendRest(of: parts, after: start - 1)
        return .sent
    }

    /// Sends `parts` to the peer with `routingID` (see ``send(to:_:from:)-(UnsafeRawBufferPointer,_,_)``).
    public func send(to routingID: [UInt8], _ parts: Multipart, from start: Int = 0) throws(ZeroMQError) -> SendOutcome {
        try routingID.withUnsafeBytes { id in
            Result { () throws(ZeroMQError) in try send(to: id, parts, from: start) }
        }.get()
    }

    /// Sends frames after `index` of `parts`: the remainder of a multipart message whose first
    /// frame was accepted. libzmq accepts the rest of a message once its first frame is queued.
    private func sendRest(of parts: Multipart, after index: Int) throws(ZeroMQError) {
        var i = index + 1
        while i < parts.count {
            let frame = parts.frame(i)
            let more = i < parts.count - 1
            try sendContinuation { (handle) in
                zmq_msg_init(scratch)
                zmq_msg_copy(scratch, frame)
                let rc = zmq_msg_send(scratch, handle, Self.flags(more: more))
                if rc < 0 { zmq_msg_close(scratch) }
                return rc
            }
            i += 1
        }
    }

    /// Runs a send of a later frame of a multipart message, which must not be refused.
    private func sendContinuation(_ body: (UnsafeMutableRawPointer) -> Int32) throws(ZeroMQError) {
        while body(handle) < 0 {
            let error = zmq_errno()
            if error == EINTR { continue }
            throw ZeroMQError(errno: error, operation: "send of a later frame")
        }
    }

    @inline(__always)
    private static func flags(more: Bool) -> Int32 {
        more ? ZMQ_DONTWAIT | ZMQ_SNDMORE : ZMQ_DONTWAIT
    }

    /// Maps a failed first-frame send to its outcome, or throws what is a real error.
    private func refusal(_ operation: StaticString) throws(ZeroMQError) -> SendOutcome {
        let error = zmq_errno()
        switch error {
        case EAGAIN: return .wouldBlock
        case EHOSTUNREACH: return .hostUnreachable
        default: throw ZeroMQError(errno: error, operation: "\(operation) on \(type)")
        }
    }

    // MARK: Receiving

    /// Receives one whole multipart message into `parts` (replacing what it held).
    /// Returns false, with `parts` empty, when no message is waiting and `wait` is false.
    public func receive(into parts: Multipart, wait: Bool = false) throws(ZeroMQError) -> Bool {
        use()
        parts.removeAll()
        while true {
            let result = parts.receiveFrame(from: handle, flags: parts.isEmpty && !wait ? ZMQ_DONTWAIT : 0)
            if !result.ok {
                let error = zmq_errno()
                if error == EINTR { continue }
                if error == EAGAIN && parts.isEmpty { return false }
                parts.removeAll()
                throw ZeroMQError(errno: error, operation: "receive on \(type)")
            }
            if !result.more { return true }
        }
    }

    /// Receives one whole multipart message as copies of its frames' bytes, or nil when none is
    /// waiting and `wait` is false. For control messages; the hot path uses ``receive(into:wait:)``.
    public func receiveFrames(wait: Bool = false) throws(ZeroMQError) -> [[UInt8]]? {
        let parts = Multipart()
        return try receive(into: parts, wait: wait) ? parts.allBytes : nil
    }
}

@available(*, unavailable, message: "ZeroMQ sockets are confined to the thread that created them")
extension Socket: Sendable {}

/// Socket options the cluster sets, by their libzmq numbers.
public enum SocketOption: Int32, Sendable {
    case routingID = 5  // ZMQ_ROUTING_ID
    case sendBuffer = 11  // ZMQ_SNDBUF: kernel send buffer, bytes
    case receiveBuffer = 12  // ZMQ_RCVBUF: kernel receive buffer, bytes
    case subscribe = 6  // ZMQ_SUBSCRIBE
    case unsubscribe = 7  // ZMQ_UNSUBSCRIBE
    case receiveMore = 13  // ZMQ_RCVMORE
    case fileDescriptor = 14  // ZMQ_FD: readable when the socket's readiness may have changed
    case events = 15  // ZMQ_EVENTS
    case linger = 17  // ZMQ_LINGER
    case reconnectInterval = 18  // ZMQ_RECONNECT_IVL
    case reconnectIntervalMax = 21  // ZMQ_RECONNECT_IVL_MAX
    case maxMessageSize = 22  // ZMQ_MAXMSGSIZE (Int64)
    case sendHighWaterMark = 23  // ZMQ_SNDHWM
    case receiveHighWaterMark = 24  // ZMQ_RCVHWM
    case routerMandatory = 33  // ZMQ_ROUTER_MANDATORY
    case tcpKeepalive = 34  // ZMQ_TCP_KEEPALIVE
    case tcpKeepaliveCount = 35  // ZMQ_TCP_KEEPALIVE_CNT
    case tcpKeepaliveIdle = 36  // ZMQ_TCP_KEEPALIVE_IDLE
    case tcpKeepaliveInterval = 37  // ZMQ_TCP_KEEPALIVE_INTVL
    case immediate = 39  // ZMQ_IMMEDIATE
    case xpubVerbose = 40  // ZMQ_XPUB_VERBOSE
    case routerHandover = 56  // ZMQ_ROUTER_HANDOVER
    case heartbeatInterval = 75  // ZMQ_HEARTBEAT_IVL
    case heartbeatTTL = 76  // ZMQ_HEARTBEAT_TTL
    case heartbeatTimeout = 77  // ZMQ_HEARTBEAT_TIMEOUT
    case connectTimeout = 79  // ZMQ_CONNECT_TIMEOUT
    case curveServer = 47  // ZMQ_CURVE_SERVER
    case curvePublicKey = 48  // ZMQ_CURVE_PUBLICKEY (Z85 text)
    case curveSecretKey = 49  // ZMQ_CURVE_SECRETKEY (Z85 text)
    case curveServerKey = 50  // ZMQ_CURVE_SERVERKEY (Z85 text)
    case zapDomain = 55  // ZMQ_ZAP_DOMAIN (text)
    case handshakeInterval = 66  // ZMQ_HANDSHAKE_IVL: ms a new connection may take to handshake
}
