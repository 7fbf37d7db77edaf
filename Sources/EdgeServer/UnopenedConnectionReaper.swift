#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Edge
import Logging
import ZeroMQ

/// Closes the client connections that do not open a session in time, and the oldest of them when
/// too many wait at once: the shell of ``UnopenedConnections`` on the client ROUTER's loop.
///
/// libzmq (4.3, without the draft API) neither tells a ROUTER's owner about a peer before it sends
/// something nor lets it drop one. The socket monitor's `ACCEPTED` event gives each connection's
/// descriptor, and every received message carries the descriptor it came on (`ZMQ_SRCFD`), which
/// ties an `EDGE_OPEN_SESSION` to its connection. A connection still waiting at the deadline gets
/// `shutdown(SHUT_RDWR)`: libzmq's I/O thread sees the connection end and closes it as if the peer
/// had left (the descriptor stays libzmq's; it is never closed here). A raw TCP connection that
/// never completes the ZeroMQ handshake is closed by libzmq itself too (`ZMQ_HANDSHAKE_IVL`, set
/// to the same timeout by the edge).
///
/// Descriptors are reused as soon as libzmq closes them, so the table follows the monitor's events
/// in order (they are drained before each decision), and a descriptor is shut down only if its
/// local and peer addresses are still those recorded when it was accepted.
final class UnopenedConnectionReaper {
    private let monitor: SocketMonitor
    private var table: UnopenedConnections<ConnectionAddresses>
    private let logger: Logger
    /// The shell's clock.
    private let now: () -> Duration
    /// Connections closed for taking too long or for being too many, since the start.
    private(set) var closedCount = 0

    /// Starts watching `socket`'s connections; call before it binds so no connection is missed.
    ///
    /// - Parameters:
    ///   - socket: The client ROUTER.
    ///   - loop: Its loop (the monitor's events are read there).
    ///   - timeout: How long a connection may stay open without a session.
    ///   - maxCount: Most connections waiting for a session at once.
    ///   - now: The shell's clock.
    ///   - logger: Where closings are logged (debug).
    init(watching socket: Socket, loop: EventLoop, timeout: Duration, maxCount: Int, now: @escaping () -> Duration, logger: Logger) throws {
        monitor = try SocketMonitor(watching: socket, events: [.accepted, .disconnected], context: loop.context)
        table = UnopenedConnections(timeout: timeout, maxCount: maxCount)
        self.logger = logger
        self.now = now
        loop.register(monitor.socket) { [unowned self] _, _ in self.drainEvents() }
        loop.onShutdown { [monitor] in
            loop.unregister(monitor.socket)
            monitor.stop()
        }
    }

    /// Connections waiting for a session now.
    var waiting: Int { table.count }

    /// A session was opened by the connection with this descriptor (`ZMQ_SRCFD` of the request).
    func sessionOpened(onDescriptor descriptor: Int32?) {
        // The connection's ACCEPTED event was queued before its first message could arrive.
        drainEvents()
        if let descriptor { table.opened(descriptor) }
    }

    /// Closes the connections whose time is up.
    func tick() {
        drainEvents()
        close(table.expired(now: now()))
    }

    private func drainEvents() {
        while let event = try? monitor.nextEvent() {
            let descriptor = Int32(bitPattern: event.value)
            switch event.event {
            case .accepted:
                close(table.accepted(descriptor, peer: ConnectionAddresses(of: descriptor), now: now()))
            case .disconnected:
                table.disconnected(descriptor)
            default:
                break
            }
        }
    }

    private func close(_ connections: [UnopenedConnections<ConnectionAddresses>.Expired]) {
        for connection in connections {
            guard !connection.peer.isEmpty, ConnectionAddresses(of: connection.descriptor) == connection.peer else { continue }
            shutdown(connection.descriptor, Int32(SHUT_RDWR))
            closedCount += 1
            let why = connection.reason == .timedOut
                ? "no session opened within \(table.timeout)" : "more than \(table.maxCount) connections without a session"
            logger.debug("closed a client connection: \(why)", metadata: ["descriptor": "\(connection.descriptor)"])
        }
    }
}

/// The local and peer addresses of a connected socket, as raw `sockaddr` bytes (empty when the
/// descriptor is not a connected socket).
struct ConnectionAddresses: Sendable, Equatable {
    let local: [UInt8]
    let peer: [UInt8]

    init(of descriptor: Int32) {
        local = Self.address(of: descriptor, getsockname)
        peer = Self.address(of: descriptor, getpeername)
    }

    var isEmpty: Bool { local.isEmpty || peer.isEmpty }

    private static func address(
        of descriptor: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> [UInt8] {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(descriptor, $0, &length) }
        }
        guard result == 0 else { return [] }
        return withUnsafeBytes(of: &storage) { Array($0.prefix(min(Int(length), MemoryLayout<sockaddr_storage>.size))) }
    }
}
