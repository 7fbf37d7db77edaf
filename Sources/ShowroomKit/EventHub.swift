import Synchronization

/// Hands every event to each of its streams: several readers, each with its own buffer, none
/// taking events from another. Any thread.
final class EventHub<Event: Sendable>: Sendable {
    private struct Readers: ~Copyable {
        var continuations: [Int: (continuation: AsyncStream<Event>.Continuation, include: @Sendable (Event) -> Bool)] = [:]
        var next = 0
        var finished = false
    }

    private let readers = Mutex(Readers())

    /// A new stream of the events yielded from now on (those `include` takes), keeping the newest
    /// `limit` unread ones.
    func stream(bufferingNewest limit: Int, where include: @escaping @Sendable (Event) -> Bool = { _ in true }) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        let id: Int? = readers.withLock { readers in
            guard !readers.finished else { return nil }
            let id = readers.next
            readers.next += 1
            readers.continuations[id] = (continuation, include)
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
        let readers = readers.withLock { Array($0.continuations.values) }
        for reader in readers where reader.include(event) { reader.continuation.yield(event) }
    }

    /// Ends every stream; later streams end at once.
    func finish() {
        let continuations = readers.withLock { readers in
            readers.finished = true
            defer { readers.continuations = [:] }
            return readers.continuations.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }
}
