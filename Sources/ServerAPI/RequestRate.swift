/// Each customer key's request rate: a token bucket per key, `perSecond` tokens a second up to
/// `burst`. Pure: the caller passes the time. Only authenticated keys have a bucket, so the table
/// never holds more entries than the configuration has keys.
public struct RequestRate: Sendable {
    /// Requests a second a key may make on average.
    public let perSecond: Double
    /// Requests a key may make at once after a quiet while.
    public let burst: Double
    private var buckets: [String: (tokens: Double, atMs: Int64)] = [:]

    /// A key's own rate: requests a second on average, and at once after a quiet while.
    public struct Limit: Sendable, Equatable {
        public var perSecond: Double
        public var burst: Int

        /// A rate of `perSecond` with `burst`.
        public init(perSecond: Double, burst: Int) {
            self.perSecond = perSecond
            self.burst = burst
        }
    }

    /// A rate of `perSecond` with `burst`; both at least 1.
    public init(perSecond: Double, burst: Int) {
        self.perSecond = max(perSecond, 0.001)
        self.burst = Double(max(burst, 1))
    }

    /// Takes one request for `key` at `nowMs`, at the key's own `rate` if it has one.
    /// - Returns: nil when it may go ahead; otherwise the whole seconds until it may (at least 1).
    public mutating func take(_ key: String, rate: Limit? = nil, nowMs: Int64) -> Int? {
        let perSecond = max(rate?.perSecond ?? self.perSecond, 0.001)
        let burst = Double(max(rate?.burst ?? Int(self.burst), 1))
        var bucket = buckets[key] ?? (tokens: burst, atMs: nowMs)
        // A clock that went back refills nothing; a long pause refills to the burst.
        let elapsedMs = Double(max(0, nowMs &- bucket.atMs))
        bucket.tokens = min(burst, bucket.tokens + elapsedMs / 1000 * perSecond)
        bucket.atMs = nowMs
        defer { buckets[key] = bucket }
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            return nil
        }
        let wait = Int(min(((1 - bucket.tokens) / perSecond).rounded(.up), 86_400))
        return max(wait, 1)
    }
}
