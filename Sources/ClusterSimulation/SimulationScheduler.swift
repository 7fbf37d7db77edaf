import HeapModule
import Synchronization

/// Simulated time, in milliseconds since the Unix epoch: what every node's clock reads (plus the
/// node's skew). Sendable, because ``WallClock`` takes a sendable closure; only the scheduler
/// moves it.
final class SimulatedTime: Sendable {
    private let ms: Atomic<Int64>
    init(_ ms: Int64) { self.ms = Atomic(ms) }
    var now: Int64 { ms.load(ordering: .relaxed) }
    func set(_ value: Int64) { ms.store(value, ordering: .relaxed) }
}

/// The run's only source of progress: events ordered by (time, sequence), where the sequence
/// counts insertions, so that events due at the same time run in the order they were scheduled.
/// When nothing is due, time jumps to the next event.
public final class SimulationScheduler {
    private struct Key: Comparable {
        let time: Int64
        let sequence: UInt64
        static func < (a: Key, b: Key) -> Bool { (a.time, a.sequence) < (b.time, b.sequence) }
    }

    let time: SimulatedTime
    private var heap = Heap<Key>()
    private var actions: [UInt64: () -> Void] = [:]
    private var sequence: UInt64 = 0
    /// Events run so far.
    public private(set) var eventsRun = 0

    init(startMs: Int64) {
        time = SimulatedTime(startMs)
    }

    /// The simulated time now.
    public var now: Int64 { time.now }

    /// Runs `action` at `at` (now, if that is past).
    public func schedule(at: Int64, _ action: @escaping () -> Void) {
        sequence += 1
        heap.insert(Key(time: max(at, now), sequence: sequence))
        actions[sequence] = action
    }

    /// Runs `action` `delayMs` from now.
    public func after(_ delayMs: Int64, _ action: @escaping () -> Void) {
        schedule(at: now + max(delayMs, 0), action)
    }

    /// Runs every event due up to `end`, then sets the time to `end`. Stops early, returning
    /// false, once `maxEvents` events ran in this call.
    @discardableResult
    public func run(until end: Int64, maxEvents: Int = .max) -> Bool {
        var ran = 0
        while let next = heap.min, next.time <= end {
            guard ran < maxEvents else { return false }
            heap.removeMin()
            time.set(next.time)
            let action = actions.removeValue(forKey: next.sequence)!
            ran += 1
            eventsRun += 1
            action()
        }
        time.set(max(end, now))
        return true
    }
}
