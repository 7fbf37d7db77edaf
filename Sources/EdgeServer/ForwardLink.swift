import Edge
import Foundation
import ShowroomWire
import ZeroMQ

/// The edge-to-edge link: a client session this edge holds on another edge (or on itself) to
/// publish a broadcaster's tracks into channels hosted there. It speaks the client contract
/// (`EdgeProtocol`): a DEALER connected to the destination edge's client ROUTER (CURVE when that
/// edge encrypts client links), `EDGE_OPEN_SESSION`, joins as the forwarded uid (broadcaster, the
/// token verified there like any join), heartbeats, and media frames whose headers name the
/// destination channel. The destination edge sees an ordinary publisher and keeps its own GOP
/// cache, so its viewers start on a keyframe at once.
///
/// One link per forward and destination edge: the forward's destinations on that edge are
/// channel connections of the one session.
///
/// A relay edge pulls channels from their origin edge over the same kind of link, the other way
/// round: one per origin edge, its channels joined as audience with a uid of the reserved relay
/// range (``RelayLinkIdentity``; `key` then names no forward: an empty channel and that uid), and
/// the origin's frames received on it. Confined to the edge's loop; its timers run from the
/// shell's tick (heartbeats, request deadlines, silence).
///
/// The messages cross a DEALER socket between processes, or an ``InProcessEdgeLink`` between
/// edges of one process (``InProcessEdgeFabric``); the session on top is the same.
final class ForwardLink {
    /// What carries the link's messages.
    enum Transport {
        /// A DEALER connected to the other edge's client ROUTER, with its connection monitor.
        case socket(Socket, SocketMonitor)
        /// A client connection of another edge in the same process.
        case inProcess(InProcessEdgeLink)
    }

    typealias Completion = (Result<WireEnvelope, ShowroomError>) -> Void

    struct Pending {
        let deadline: Duration
        let what: String
        let complete: Completion
    }

    let key: ForwardKey
    let edge: ForwardEdge
    /// The socket and its monitor (which reports the connection breaking: a killed edge's TCP
    /// connection closes at once), or the in-process connection.
    let transport: Transport
    let receiveBuffer = Multipart(capacity: 4)
    private(set) var isOpen = false
    /// Work waiting for the session to open.
    private var waiting: [(Result<Void, ShowroomError>) -> Void] = []
    private var pending: [UInt64: Pending] = [:]
    private var lastRequestID: UInt64 = 0
    var heartbeatInterval: Duration = .seconds(1)
    var heartbeatTimeout: Duration = .seconds(10)
    var lastHeard: Duration
    /// When the last heartbeat went: sent every interval even while frames flow, since the edge
    /// answers heartbeats but not frames, and the link judges the edge by what it hears.
    private var lastHeartbeat: Duration
    private let requestTimeout: Duration = .seconds(3)

    /// Connects to `edge`; the session is opened by ``open(clientID:now:)``.
    init(key: ForwardKey, edge: ForwardEdge, context: Context, now: Duration) throws(ShowroomError) {
        self.key = key
        self.edge = edge
        lastHeard = now
        lastHeartbeat = now
        do {
            // Live media: a full queue drops (video then restarts at a keyframe) rather than delays.
            let (socket, monitor) = try Socket.monitoredDealer(
                to: edge.endpoint, serverPublicKey: edge.curvePublicKey, send: 2000, receive: 1000, context: context)
            transport = .socket(socket, monitor)
        } catch {
            throw .unavailable("cannot connect a forward link to edge \(edge): \(error)")
        }
    }

    /// A link over an in-process connection to `edge`; the session is opened by
    /// ``open(clientID:now:)``.
    init(key: ForwardKey, edge: ForwardEdge, inProcess connection: InProcessEdgeLink, now: Duration) {
        self.key = key
        self.edge = edge
        lastHeard = now
        lastHeartbeat = now
        transport = .inProcess(connection)
    }

    /// Stops the monitor and closes the socket; what waits fails with `error`.
    func close(_ error: ShowroomError) {
        switch transport {
        case .socket(let socket, let monitor):
            monitor.stop()
            socket.close()
        case .inProcess(let connection):
            connection.close()
        }
        isOpen = false
        let requests = pending.sorted { $0.key < $1.key }
        pending = [:]
        for (_, request) in requests { request.complete(.failure(error)) }
        let waiters = waiting
        waiting = []
        for waiter in waiters { waiter(.failure(error)) }
    }

    /// True when the monitor reported the connection broken, or a connection attempt refused
    /// (the edge is gone: a relay sent to a dead origin asks again at once). Drains the monitor.
    func connectionBroke() -> Bool {
        switch transport {
        case .socket(_, let monitor):
            let seen = monitor.drain().seen
            return seen.contains(.disconnected) || seen.contains(.connectRetried)
        case .inProcess(let connection):
            return connection.isBroken
        }
    }

