/// A client's guard against stale and repeated notices: each call's notices are taken in
/// increasing sequence only, and notices of a call older than the current one are dropped.
public struct CallNoticeFilter: Sendable, Equatable {
    private var last: [String: UInt64] = [:]
    private var order: [String] = []
    /// How many calls' sequences are remembered.
    public static let remembered = 16

    /// An empty filter.
    public init() {}

    /// Whether to take notice `sequence` of call `callID`.
    public mutating func take(callID: String, sequence: UInt64) -> Bool {
        if let seen = last[callID] {
            guard sequence > seen else { return false }
        } else {
            order.append(callID)
            if order.count > Self.remembered { last[order.removeFirst()] = nil }
        }
        last[callID] = sequence
        return true
    }
}
