/// The client connections an edge accepted that have not opened a session yet, so that none stays
/// open for long without one, and only so many at a time: a peer that connects (with or without
/// completing the ZeroMQ handshake) and never sends `EDGE_OPEN_SESSION` would otherwise hold a
/// descriptor and its buffers for ever.
///
/// A pure state machine keyed by the connection's socket descriptor, as the shell learns it from
/// its socket monitor (accepted, disconnected) and from the received messages (the connection an
/// `EDGE_OPEN_SESSION` came from). It returns the connections to close; the shell closes them.
/// `Peer` is whatever the shell needs to make sure a descriptor still names the same connection
/// when it closes it (descriptors are reused).
public struct UnopenedConnections<Peer: Sendable & Equatable>: Sendable {
    /// A connection to close.
    public struct Expired: Sendable, Equatable {
        /// Its socket descriptor.
        public var descriptor: Int32
        /// What the shell recorded for it when it was accepted.
        public var peer: Peer
        /// Why: it waited too long, or it was the oldest when too many were waiting.
        public var reason: Reason

        /// Creates an entry (the table makes them; tests compare with them).
        public init(descriptor: Int32, peer: Peer, reason: Reason) {
            self.descriptor = descriptor
            self.peer = peer
            self.reason = reason
        }
    }

    /// Why a connection is closed.
    public enum Reason: Sendable, Equatable {
        /// No session opened within ``UnopenedConnections/timeout``.
        case timedOut
        /// ``UnopenedConnections/maxCount`` connections were waiting; the oldest goes.
        case tooMany
    }

    private struct Entry: Sendable {
        var peer: Peer
        var acceptedAt: Duration
        var serial: UInt64
    }

    /// How long a connection may stay open without a session.
    public let timeout: Duration
    /// Most connections waiting for a session at once.
    public let maxCount: Int
    private var entries: [Int32: Entry] = [:]
    private var nextSerial: UInt64 = 0

    /// Creates an empty table.
    ///
    /// - Parameters:
    ///   - timeout: How long a connection may stay open without a session.
    ///   - maxCount: Most connections waiting at once (at least 1).
    public init(timeout: Duration, maxCount: Int) {
        self.timeout = timeout
        self.maxCount = max(1, maxCount)
    }

    /// Connections waiting for a session now.
    public var count: Int { entries.count }

    /// Whether the connection with this descriptor is waiting for a session.
    public func isWaiting(_ descriptor: Int32) -> Bool { entries[descriptor] != nil }

    /// A connection was accepted. A descriptor already in the table names a connection that has
    /// gone (its descriptor was reused): the new one replaces it.
    ///
    /// - Returns: The oldest waiting connections to close if there are now too many.
    public mutating func accepted(_ descriptor: Int32, peer: Peer, now: Duration) -> [Expired] {
        nextSerial += 1
        entries[descriptor] = Entry(peer: peer, acceptedAt: now, serial: nextSerial)
        var evicted: [Expired] = []
        while entries.count > maxCount, let oldest = entries.min(by: { Self.older($0.value, than: $1.value) }) {
            entries[oldest.key] = nil
            evicted.append(Expired(descriptor: oldest.key, peer: oldest.value.peer, reason: .tooMany))
        }
        return evicted
    }

    /// The connection opened a session: it is no longer watched.
    public mutating func opened(_ descriptor: Int32) {
        entries[descriptor] = nil
    }

    /// The connection closed (the peer left, or it was closed): forgotten.
    public mutating func disconnected(_ descriptor: Int32) {
        entries[descriptor] = nil
    }

    /// Takes out the connections that have waited ``timeout`` or longer.
    ///
    /// - Returns: The connections to close, oldest first.
    public mutating func expired(now: Duration) -> [Expired] {
        guard !entries.isEmpty else { return [] }
        let due = entries.filter { now - $0.value.acceptedAt >= timeout }
            .sorted { Self.older($0.value, than: $1.value) }
        for (descriptor, _) in due { entries[descriptor] = nil }
        return due.map { Expired(descriptor: $0.key, peer: $0.value.peer, reason: .timedOut) }
    }

    private static func older(_ a: Entry, than b: Entry) -> Bool {
        a.serial < b.serial
    }
}
