/// What became of the events given to one receiver URL (or to all of them), since the
/// dispatcher started.
public struct WebhookCounts: Sendable, Equatable, Codable {
    /// Events the receiver answered with 2xx.
    public var delivered = 0
    /// Failed posts that were followed by another attempt.
    public var retried = 0
    /// Events that failed every attempt and were abandoned.
    public var givenUp = 0
    /// Events dropped unposted: beyond the queue limit, or enqueued after shutdown began.
    public var dropped = 0
    /// Events not yet delivered, given up or dropped: waiting, being posted or waiting to retry.
    public var queued = 0

    /// All zero.
    public init() {}

    /// The sum of two counts, field by field.
    public static func + (lhs: WebhookCounts, rhs: WebhookCounts) -> WebhookCounts {
        var sum = lhs
        sum.delivered += rhs.delivered
        sum.retried += rhs.retried
        sum.givenUp += rhs.givenUp
        sum.dropped += rhs.dropped
        sum.queued += rhs.queued
        return sum
    }
}

/// A snapshot of webhook delivery: counts per receiver URL and in total.
public struct WebhookStatistics: Sendable, Equatable, Codable {
    /// Counts keyed by the URL as configured.
    public var perURL: [String: WebhookCounts]
    /// The sum over every URL.
    public var total: WebhookCounts

    /// Statistics from per-URL counts; the total is their sum.
    public init(perURL: [String: WebhookCounts]) {
        self.perURL = perURL
        self.total = perURL.values.reduce(WebhookCounts(), +)
    }
}
