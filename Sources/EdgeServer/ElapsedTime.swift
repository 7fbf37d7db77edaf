import NodeRuntime

/// Time since a start, read from an injected ``WallClock``: what the edge's machines take as
/// `now`. It never goes back (a wall clock stepped back holds it until the clock catches up), so
/// the machines' timers keep their order; the wall clock itself is still there for what is
/// reported in Unix time.
struct ElapsedTime {
    /// The clock read.
    let clock: WallClock
    private let startMs: Int64
    private var latestMs: Int64

    /// Time from now on, on `clock`.
    init(_ clock: WallClock) {
        self.clock = clock
        startMs = clock.nowMs()
        latestMs = startMs
    }

    /// Time since the start.
    mutating func now() -> Duration {
        latestMs = max(latestMs, clock.nowMs())
        return .milliseconds(latestMs - startMs)
    }

    /// Milliseconds since the Unix epoch, as the clock says.
    var unixNowMs: Int64 { clock.nowMs() }
}
