import Dispatch
import Logging
import RoomStore

/// The coordinator's database writes on a thread of their own, in the order they were made: the
/// node's loop, which also ticks gossip every 10 ms, never waits on SQLite. The state in memory
/// is authoritative (and replicated); a failed write is logged. In one-process runs (a
/// simulation) the writes happen inline instead, so what a killed coordinator had written does not
/// depend on a thread's timing.
final class StoreWriter: Sendable {
    /// The database.
    let store: RoomStore
    /// Nil: writes happen inline, on the caller's thread.
    private let queue: DispatchQueue?
    private let logger: Logger

    init(store: RoomStore, logger: Logger, inline: Bool = false) {
        self.store = store
        self.logger = logger
        queue = inline ? nil : DispatchQueue(label: "coordinator-store")
    }

    /// Queues `write` (or makes it now, inline).
    func write(_ write: @escaping @Sendable (RoomStore) throws -> Void) {
        let perform: @Sendable () -> Void = { [store, logger] in
            do {
                try write(store)
            } catch {
                logger.error("database write failed", metadata: ["error": "\(error)"])
            }
        }
        guard let queue else { return perform() }
        queue.async(execute: perform)
    }

    /// Waits until every write queued so far is done.
    func flush() {
        queue?.sync {}
    }
}
