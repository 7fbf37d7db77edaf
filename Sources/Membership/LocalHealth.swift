/// Lifeguard's local health multiplier (LHM): a score from 0 (healthy) to a maximum that rises
/// when the local member shows signs of being the slow one — probes it could not complete while
/// the intermediaries still answered, having to refute a suspicion of itself — and falls with
/// every successful probe. Probe interval and timeout are multiplied by (score + 1), so a
/// struggling member probes less often and waits longer instead of accusing healthy members.
struct LocalHealth: Sendable {
    /// The current score, `0...maximum`.
    private(set) var score: Int = 0
    /// The highest score.
    let maximum: Int

    init(maximum: Int) {
        self.maximum = Swift.max(0, maximum)
    }

    /// Adds `delta` (negative to improve), clamped to `0...maximum`.
    mutating func apply(_ delta: Int) {
        score = Swift.min(maximum, Swift.max(0, score + delta))
    }

    /// `duration × (score + 1)`.
    func scale(_ duration: Duration) -> Duration {
        duration * (score + 1)
    }
}