    /// Reads the next waiting message into `buffer`.
    ///
    /// - Returns: false when nothing waits (or the link cannot be read).
    func receive(into buffer: Multipart) -> Bool {
        switch transport {
        case .socket(let socket, _): (try? socket.receive(into: buffer)) == true
        case .inProcess(let connection): connection.receive(into: buffer)
        }
    }

    /// Sends one message of one frame (an envelope).
    ///
    /// - Returns: Whether it was sent (false: the queue is full).
    func send(bytes: [UInt8]) throws(ShowroomError) -> Bool {
        switch transport {
        case .socket(let socket, _):
            do {
                return try socket.send(bytes) == .sent
            } catch {
                throw .unavailable("sending to edge \(edge.id): \(error)")
            }
        case .inProcess(let connection):
            return connection.send([bytes])
        }
    }

    // MARK: - Session

    /// Opens the session; `whenOpen` work runs once it is open (or failed).
    func open(clientID: String, now: Duration) {
        request(.openSession(clientID: clientID, sdkVersion: "showroom-edge-link"), now: now) { [self] result in
            let outcome: Result<Void, ShowroomError>
            switch result.flatMap(Self.reply) {
            case .success(.sessionOpened(_, let interval, let timeout, _)):
                isOpen = true
                if interval > .zero { heartbeatInterval = interval }
                if timeout > .zero { heartbeatTimeout = timeout }
                outcome = .success(())
            case .success(let body):
                outcome = .failure(.malformed("edge \(edge.id) answered a link's session request with \(body)"))
            case .failure(let error):
                outcome = .failure(error)
            }
            let waiters = waiting
            waiting = []
            for waiter in waiters { waiter(outcome) }
        }
    }

    /// Runs `work` once the session is open (at once if it is).
    func whenOpen(_ work: @escaping (Result<Void, ShowroomError>) -> Void) {
        if isOpen { work(.success(())) } else { waiting.append(work) }
    }

    /// Sends a request; `complete` gets the response envelope, or a failure (not sent, no answer
    /// by the deadline, link closed).
    func request(_ request: EdgeRequest, now: Duration, _ complete: @escaping Completion) {
        lastRequestID += 1
        let id = lastRequestID
        do throws(ShowroomError) {
            let envelope = try EdgeCodec.envelope(request: request, id: id)
            guard try send(envelope) else {
                return complete(.failure(.unavailable("the queue to edge \(edge.id) is full")))
            }
        } catch {
            return complete(.failure(error))
        }
        pending[id] = Pending(deadline: now + requestTimeout, what: "\(request.kind)", complete: complete)
    }

    /// A response arrived.
    func answered(_ envelope: WireEnvelope) {
        pending.removeValue(forKey: envelope.requestID)?.complete(.success(envelope))
    }

    /// Heartbeats and request deadlines.
    ///
    /// - Returns: Why the link is dead, if it is (silent past the edge's heartbeat timeout).
    func tick(now: Duration) -> ShowroomError? {
        if now - lastHeard >= heartbeatTimeout {
            return .unavailable("edge \(edge.id) silent for \(heartbeatTimeout)")
        }
        for (id, request) in pending where request.deadline <= now {
            pending[id] = nil
            request.complete(.failure(.deadlineExceeded("no answer to \(request.what) from edge \(edge.id) within \(requestTimeout)")))
        }
        if isOpen, now - lastHeartbeat >= heartbeatInterval {
            // A request: its answer is what the link hears while it only sends frames.
            lastHeartbeat = now
            request(.heartbeat(clientTime: 0), now: now) { _ in }
        }
        return nil
    }

    /// Sends a media frame (envelope bytes and the payload frame of `frame`, by reference).
    ///
    /// - Returns: How it went; `.wouldBlock` when the edge's queue is full (the frame is dropped).
    func sendFrame(_ buffer: Multipart) -> DeliveryOutcome {
        switch transport {
        case .socket(let socket, _):
            do {
                switch try socket.send(buffer) {
                case .sent: return .sent
                case .wouldBlock: return .wouldBlock
                case .hostUnreachable: return .unreachable
                }
            } catch {
                return .unreachable
            }
        case .inProcess(let connection):
            return connection.send(buffer.allBytes) ? .sent : .unreachable
        }
    }

    private func send(_ envelope: WireEnvelope) throws(ShowroomError) -> Bool {
        let bytes: [UInt8]
        do { bytes = try envelope.serializedBytes() } catch {
            throw .internal("cannot serialize a \(envelope.kind) message: \(error)")
        }
        return try send(bytes: bytes)
    }

    /// The reply body of a response envelope, or its failure.
    static func reply(_ envelope: WireEnvelope) -> Result<EdgeReplyBody, ShowroomError> {
        Result { () throws(ShowroomError) in try EdgeCodec.reply(from: envelope) }.flatMap(\.result)
    }
}
