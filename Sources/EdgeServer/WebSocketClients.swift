import Edge
import EdgeProtocol
import HummingbirdWebSocket
import Logging
import NIOCore
import NodeRuntime
import ShowroomWire
import Synchronization

/// Client sessions over WebSocket (browsers): each connection is one client session of the same
/// protocol as the ZeroMQ client face, framed as ``WebSocketFraming`` says, handed to the edge's
/// loop as the ROUTER's messages are. The plane cannot tell the two apart.
///
/// A connection's session id lies outside the ZeroMQ routing ids (``SessionID/routingIDLength``
/// is 0 for it), so no ZeroMQ peer can take a browser's place. What goes to a connection waits in
/// its outbox, bounded in bytes: media past the bound is dropped (as at a ROUTER's high-water
/// mark), a control message past twice the bound ends the session (a client too far behind).
final class WebSocketClients: Sendable {
    private struct Connection {
        let address: String?
        var outbox: WebSocketOutbox
        var opened = false
    }

    /// The path a browser connects to.
    static let path = "/v1/edge"
    /// Marks a session id as a WebSocket connection's: its top byte is past every routing id
    /// length (1–7) and is not a relay stand-in's (0xFF).
    private static let mark: UInt64 = 0x80 << 56

    let listener: WebSocketListener
    /// What may wait for one client before its media is dropped.
    let maxQueuedBytes: Int
    /// A connection that opens no session in this time is closed.
    let openTimeout: Duration
    private let connections = Mutex<[SessionID: Connection]>([:])
    private let lastID = Atomic<UInt64>(0)
    private let logger: Logger
    /// A client's message, on the way to the edge's loop.
    private let receive: @Sendable (SessionID, ByteBuffer) -> Void
    /// A connection closed: its session is over.
    private let closed: @Sendable (SessionID) -> Void

    init(settings: WebSocketListener.Settings, maxQueuedBytes: Int = 4 << 20, openTimeout: Duration = .seconds(10), logger: Logger,
         receive: @escaping @Sendable (SessionID, ByteBuffer) -> Void, closed: @escaping @Sendable (SessionID) -> Void) {
        listener = WebSocketListener(settings: settings, logger: logger)
        self.maxQueuedBytes = maxQueuedBytes
        self.openTimeout = openTimeout
        self.logger = logger
        self.receive = receive
        self.closed = closed
    }

    /// Whether `session` is a WebSocket connection's.
    static func isWebSocket(_ session: SessionID) -> Bool { session.rawValue >> 56 == mark >> 56 }

    // MARK: - Serving

    /// Binds and serves; returns `ws://HOST:PORT/v1/edge` (`wss://` with TLS) once listening.
    func start(advertiseHost: String?) async throws -> String {
        try await listener.start(advertiseHost: advertiseHost) { [self] inbound, outbound, address in
            await serve(inbound, outbound, address: address)
        }
    }

    /// Closes the listening socket and every connection.
    func stop() async { await listener.stop() }

    /// One connection: its messages to the edge, its outbox to the socket, until either ends.
    private func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, address: String?) async {
        let session = SessionID(Self.mark | lastID.add(1, ordering: .relaxed).newValue)
        let outbox = AsyncStream<ByteBuffer>.makeStream()
        connections.withLock { $0[session] = Connection(address: address, outbox: WebSocketOutbox(outbox.continuation)) }
        let openTimeout = self.openTimeout
        await WebSocketConnection.run(
            inbound, outbound, outbox: outbox, maxMessageBytes: listener.settings.maxMessageBytes, logger: logger,
            written: { [self] bytes in connections.withLock { $0[session]?.outbox.written(bytes) } },
            alongside: { [self] in
                // A connection that opens no session in time is closed, as the ROUTER's are.
                try? await Task.sleep(for: openTimeout)
                if !Task.isCancelled, connections.withLock({ $0[session]?.opened == false }) {
                    logger.info("WebSocket connection closed: no session opened in time", metadata: ["session": "\(session)"])
                    try? await outbound.close(.policyViolation, reason: "open a session first")
                }
            },
            receive: { receive(session, $0) })
        connections.withLock { $0[session] = nil }
        closed(session)
    }

    // MARK: - Sending (from the edge's loop)

    /// The address of `session`'s client, and marks it opened (it stays past the open timeout).
    func sessionOpened(_ session: SessionID) -> String? {
        connections.withLock { connections in
            connections[session]?.opened = true
            return connections[session]?.address
        }
    }

    /// Queues one message for `session`: `envelope` and `payload` framed (``WebSocketFraming``)
    /// straight into the buffer the socket sends from.
    ///
    /// - Parameters:
    ///   - droppable: A media frame: dropped past ``maxQueuedBytes``.
    func send(envelope: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer? = nil, to session: SessionID, droppable: Bool) -> DeliveryOutcome {
        let size = WebSocketFraming.size(envelope: envelope, payload: payload)
        let outcome = connections.withLock { connections in
            connections[session]?.outbox.enqueue(size: size, droppable: droppable, limit: maxQueuedBytes) {
                var buffer = ByteBufferAllocator().buffer(capacity: size)
                WebSocketFraming.write(envelope: envelope, payload: payload) { buffer.writeBytes($0) }
                return buffer
            }
        }
        switch outcome {
        case .queued: return .sent
        case .dropped: return .wouldBlock
        case .tooFarBehind, nil: return .unreachable
        }
    }
}
