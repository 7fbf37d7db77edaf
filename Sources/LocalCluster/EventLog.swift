import ShowroomKit
import ShowroomWire
import Synchronization

/// Everything an engine reported, kept for a test or a benchmark to wait on.
public final class EventLog: Sendable {
    private final class Store: Sendable {
        let events = Mutex<[EngineEvent]>([])
    }
    private let store = Store()
    private let reader: Task<Void, Never>

    /// Starts recording `engine`'s events.
    public init(_ engine: ShowroomEngine) {
        let store = self.store
        reader = Task {
            for await event in engine.events { store.events.withLock { $0.append(event) } }
        }
    }

    deinit { reader.cancel() }

    /// The events so far.
    public var all: [EngineEvent] { store.events.withLock { $0 } }

    /// Waits until an event matches, polling the log every 10 ms until `timeout`.
    @discardableResult
    public func wait(_ what: String, timeout: Duration = .seconds(10), _ match: @escaping (EngineEvent) -> Bool) async throws -> EngineEvent {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = all.first(where: match) { return event }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ShowroomError.deadlineExceeded("no \(what) within \(timeout); events: \(all.suffix(20))")
    }
}

