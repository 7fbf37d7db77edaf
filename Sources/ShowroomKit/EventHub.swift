import Synchronization

/// Hands every event to each of its streams: several readers, each with its own buffer, none
/// taking events from another. Any thread.
final class EventHub<Event: Sendable>: Sendable {
    private struct Readers: ~Copyable {
        var continuations: [Int: AsyncStream<Event>.Continuation] = [:]
        var next = 0
        var finished = false
    }

    private let readers = Mutex(Readers())

    /// A new stream of the events yielded from now on, keeping the newest `limit` unread ones.
    func stream(bufferingNewest limit: Int) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        let id: Int? = readers.withLock { readers in
            guard !readers.finished else { return nil }
            let id = readers.next
            readers.next += 1
            readers.continuations[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.readers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Hands `event` to every stream.
    func yield(_ event: Event) {
        let continuations = readers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Ends every stream; later streams end at once.
    func finish() {
        let continuations = readers.withLock { readers in
            readers.finished = true
            defer { readers.continuations = [:] }
            return Array(readers.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
