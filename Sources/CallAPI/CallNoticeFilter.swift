/// A client's guard against stale and repeated notices: each call's notices are taken in
/// increasing sequence only, and notices of a call older than the current one are dropped. A
/// call's end is taken once whatever its number: an end is final, and the node that sends it may
/// number below what another node told this client while it held the call on the other side of a
/// partition (dropped, the end would leave the client in a call that is over).
public struct CallNoticeFilter: Sendable, Equatable {
    private var last: [String: UInt64] = [:]
    private var ended: Set<String> = []
    private var order: [String] = []
    /// How many calls' sequences are remembered.
    public static let remembered = 16

    /// An empty filter.
    public init() {}

    /// Whether to take notice `sequence` of call `callID`; `ends`: the notice ends the call.
    public mutating func take(callID: String, sequence: UInt64, ends: Bool = false) -> Bool {
        if let seen = last[callID] {
            guard sequence > seen || (ends && !ended.contains(callID)) else { return false }
            last[callID] = max(seen, sequence)
        } else {
            order.append(callID)
            if order.count > Self.remembered {
                let forgotten = order.removeFirst()
                last[forgotten] = nil
                ended.remove(forgotten)
            }
            last[callID] = sequence
        }
        if ends { ended.insert(callID) }
        return true
    }
}
