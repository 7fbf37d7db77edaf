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

    /// Pictures decoded after `instant`.
    public func count(after instant: ContinuousClock.Instant) -> Int {
        times.withLock { $0.filter { $0 > instant }.count }
    }

    /// The longest time without a picture from `instant` to the last picture.
    public func longestGap(after instant: ContinuousClock.Instant) -> Duration {
        times.withLock { times in
            var previous = instant
            var longest = Duration.zero
            for time in times where time > instant {
                longest = max(longest, previous.duration(to: time))
                previous = time
            }
            return longest
        }
    }
}
