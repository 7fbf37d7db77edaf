/// The monotonic clock of media capture times (`MediaHeader.capture_time_us`).
///
/// Microseconds since an instant fixed the first time the clock is read in this process, so a
/// publisher's and a receiver's readings in one process (a test, a benchmark) subtract to a
/// publish-to-receive latency. Across processes the values are unrelated.
public enum MediaClock {
    private static let origin = ContinuousClock.now

    /// Microseconds since the process's media clock origin.
    public static func nowMicroseconds() -> UInt64 {
        let origin = origin  // fixed before reading the clock, so the first reading is not negative
        return microseconds(since: origin, at: .now)
    }

    /// Microseconds since the origin at `instant`.
    ///
    /// - Parameter instant: An instant of `ContinuousClock`.
    /// - Returns: 0 for instants before the origin.
    public static func microseconds(at instant: ContinuousClock.Instant) -> UInt64 {
        microseconds(since: origin, at: instant)
    }

    private static func microseconds(since origin: ContinuousClock.Instant, at instant: ContinuousClock.Instant) -> UInt64 {
        let elapsed = origin.duration(to: instant)
        guard elapsed > .zero else { return 0 }
        let (seconds, attoseconds) = elapsed.components
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }
}
