import CZeroMQ
import Synchronization

/// Connection events of a socket that a ``SocketMonitor`` can report (`ZMQ_EVENT_*`).
public struct SocketMonitorEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    /// An outgoing connection is up (TCP connected; the ZMTP handshake follows).
    public static let connected = SocketMonitorEvents(rawValue: ZMQ_EVENT_CONNECTED)
    /// A connection attempt failed and will be retried.
    public static let connectRetried = SocketMonitorEvents(rawValue: ZMQ_EVENT_CONNECT_RETRIED)
    /// An incoming connection was accepted.
    public static let accepted = SocketMonitorEvents(rawValue: ZMQ_EVENT_ACCEPTED)
    /// A connection was closed by the peer or broken (a killed peer's TCP connection closes at once).
    public static let disconnected = SocketMonitorEvents(rawValue: ZMQ_EVENT_DISCONNECTED)
    /// The ZMTP handshake with a peer completed: messages flow.
    public static let handshakeSucceeded = SocketMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
    /// A handshake failed: the peer refused our credentials (ZAP), spoke another protocol or
    /// mechanism, or gave no detail. libzmq does not reconnect after these.
    public static let handshakeFailed = SocketMonitorEvents(
        rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
    /// Monitoring ended (the monitored socket closed or the monitor was stopped).
    public static let monitorStopped = SocketMonitorEvents(rawValue: ZMQ_EVENT_MONITOR_STOPPED)
}

/// One event a ``SocketMonitor`` reported.
public struct SocketMonitorEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened (exactly one of the ``SocketMonitorEvents`` flags, or an event this wrapper
    /// has no name for).
    public let event: SocketMonitorEvents
    /// The event's value (a file descriptor, an errno or a retry interval, by event).
    public let value: UInt32
    /// The peer or local endpoint the event is about.
    public let endpoint: String

    public var description: String { "event 0x\(String(event.rawValue, radix: 16)) on \(endpoint) (value \(value))" }
}

/// Reports a socket's connection events (`zmq_socket_monitor`) on a PAIR socket of its own, so an
/// ``EventLoop`` can poll them next to the socket's messages: a peer that is killed shows up as
/// ``SocketMonitorEvents/disconnected`` at once, long before any heartbeat timeout.
///
/// Like every socket it is confined to the thread that created it, which must be the monitored
/// socket's thread. Register ``socket`` with the loop and call ``nextEvent()`` while it is readable.
public final class SocketMonitor {
    /// The PAIR socket the events arrive on.
    public let socket: Socket
    private let monitored: Socket
    private let address: String
    private var isStopped = false

    private static let sequence = Atomic<UInt64>(0)

    /// Starts monitoring `monitored` for `events`.
    ///
    /// - Parameters:
    ///   - monitored: The socket to watch; monitoring stops when it closes or on ``stop()``.
    ///   - events: The events to report.
    ///   - context: The context `monitored` was created in (the events travel over `inproc`,
    ///     which only connects sockets of one context).
    /// - Throws: ``ZeroMQError`` if libzmq refuses the monitor or the PAIR socket.
    public init(watching monitored: Socket, events: SocketMonitorEvents, context: Context) throws(ZeroMQError) {
        let number = Self.sequence.wrappingAdd(1, ordering: .relaxed).newValue
        let address = "inproc://socket-monitor-\(number)"
        guard zmq_socket_monitor(monitored.unsafeHandle, address, events.rawValue) == 0 else {
            throw ZeroMQError.last("zmq_socket_monitor \(monitored.type)")
        }
        let pair: Socket
        do {
            pair = try Socket(.pair, context: context)
            try pair.connect(address)
        } catch {
            zmq_socket_monitor(monitored.unsafeHandle, nil, 0)
            throw error
        }
        self.socket = pair
        self.monitored = monitored
        self.address = address
    }

    /// The next event, or `nil` when none is waiting. Never blocks.
    ///
    /// - Throws: ``ZeroMQError`` if the PAIR socket fails.
    public func nextEvent() throws(ZeroMQError) -> SocketMonitorEvent? {
        while let frames = try socket.receiveFrames() {
            // Frame 1: event number (16 bits) and value (32 bits), native byte order; frame 2:
            // the endpoint. Anything else is not from libzmq's monitor: skip it.
            guard frames.count == 2, frames[0].count == 6 else { continue }
            let head = frames[0]
            let number = head.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt16.self) }
            let value = head.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 2, as: UInt32.self) }
            return SocketMonitorEvent(
                event: SocketMonitorEvents(rawValue: Int32(number)), value: value,
                endpoint: String(decoding: frames[1], as: UTF8.self))
        }
        return nil
    }

    /// Every event waiting, drained: the kinds seen, and whether the connection is up after them
    /// (`false` after a disconnect, `true` after a connect or a successful handshake, `nil` when
    /// neither came). Never blocks.
    public func drain() -> (seen: SocketMonitorEvents, up: Bool?) {
        var seen: SocketMonitorEvents = []
        var up: Bool?
        while let event = try? nextEvent() {
            seen.formUnion(event.event)
            if event.event == .disconnected { up = false }
            if event.event == .connected || event.event == .handshakeSucceeded { up = true }
        }
        return (seen, up)
    }

    /// Stops monitoring and closes the PAIR socket; call before closing the monitored socket.
    /// Safe to call twice.
    public func stop() {
        guard !isStopped else { return }
        isStopped = true
        zmq_socket_monitor(monitored.unsafeHandle, nil, 0)
        socket.close()
    }
}
