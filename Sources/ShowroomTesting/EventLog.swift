import Foundation
import ShowroomKit
import ShowroomWire
import Synchronization

/// Everything an engine reported, kept for a test or a benchmark to wait on. Waits sleep until
/// the engine reports something new (they await its event stream, never poll).
public final class EventLog: Sendable {
    private final class Store: Sendable {
        struct State {
            var events: [EngineEvent] = []
            var waiters: [UUID: AsyncStream<Void>.Continuation] = [:]
        }
        let state = Mutex(State())

        func append(_ event: EngineEvent) {
            let waiters = state.withLock { state in
                state.events.append(event)
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.yield() }
        }
    }
    private let store = Store()
    private let reader: Task<Void, Never>

    /// Starts recording `engine`'s events.
    public init(_ engine: ShowroomEngine) {
        let store = self.store
        reader = Task {
            for await event in engine.events { store.append(event) }
        }
    }

    deinit { reader.cancel() }

    /// The events so far.
    public var all: [EngineEvent] { store.state.withLock { $0.events } }

    /// The first event (already reported or still to come) that `match` maps to a value, waiting
    /// up to `timeout` for it.
    public func first<T>(within timeout: Duration = .seconds(10), _ what: String,
                         _ match: (EngineEvent) -> T?) async throws -> T {
        let (changes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        store.state.withLock { $0.waiters[id] = continuation }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            continuation.finish()
        }
        defer {
            timer.cancel()
            _ = store.state.withLock { $0.waiters.removeValue(forKey: id) }
        }
        var checked = 0
        var next = changes.makeAsyncIterator()
        while true {
            let events = all
            if let found = events[checked...].lazy.compactMap(match).first { return found }
            checked = events.count
            guard await next.next() != nil else { break }
        }
        if let found = all[checked...].lazy.compactMap(match).first { return found }
        throw ShowroomError.deadlineExceeded("no \(what) within \(timeout); events: \(all.suffix(20))")
    }

    /// Waits until an event matches (or has), up to `timeout`, and returns it.
    @discardableResult
    public func wait(_ what: String, timeout: Duration = .seconds(10), _ match: (EngineEvent) -> Bool) async throws -> EngineEvent {
        try await first(within: timeout, what) { match($0) ? $0 : nil }
    }
}
