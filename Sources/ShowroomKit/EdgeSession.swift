#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

/// The socket of one client session with one edge: a DEALER connected to the edge's client
/// endpoint, on the engine's loop. A monitor on the DEALER reports the connection breaking (a
/// killed edge's TCP connection closes at once), so a lost edge is noticed long before its
/// heartbeat timeout. The session's state (open or not, its channels, its heartbeats) is
/// ``EngineState``'s and its waiting requests the shell's; this is the link ``LoopEngineHost``
/// gives the shell.
final class EdgeSession: EngineLink {
    let edge: EdgeAddress
    let socket: Socket
    /// Reports the DEALER's connection breaking.
    let monitor: SocketMonitor
    /// Reused for every received message, so receiving allocates no frame storage.
    let receiveBuffer = Multipart(capacity: 4)
    /// Reused for every media frame sent.
    private let sendBuffer = Multipart(capacity: 2)
    private let loop: EventLoop
    private(set) var isClosed = false

    init(edge: EdgeAddress, context: Context, loop: EventLoop) throws(ShowroomError) {
        self.edge = edge
        self.loop = loop
        do {
            // Media is live: better to drop at a full queue than to deliver late. 1000 messages
            // is several seconds of audio and video.
            (socket, monitor) = try Socket.monitoredDealer(
                to: edge.endpoint, serverPublicKey: edge.curvePublicKey, send: 1000, receive: 10_000, context: context)
        } catch {
            throw .unavailable("cannot connect to edge \(edge): \(error)")
        }
    }

    /// Takes the socket and its monitor off the loop, stops the monitor and closes the socket;
    /// unsent messages are dropped.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.unregister(socket)
        loop.unregister(monitor.socket)
        monitor.stop()
        socket.close()
    }

    /// True when the monitor reported the connection to the edge broken. Drains the monitor.
    func connectionBroke() -> Bool {
        monitor.drain().seen.contains(.disconnected)
    }

    func send(_ envelope: [UInt8]) throws(ShowroomError) -> Bool {
        do {
            return try socket.send(envelope) == .sent
        } catch {
            throw .unavailable("sending to edge \(edge): \(error)")
        }
    }

    /// Both frames are copied into the reused send buffer.
    func sendMedia(_ header: [UInt8], _ payload: [UInt8]) -> Bool {
        sendBuffer.removeAll()
        sendBuffer.append(header)
        sendBuffer.append(payload)
        return (try? socket.send(sendBuffer)) == .sent
    }
}

/// A message received into an ``EdgeSession``'s reused buffer.
struct ReceivedMultipart: EngineMessage {
    let parts: Multipart

    var count: Int { parts.count }

    func withBytes<R, E: Error>(of index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try parts.withBytes(of: index, body)
    }
}
