#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

/// One client session with one edge: a DEALER connected to the edge's client endpoint, opened
/// with `EDGE_OPEN_SESSION`, kept alive by heartbeats, holding the channel connections placed on
/// that edge. A monitor on the DEALER reports the connection breaking (a killed edge's TCP
/// connection closes at once), so a lost edge is noticed long before its heartbeat timeout.
/// Confined to the engine's loop; the engine shell drives it.
final class EdgeSession {
    enum Phase { case opening, open, closing, closed }

    struct Pending {
        /// Gets the response envelope (failed or not), or why none came.
        let complete: (Result<WireEnvelope, ShowroomError>) -> Void
        let timer: TimerID
        let what: String
    }

    let edge: EdgeAddress
    let socket: Socket
    /// Reports the DEALER's connection breaking.
    let monitor: SocketMonitor
    /// Reused for every received message, so receiving allocates no frame storage.
    let receiveBuffer = Multipart(capacity: 4)
    /// Reused for every media frame sent.
    let sendBuffer = Multipart(capacity: 2)
    var phase = Phase.opening
    var openWaiters: [(Result<Void, ShowroomError>) -> Void] = []
    var pending: [UInt64: Pending] = [:]
    var heartbeatInterval: Duration
    var heartbeatTimeout: Duration
    var heartbeatTimer: TimerID?
    var lastHeard = ContinuousClock.now
    var isInterrupted = false
    /// Counts the times the session was left without channels: a warm-session timer closes it
    /// only if no channel came and went since it was set.
    var idleGeneration: UInt64 = 0
    var limits: EdgeLimits?
    /// Channels whose connections live in this session.
    var channels: Set<String> = []
    /// The edge drains (``EdgeEvent/draining(within:)``): no join uses this session any more, and
    /// it closes once the connections in it have moved.
    var isDraining = false
    /// `EDGE_MOVED_OUT` was sent: every connection that moves has moved.
    var movedOut = false

    init(edge: EdgeAddress, context: Context, heartbeatInterval: Duration, heartbeatTimeout: Duration) throws(ShowroomError) {
        self.edge = edge
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        do {
            // Media is live: better to drop at a full queue than to deliver late. 1000 messages
            // is several seconds of audio and video.
            (socket, monitor) = try Socket.monitoredDealer(
                to: edge.endpoint, serverPublicKey: edge.curvePublicKey, send: 1000, receive: 10_000, context: context)
        } catch {
            throw .unavailable("cannot connect to edge \(edge): \(error)")
        }
    }

    /// Stops the monitor and closes the socket; unsent messages are dropped.
    func close() {
        monitor.stop()
        socket.close()
    }

    /// True when the monitor reported the connection to the edge broken. Drains the monitor.
    func connectionBroke() -> Bool {
        monitor.drain().seen.contains(.disconnected)
    }

    /// Sends one envelope.
    ///
    /// - Returns: False if the edge's queue is full (nothing was sent).
    func send(_ envelope: WireEnvelope) throws(ShowroomError) -> Bool {
        let bytes: [UInt8]
        do { bytes = try envelope.serializedBytes() } catch {
            throw .internal("cannot serialize a \(envelope.kind) message: \(error)")
        }
        do {
            return try socket.send(bytes) == .sent
        } catch {
            throw .unavailable("sending to edge \(edge): \(error)")
        }
    }

    /// Sends a media frame: [envelope][payload], both copied into the reused send buffer.
    ///
    /// - Returns: False if the edge's queue is full (the frame is dropped).
    func sendMedia(_ envelope: WireEnvelope, payload: [UInt8]) -> Bool {
        guard let head: [UInt8] = try? envelope.serializedBytes() else { return false }
        sendBuffer.removeAll()
        sendBuffer.append(head)
        sendBuffer.append(payload)
        return (try? socket.send(sendBuffer)) == .sent
    }

    /// Fails every request still waiting, and every waiter for the session to open.
    func failAll(_ error: ShowroomError, loop: EventLoop) {
        let waiting = pending
        pending = [:]
        for (_, request) in waiting.sorted(by: { $0.key < $1.key }) {
            loop.cancelTimer(request.timer)
            request.complete(.failure(error))
        }
        let waiters = openWaiters
        openWaiters = []
        for waiter in waiters { waiter(.failure(error)) }
    }
}
