/// The wait before retrying a failed post: `initial` doubling per failed attempt up to `maximum`,
/// then varied by up to ±20% so that many events failing together do not retry together.
struct WebhookBackoff: Sendable, Equatable {
    /// Largest share by which a wait is lengthened or shortened.
    static let jitterShare = 0.2

    var initial: Duration
    var maximum: Duration

    /// The wait after the `attempt`-th failed attempt (1 for the first), with `jitter` in -1...1
    /// scaling the ±20% (0: none).
    func delay(afterAttempt attempt: Int, jitter: Double) -> Duration {
        var base = initial
        var doublings = max(0, attempt - 1)
        while doublings > 0 && base < maximum {
            base = base * 2
            doublings -= 1
        }
        base = min(base, maximum)
        let factor = 1 + Self.jitterShare * min(1, max(-1, jitter))
        let (seconds, attoseconds) = base.components
        let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds / 1_000_000_000)
        return .nanoseconds(Int64((nanoseconds * factor).rounded()))
    }
}
