import DequeModule
import Edge
import Logging
import NodeRuntime
import ShowroomWire
import ZeroMQ

/// The client ROUTER on the edge's loop: the face clients connect to over TCP (CURVE when the
/// edge encrypts), the control messages waiting for a congested client, the connections that
/// never open a session (``UnopenedConnectionReaper``), and the edge-to-edge links' sockets. What
/// goes to a WebSocket client (``WebSocketClients``, when the edge serves them) goes through it
/// too, framed for WebSocket.
///
/// Wire layout: `[routing id][envelope]` for requests and events, and
/// `[routing id][envelope: MEDIA_FRAME + MediaHeader][payload]` for media. A frame is sent by
/// reference (`zmq_msg_copy`) behind each subscriber's routing id: the payload is never read and
/// never copied.
final class RouterClientFace: ClientFace {
    let socket: Socket
    /// Where clients connect.
    let endpoint: String
    let loop: EventLoop
    private let logger: Logger
    /// The receive buffer; replaced when the shell keeps it (a video frame in a GOP cache).
    private var incoming = Multipart(capacity: 4)
    /// Replies and events for clients at their high-water mark, oldest first.
    private var pendingControl: [SessionID: Deque<[UInt8]>] = [:]
    private let maxQueuedControlMessages: Int
    /// Closes connections that open no session in time.
    private let reaper: UnopenedConnectionReaper
    /// Browsers' sessions, once the WebSocket face serves (set on the loop).
    var webSockets: WebSocketClients?

    /// Binds the client ROUTER on `loop`.
    init(configuration: EdgeServerConfiguration, loop: EventLoop, clock: WallClock, logger: Logger) throws {
        self.loop = loop
        self.logger = logger
        maxQueuedControlMessages = configuration.maxQueuedControlMessages
        socket = try Socket(.router, context: loop.context)
        // Unknown peers are reported (a vanished client is dropped at once), not silently skipped.
        try socket.set(.routerMandatory, 1)
        try socket.setHighWaterMarks(send: configuration.clientHighWaterMark, receive: configuration.clientReceiveHighWaterMark)
        try socket.set(.sendBuffer, configuration.clientSendBufferBytes)
        // Up to maxMessageBytes a message is answered (TOO_LARGE beyond it); a frame far beyond
        // (4 times) closes the connection unread, so a peer cannot make the edge buffer more.
        try socket.setMaxMessageSize(Int64(configuration.settings.limits.connectionCloseBytes))
        try socket.set(.handshakeInterval, Int32(clamping: configuration.unopenedConnectionTimeout.milliseconds))
        // ZMTP heartbeats notice a dead TCP connection; the plane's own timeout covers silent clients.
        try socket.setHeartbeat(intervalMs: 1000, timeoutMs: 5000, ttlMs: 10000)
        // Before binding, so that every connection is seen.
        var reaperTime = ElapsedTime(clock)
        reaper = try UnopenedConnectionReaper(
            watching: socket, loop: loop, timeout: configuration.unopenedConnectionTimeout,
            maxCount: configuration.maxUnopenedConnections, now: { reaperTime.now() }, logger: logger)
        if let key = configuration.clientCurveKey { try socket.makeCurveServer(key, zapDomain: "client") }
        let bound = try socket.bind(configuration.clientBind)
        endpoint = NodeConfiguration.advertised(bound, host: configuration.advertiseHost)
    }

    func start(receive: @escaping (Multipart) -> Bool, tick: @escaping () -> Void, every interval: Duration) {
        loop.register(socket) { [unowned self] _, _ in drain(receive) }
        loop.scheduleRepeating(every: interval, tick)
    }

    /// Handles the waiting messages, at most 512 per wake-up so timers get their turn.
    private func drain(_ receive: (Multipart) -> Bool) {
        for _ in 0..<512 {
            do {
                guard try socket.receive(into: incoming) else { return }
            } catch {
                logger.warning("receive failed", metadata: ["error": "\(error)"])
                return
            }
            if receive(incoming) { incoming = Multipart(capacity: 4) }
        }
    }

