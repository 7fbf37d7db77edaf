/// When an automatic rejoin tries again: 250 ms after the first failed attempt, doubling to at
/// most 2 s, until 30 s after the edge was lost. A plain value, so the schedule is tested without
/// clocks.
struct RejoinBackoff: Sendable, Hashable {
    /// The first wait.
    static let initialDelay = Duration.milliseconds(250)
    /// The longest wait.
    static let maximumDelay = Duration.seconds(2)

    /// Failed attempts so far.
    private(set) var failures = 0

    /// The wait before the next attempt after one more failure, or `nil` when that attempt would
    /// start after `window` has passed since the loss (`elapsed` is the time since then): give up.
    mutating func next(elapsed: Duration, window: Duration) -> Duration? {
        failures += 1
        var delay = Self.initialDelay
        for _ in 1..<failures where delay < Self.maximumDelay { delay *= 2 }
        delay = min(delay, Self.maximumDelay)
        return elapsed + delay < window ? delay : nil
    }
}
