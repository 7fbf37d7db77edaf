/// The broadcast queue: membership updates waiting to be piggy-backed on probes or sent in gossip
/// rounds, each sent a bounded number of times.
///
/// At most one update per member is queued (a newer one replaces the older, which it supersedes).
/// Selection prefers the least-sent updates, newest first, so fresh news (a suspicion, a
/// refutation) goes out on the very next message, and stops at a count and a byte budget so
/// messages stay small however much is queued. An update is dropped after `limit` sends.
struct Dissemination: Sendable {
    private struct Entry: Sendable {
        var update: MemberUpdate
        let size: Int
        var transmits: Int
        let order: UInt64
    }

    private var entries: [Entry] = []
    private var nextOrder: UInt64 = 0
    /// Whether `entries` is known to be in selection order.
    private var sorted = true

    /// Nothing to send.
    var isEmpty: Bool { entries.isEmpty }

    /// Updates queued.
    var count: Int { entries.count }

    /// Queues `update`, replacing any queued update about the same member.
    mutating func enqueue(_ update: MemberUpdate) {
        if let index = entries.firstIndex(where: { $0.update.id == update.id }) {
            entries.remove(at: index)
        }
        entries.append(Entry(update: update, size: update.estimatedSize, transmits: 0, order: nextOrder))
        nextOrder &+= 1
        sorted = false
    }

    /// Drops any queued update about `id` (a forgotten member).
    mutating func remove(_ id: MemberID) {
        entries.removeAll { $0.update.id == id }
    }

    /// The queued update about `id`, if any.
    func queued(about id: MemberID) -> MemberUpdate? {
        entries.first { $0.update.id == id }?.update
    }

    /// Appends updates for one message to `result` and counts them as sent once more.
    ///
    /// - Parameters:
    ///   - result: Receives the updates (it may already hold some; they count toward the bounds).
    ///   - limit: Sends after which an update is dropped.
    ///   - maxCount: Most updates in `result` afterwards.
    ///   - maxBytes: Most estimated bytes of the appended updates.
    ///   - skipping: A member whose update must not be added (already in `result`).
    mutating func select(
        into result: inout [MemberUpdate],
        limit: Int,
        maxCount: Int,
        maxBytes: Int,
        skipping: MemberID? = nil
    ) {
        guard !entries.isEmpty, result.count < maxCount else { return }
        if !sorted {
            // Least sent first, then newest first.
            entries.sort { $0.transmits != $1.transmits ? $0.transmits < $1.transmits : $0.order > $1.order }
            sorted = true
        }
        var bytes = 0
        var expired = false
        for index in entries.indices {
            let entry = entries[index]
            if entry.update.id == skipping || bytes + entry.size > maxBytes { continue }
            result.append(entry.update)
            bytes += entry.size
            entries[index].transmits += 1
            if entries[index].transmits >= limit { expired = true }
            if result.count >= maxCount { break }
        }
        if expired {
            entries.removeAll { $0.transmits >= limit }
        }
        sorted = false
    }
}
