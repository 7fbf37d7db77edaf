/// One client session on this edge: one client connection (a DEALER connected to the edge's
/// ROUTER). Opaque to ``ChannelPlane``; the shell derives it from the ZeroMQ routing id.
///
/// ZeroMQ's generated routing ids are 5 bytes, so ``init(routingID:)`` packs any routing id of up
/// to 7 bytes losslessly (bytes in the low 56 bits, length in the top byte) and
/// ``withRoutingID(_:)`` unpacks it on the stack: the fan-out path needs no table lookup and no
/// allocation to address a subscriber. A shell with longer routing ids keeps its own table and
/// uses ``init(_:)``.
public struct SessionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The packed value.
    public let rawValue: UInt64

    /// Creates an id from a value the shell chose.
    ///
    /// - Parameter rawValue: Any value unique among the edge's open sessions.
    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Packs a ZeroMQ routing id of 1–7 bytes.
    ///
    /// - Parameter routingID: The routing id frame a ROUTER put in front of a message.
    /// - Returns: `nil` if the routing id is empty or longer than 7 bytes.
    public init?(routingID: some Collection<UInt8>) {
        guard !routingID.isEmpty, routingID.count <= 7 else { return nil }
        var value = UInt64(routingID.count) << 56
        for (shift, byte) in routingID.enumerated() {
            value |= UInt64(byte) << (UInt64(shift) * 8)
        }
        rawValue = value
    }

    /// Length of the packed routing id, 0 if this id was not made by ``init(routingID:)``.
    public var routingIDLength: Int {
        let length = Int(rawValue >> 56)
        return length <= 7 ? length : 0
    }

    /// Calls `body` with the routing id this id was packed from, without allocating.
    ///
    /// - Parameter body: Receives the routing id bytes (empty if the id was not made by
    ///   ``init(routingID:)``); they are valid only inside the call.
    /// - Returns: What `body` returns.
    public func withRoutingID<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var bytes = rawValue.littleEndian
        let length = routingIDLength
        return try withUnsafeBytes(of: &bytes) { (raw) throws(E) -> R in
            try body(UnsafeRawBufferPointer(rebasing: raw.prefix(length)))
        }
    }

    /// The routing id bytes (allocates; for logs and tests).
    public var routingID: [UInt8] {
        withRoutingID { Array($0) }
    }

    /// Orders ids by their raw value (deterministic event order in tests).
    public static func < (lhs: SessionID, rhs: SessionID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// `s` followed by the raw value in hexadecimal.
    public var description: String {
        "s" + String(rawValue, radix: 16)
    }
}
