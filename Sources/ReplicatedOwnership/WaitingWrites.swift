/// The writes waiting for their replicas, each with what its shell runs once it is settled (a
/// responder's answer, the publishing of numbered events): which of them run, and when, is
/// decided here; the callbacks themselves are the shell's, opaque to this table.
///
/// A write runs its callback once it may be acknowledged. One registered as running *settled
/// anyway* runs it also when it may not (its replica left while this member lost the key or most
/// of the cluster, or its key's record was replaced by another's): a channel's numbered events go
/// out all the same, since their numbers are never reused and one withheld would leave a gap.
public struct WaitingWrites<Callback> {
    private var waiting: [UInt64: (callback: Callback, settledAnyway: Bool)] = [:]

    /// No write waiting.
    public init() {}

    /// How many writes wait.
    public var count: Int { waiting.count }

    /// Write `write` waits; `callback` runs once it is settled, also when it may not be
    /// acknowledged if `settledAnyway`.
    public mutating func wait(for write: UInt64, settledAnyway: Bool, _ callback: Callback) {
        waiting[write] = (callback, settledAnyway)
    }

    /// Write `write` is settled; `acknowledged` says whether it may be acknowledged. Returns the
    /// callback to run now, if the write waited here and runs either way or was acknowledged.
    /// The write waits no more either way.
    public mutating func settle(_ write: UInt64, acknowledged: Bool) -> Callback? {
        guard let entry = waiting.removeValue(forKey: write), acknowledged || entry.settledAnyway else { return nil }
        return entry.callback
    }
}

extension WaitingWrites: Sendable where Callback: Sendable {}
