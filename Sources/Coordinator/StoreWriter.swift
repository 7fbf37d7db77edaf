import Dispatch
import Logging
import RoomStore

/// The coordinator's database writes on a thread of their own, in the order they were made: the
/// node's loop, which also ticks gossip every 10 ms, never waits on SQLite. The state in memory
/// is authoritative (and replicated); a failed write is logged.
final class StoreWriter: Sendable {
    /// The database.
    let store: RoomStore
    private let queue = DispatchQueue(label: "coordinator-store")
    private let logger: Logger

    init(store: RoomStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Queues `write`.
    func write(_ write: @escaping @Sendable (RoomStore) throws -> Void) {
        queue.async { [store, logger] in
            do {
                try write(store)
            } catch {
                logger.error("database write failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Waits until every write queued so far is done.
    func flush() {
        queue.sync {}
    }
}
