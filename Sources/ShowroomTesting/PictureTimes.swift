import Synchronization

/// When a viewer decoded each picture, for measuring how long video stopped.
public final class PictureTimes: Sendable {
    private let times = Mutex<[ContinuousClock.Instant]>([])

    /// No pictures yet.
    public init() {}

    /// Records a decoded picture now.
    public func record() { times.withLock { $0.append(.now) } }

    /// Whether no picture was decoded yet.
    public var isEmpty: Bool { times.withLock { $0.isEmpty } }

    /// The first picture decoded after `instant`.
    public func first(after instant: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        times.withLock { $0.first { $0 > instant } }
    }
}
