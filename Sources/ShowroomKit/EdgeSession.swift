#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

/// The socket of one client session with one edge: a DEALER connected to the edge's client
/// endpoint, with the requests waiting for an answer. A monitor on the DEALER reports the
/// connection breaking (a killed edge's TCP connection closes at once), so a lost edge is noticed
/// long before its heartbeat timeout. The session's state (open or not, its channels, its
/// heartbeats) is ``EngineState``'s; this is what the engine shell does I/O with, on its loop.
final class EdgeSession {
    struct Pending {
        /// Gets the response envelope (failed or not), or why none came.
        let complete: (Result<WireEnvelope, ShowroomError>) -> Void
        let timer: TimerID
        let what: String
    }

    let serial: SessionSerial
    let edge: EdgeAddress
    let socket: Socket
    /// Reports the DEALER's connection breaking.
    let monitor: SocketMonitor
    /// Reused for every received message, so receiving allocates no frame storage.
    let receiveBuffer = Multipart(capacity: 4)
    /// Reused for every media frame sent.
    let sendBuffer = Multipart(capacity: 2)
    var pending: [UInt64: Pending] = [:]
    var isClosed = false

    init(serial: SessionSerial, edge: EdgeAddress, context: Context) throws(ShowroomError) {
        self.serial = serial
        self.edge = edge
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
        isClosed = true
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

    /// Fails every request still waiting.
    func failAll(_ error: ShowroomError, loop: EventLoop) {
        let waiting = pending
        pending = [:]
        for (_, request) in waiting.sorted(by: { $0.key < $1.key }) {
            loop.cancelTimer(request.timer)
            request.complete(.failure(error))
        }
    }
}
