import Foundation
import ShowroomWire

/// Where channel events are posted and how hard delivery tries: one Sendable value, filled from
/// flags or a configuration file and validated once.
///
/// Every URL gets every event. Per URL and per channel, events are posted strictly in sequence
/// order; a failed post is retried with exponential backoff until ``maxAttempts``, then the event
/// is given up and the channel's next event goes.
public struct WebhookSettings: Sendable, Equatable {
    /// The receivers: `http://` or `https://` URLs with a host, each at most once. Empty means
    /// webhooks are off (events are accepted and discarded).
    public var urls: [String]
    /// The HMAC-SHA256 key of the ``WebhookSignature/header``; empty sends events unsigned (the
    /// header is omitted).
    public var secret: String
    /// Longest one post may take, connecting included, before it counts as failed. Default 5 s.
    public var requestTimeout: Duration = .seconds(5)
    /// Wait before the first retry; doubles per failed attempt up to ``maxBackoff``, each wait
    /// varied by ±20% so receivers coming back are not hit in lockstep. Default 200 ms.
    public var initialBackoff: Duration = .milliseconds(200)
    /// Longest wait between two attempts (before the ±20%). Default 10 s.
    public var maxBackoff: Duration = .seconds(10)
    /// Attempts per event, the first included; after the last one fails the event is given up
    /// (counted, logged) and the channel's next event goes. Default 20.
    public var maxAttempts: Int = 20
    /// Events waiting per URL; beyond it the oldest waiting event (of any channel) is dropped
    /// (counted, logged). Default 10 000.
    public var queueLimit: Int = 10_000
    /// Posts under way at once per URL, each for a different channel. Default 8.
    public var maxConcurrentPosts: Int = 8

    /// Settings for `urls`, validated.
    ///
    /// - Throws: `INVALID_ARGUMENT` (1007) naming the first bad value: a URL that is not http(s)
    ///   or has no host, a URL given twice, a duration that is not positive, a backoff ceiling
    ///   below the initial backoff, or a count below 1.
    public init(
        urls: [String],
        secret: String,
        requestTimeout: Duration = .seconds(5),
        initialBackoff: Duration = .milliseconds(200),
        maxBackoff: Duration = .seconds(10),
        maxAttempts: Int = 20,
        queueLimit: Int = 10_000,
        maxConcurrentPosts: Int = 8
    ) throws(ShowroomError) {
        self.urls = urls
        self.secret = secret
        self.requestTimeout = requestTimeout
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxAttempts = maxAttempts
        self.queueLimit = queueLimit
        self.maxConcurrentPosts = maxConcurrentPosts
        try validate()
    }

    /// Checks every field. The initializer calls it; call it again after changing fields.
    ///
    /// - Throws: `INVALID_ARGUMENT` (1007) naming the first bad value and what is allowed.
    public func validate() throws(ShowroomError) {
        var seen = Set<String>()
        for url in urls {
            try Self.validate(url: url)
            guard seen.insert(url).inserted else {
                throw .invalidArgument("webhook URL '\(url)' is listed twice; list each receiver once")
            }
        }
        let durations = [
            ("request timeout", requestTimeout), ("initial backoff", initialBackoff), ("maximum backoff", maxBackoff),
        ]
        for (name, value) in durations where value <= .zero {
            throw .invalidArgument("webhook \(name) is \(value); it must be positive")
        }
        guard maxBackoff >= initialBackoff else {
            throw .invalidArgument(
                "webhook maximum backoff (\(maxBackoff)) is below the initial backoff (\(initialBackoff)); raise it")
        }
        let counts = [
            ("maximum attempts", maxAttempts), ("queue limit", queueLimit), ("maximum concurrent posts", maxConcurrentPosts),
        ]
        for (name, value) in counts where value < 1 {
            throw .invalidArgument("webhook \(name) is \(value); it must be at least 1")
        }
    }

    /// Accepts `http(s)://host[:port][/path][?query]` and rejects anything else, saying what
    /// is wrong.
    static func validate(url text: String) throws(ShowroomError) {
        let example = "give one like https://example.com/showroom/events"
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw .invalidArgument("webhook URL '\(text)' is not a URL; \(example)")
        }
        guard scheme == "http" || scheme == "https" else {
            throw .invalidArgument("webhook URL '\(text)' has scheme '\(scheme)'; only http and https are supported")
        }
        guard let host = url.host, !host.isEmpty else {
            throw .invalidArgument("webhook URL '\(text)' has no host; \(example)")
        }
    }
}
