import Foundation
import Logging
import Metrics
import ShowroomWire
import SwiftProtobuf
import ZeroMQ

/// Outgoing connections from this node to other members' cluster endpoints: one DEALER per
/// endpoint, made on first use and owned by the node's loop; plus the requests in flight on them.
///
/// Gossip is one-way (answers come back as messages of their own to this node's ROUTER), so a
/// link carries, back towards us, only answers to requests. A peer at its high-water mark or gone
/// drops what is sent to it (`wouldBlock` is counted, never waited on): a slow or vanished member
/// never holds up the others.
final class PeerLinks {
    /// Counters of what this node sent and received over its links and cluster socket.
    struct Traffic {
        var messagesSent: UInt64 = 0
        var bytesSent: UInt64 = 0
        var messagesReceived: UInt64 = 0
        var bytesReceived: UInt64 = 0
        var refused: UInt64 = 0
    }

    private struct Pending {
        let completion: (Result<WireEnvelope, ShowroomError>) -> Void
        let timer: TimerID
        let endpoint: String
    }

    private let loop: EventLoop
    private let nodeID: String
    private let logger: Logger
    private let highWaterMark: Int32
    /// CURVE keys for links to cluster endpoints; nil: plain links.
    private let credentials: ClusterCredentials?
    private var sockets: [String: Socket] = [:]
    /// Each link's monitor: broken connections, and refused handshakes on CURVE links.
    private var monitors: [String: SocketMonitor] = [:]
    /// Links whose connection broke and is not up again (the peer most likely died; the
    /// membership will say so in a moment).
    private var down: Set<String> = []
    /// When each link last carried a message.
    private var lastUsed: [String: ContinuousClock.Instant] = [:]

    /// Whether the connection to `endpoint` broke and is not up again.
    func isBroken(_ endpoint: String) -> Bool { down.contains(endpoint) }
    /// How long a link whose handshake was refused rests before it is made anew: libzmq gives up
    /// on such a connection for good (a member whose key the peer learns later, a peer that
    /// restarted with another keyring).
    static let refusedLinkRest = Duration.seconds(1)
    private var pending: [UInt64: Pending] = [:]
    private var nextRequestID: UInt64 = 1
    private let frames = Multipart()
    /// Traffic by message kind, for gossip accounting.
    private(set) var traffic: [WireMessageKind: Traffic] = [:]
    /// The same, as swift-metrics counters (made once per kind).
    private var sentCounters: [WireMessageKind: (messages: Counter, bytes: Counter)] = [:]

    init(loop: EventLoop, nodeID: String, highWaterMark: Int32, credentials: ClusterCredentials? = nil, logger: Logger) {
        self.credentials = credentials
        self.loop = loop
        self.nodeID = nodeID
        self.highWaterMark = highWaterMark
        self.logger = logger
    }

    /// Sends a one-way message (request id 0) to the member at `endpoint`.
    @discardableResult
    func sendOneWay(_ envelope: WireEnvelope, to endpoint: String) -> SendOutcome {
        var envelope = envelope
        envelope.senderNode = nodeID
        envelope.protocolVersion = WireEnvelope.currentProtocolVersion
        return send(envelope, to: endpoint)
    }

    /// Sends a request to `endpoint` and calls `completion` on the loop with the answer, or with
    /// `deadlineExceeded` after `timeout`, or `unavailable` if it could not be sent.
    func request(_ kind: WireMessageKind, body: some SwiftProtobuf.Message, to endpoint: String, timeout: Duration,
                 completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        let envelope: WireEnvelope
        do {
            envelope = try WireEnvelope(request: kind, id: 0, body: body, senderNode: nodeID)
        } catch {
            completion(.failure(error))
            return
        }
        request(envelope, to: endpoint, timeout: timeout, completion: completion)
    }

    /// Sends a request whose envelope is already made (kind, body, flags); a fresh request id and
    /// the deadline are filled in. A forwarded request keeps everything else it carried.
    func request(_ prepared: WireEnvelope, to endpoint: String, timeout: Duration,
                 completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        let id = nextRequestID
        nextRequestID += 1
        var envelope = prepared
        envelope.requestID = id
        envelope.isResponse = false
        envelope.senderNode = nodeID
        envelope.protocolVersion = WireEnvelope.currentProtocolVersion
        envelope.deadlineMs = UInt32(clamping: timeout.milliseconds)
        let kind = envelope.kind
        switch send(envelope, to: endpoint) {
        case .sent:
            let timer = loop.scheduleTimer(after: timeout) { [weak self] in
                guard let self, let request = self.pending.removeValue(forKey: id) else { return }
                request.completion(.failure(.deadlineExceeded("\(kind) request to \(endpoint) got no answer within \(timeout)")))
            }
            pending[id] = Pending(completion: completion, timer: timer, endpoint: endpoint)
        case .wouldBlock, .hostUnreachable:
            completion(.failure(.unavailable("\(endpoint) is not accepting messages (queue full or unreachable)")))
        }
    }

    /// The endpoints this node holds a link to.
    var linkedEndpoints: Set<String> { Set(sockets.keys) }

    /// Closes the links to endpoints not in `keeping` that carried nothing for `idle` and wait for
    /// no answer: a member gone is closed when the membership says so, but a message sent to it
    /// afterwards (a late reply, a probe of a remembered dead member, a restarted member's old
    /// endpoint) makes the link anew, and nothing else would close it. Each link holds a socket
    /// and its monitor, so a cluster whose members come and go would otherwise grow for ever.
    ///
    /// - Returns: The endpoints closed.
    @discardableResult
    func closeIdleLinks(keeping: Set<String>, idle: Duration, now: ContinuousClock.Instant = .now) -> [String] {
        let waiting = Set(pending.values.map(\.endpoint))
        let idleOnes = sockets.keys.filter { endpoint in
            !keeping.contains(endpoint) && !waiting.contains(endpoint) && (lastUsed[endpoint].map { now - $0 >= idle } ?? true)
        }.sorted()
        for endpoint in idleOnes { close(endpoint) }
        return idleOnes
    }