    @inline(__always)
    func sendFrame(_ frame: Multipart, to session: SessionID) -> DeliveryOutcome {
        if WebSocketClients.isWebSocket(session) {
            guard let webSockets else { return .unreachable }
            return frame.withBytes(of: 1) { envelope in
                guard frame.count > 2 else { return webSockets.send(envelope: envelope, to: session, droppable: true) }
                return frame.withBytes(of: 2) { webSockets.send(envelope: envelope, payload: $0, to: session, droppable: true) }
            }
        }
        return session.withRoutingID { id in
            do {
                switch try socket.send(to: id, frame, from: 1) {
                case .sent: return .sent
                case .wouldBlock: return .wouldBlock
                case .hostUnreachable: return .unreachable
                }
            } catch {
                return .unreachable
            }
        }
    }

    func sendControl(_ bytes: [UInt8], to session: SessionID) -> Bool {
        if WebSocketClients.isWebSocket(session) {
            guard let webSockets else { return false }
            return bytes.withUnsafeBytes { webSockets.send(envelope: $0, to: session, droppable: false) } == .sent
        }
        if var queue = pendingControl.removeValue(forKey: session) {
            guard queue.count < maxQueuedControlMessages else { return false }
            queue.append(bytes)
            pendingControl[session] = queue
            return true
        }
        switch sendNow(bytes, to: session) {
        case .sent: return true
        case .wouldBlock:
            pendingControl[session] = [bytes]
            return true
        case .unreachable: return false
        }
    }

    private func sendNow(_ bytes: [UInt8], to session: SessionID) -> DeliveryOutcome {
        do {
            switch try socket.send(frames: [session.routingID, bytes]) {
            case .sent: return .sent
            case .wouldBlock: return .wouldBlock
            case .hostUnreachable: return .unreachable
            }
        } catch {
            return .unreachable
        }
    }

    func sendRaw(_ bytes: [UInt8], to routingID: [UInt8]) {
        _ = try? socket.send(frames: [routingID, bytes])
    }

    func flush() -> [SessionID] {
        guard !pendingControl.isEmpty else { return [] }
        var gone: [SessionID] = []
        for session in Array(pendingControl.keys) {
            guard var queue = pendingControl.removeValue(forKey: session) else { continue }
            while let first = queue.first {
                let outcome = sendNow(first, to: session)
                if outcome == .sent {
                    queue.removeFirst()
                    continue
                }
                if outcome == .unreachable { gone.append(session) }
                break
            }
            if !queue.isEmpty, !gone.contains(session) { pendingControl[session] = queue }
        }
        return gone
    }

    func sessionClosed(_ session: SessionID) {
        pendingControl[session] = nil
    }

    func sessionOpened(_ session: SessionID, by message: Multipart) -> String? {
        if WebSocketClients.isWebSocket(session) { return webSockets?.sessionOpened(session) }
        reaper.sessionOpened(onDescriptor: message.sourceDescriptor(of: 1))
        return message.property("Peer-Address", of: 1)
    }

    func closeUnopened() {
        reaper.tick()
    }

    func link(_ key: ForwardKey, to edge: ForwardEdge, now: Duration) throws(ShowroomError) -> ForwardLink {
        try ForwardLink(key: key, edge: edge, context: loop.context, now: now)
    }

    func attach(_ link: ForwardLink, receive: @escaping (ForwardLink) -> Void, broke: @escaping (ForwardLink) -> Void) {
        guard case .socket(let socket, let monitor) = link.transport else { return }
        loop.register(socket) { [unowned link] _, _ in receive(link) }
        loop.register(monitor.socket) { [unowned link] _, _ in
            if link.connectionBroke() { broke(link) }
        }
    }

    func detach(_ link: ForwardLink) {
        guard case .socket(let socket, let monitor) = link.transport else { return }
        loop.unregister(socket)
        loop.unregister(monitor.socket)
    }
}