    /// Closes the link to `endpoint` (a member that is gone); its requests in flight fail now.
    func close(_ endpoint: String) {
        down.remove(endpoint)
        lastUsed[endpoint] = nil
        guard let socket = sockets.removeValue(forKey: endpoint) else { return }
        if let monitor = monitors.removeValue(forKey: endpoint) {
            loop.unregister(monitor.socket)
            monitor.stop()
        }
        loop.unregister(socket)
        socket.close()
        failPending(to: endpoint, "the link to \(endpoint) was closed: the member left or died")
    }

    /// Fails the requests waiting for an answer from `endpoint`.
    private func failPending(to endpoint: String, _ why: String) {
        for (id, request) in pending.sorted(by: { $0.key < $1.key }) where request.endpoint == endpoint {
            pending[id] = nil
            loop.cancelTimer(request.timer)
            request.completion(.failure(.unavailable(why)))
        }
    }

    /// Endpoints with an open link.
    var endpoints: [String] { Array(sockets.keys) }

    /// Counts a message this node received on its cluster socket.
    func countReceived(kind: WireMessageKind, bytes: Int) {
        traffic[kind, default: Traffic()].messagesReceived += 1
        traffic[kind, default: Traffic()].bytesReceived += UInt64(bytes)
    }

    private func send(_ envelope: WireEnvelope, to endpoint: String) -> SendOutcome {
        let bytes: [UInt8]
        do {
            bytes = try envelope.serializedBytes()
        } catch {
            logger.error("cannot serialize \(envelope.kind)", metadata: ["error": "\(error)"])
            return .hostUnreachable
        }
        do {
            let outcome = try link(to: endpoint).send(bytes)
            lastUsed[endpoint] = .now
            if outcome == .sent {
                traffic[envelope.kind, default: Traffic()].messagesSent += 1
                traffic[envelope.kind, default: Traffic()].bytesSent += UInt64(bytes.count)
                let counters = sentCounters[envelope.kind] ?? Self.counters(for: envelope.kind)
                sentCounters[envelope.kind] = counters
                counters.messages.increment()
                counters.bytes.increment(by: bytes.count)
            } else {
                traffic[envelope.kind, default: Traffic()].refused += 1
            }
            return outcome
        } catch {
            logger.warning("cannot send to \(endpoint)", metadata: ["error": "\(error)"])
            return .hostUnreachable
        }
    }

    private static func counters(for kind: WireMessageKind) -> (messages: Counter, bytes: Counter) {
        let dimensions = [("kind", "\(kind)")]
        return (Counter(label: "cluster.messages_sent", dimensions: dimensions),
                Counter(label: "cluster.bytes_sent", dimensions: dimensions))
    }

    private func link(to endpoint: String) throws(ZeroMQError) -> Socket {
        if let socket = sockets[endpoint] { return socket }
        let socket = try Socket(.dealer, context: loop.context)
        // Messages for a peer that is not connected yet wait in a short queue (a joining member's
        // first ping must not be lost); for a dead peer the queue fills and further sends are
        // refused at once.
        try socket.setHighWaterMarks(send: highWaterMark, receive: highWaterMark)
        try socket.set(.reconnectInterval, 100)
        try socket.set(.reconnectIntervalMax, 1000)
        try socket.setHeartbeat(intervalMs: 1000, timeoutMs: 5000, ttlMs: 10000)
        if let credentials { try credentials.apply(to: socket) }
        // A killed peer's TCP connection closes at once: the requests waiting for it fail then
        // (the caller tries elsewhere) rather than at their timeout.
        let events: SocketMonitorEvents = credentials == nil
            ? [.disconnected, .connected] : [.disconnected, .handshakeSucceeded, .handshakeFailed]
        let monitor = try SocketMonitor(watching: socket, events: events, context: loop.context)
        loop.register(monitor.socket) { [weak self, weak monitor] _, _ in
            guard let self, let monitor else { return }
            let (seen, up) = monitor.drain()
            if let up { if up { self.down.remove(endpoint) } else { self.down.insert(endpoint) } }
            let broke = seen.contains(.disconnected), refused = !seen.isDisjoint(with: .handshakeFailed)
            // On the next turn: the completions may close this very link (and its monitor).
            if broke { _ = self.loop.scheduleTimer(after: .zero) { [weak self] in self?.failPending(to: endpoint, "the connection to \(endpoint) broke") } }
            if refused {
                self.logger.info("handshake with \(endpoint) refused; the link is made anew in \(Self.refusedLinkRest)")
                _ = self.loop.scheduleTimer(after: Self.refusedLinkRest) { [weak self] in self?.close(endpoint) }
            }
        }
        monitors[endpoint] = monitor
        try socket.connect(endpoint)
        loop.register(socket) { [weak self] socket, _ in self?.drainAnswers(socket) }
        sockets[endpoint] = socket
        return socket
    }

    private func drainAnswers(_ socket: Socket) {
        while (try? socket.receive(into: frames)) == true {
            let envelope: WireEnvelope
            do {
                envelope = try frames.withBytes(of: 0) { (bytes) throws(ShowroomError) in
                    try WireEnvelope.decode(frame: Data(bytes))
                }
            } catch {
                logger.debug("unreadable answer", metadata: ["error": "\(error)"])
                continue
            }
            guard envelope.isResponse, let request = pending.removeValue(forKey: envelope.requestID) else { continue }
            loop.cancelTimer(request.timer)
            request.completion(.success(envelope))
        }
    }
}
