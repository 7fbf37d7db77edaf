import DequeModule
import ShowroomWire

/// One receiver URL's events as a pure state machine: which event to post next, when to retry,
/// when to give up, what to drop. No I/O and no clock of its own: the shell passes `now` in and
/// performs the posts it hands out.
///
/// Per channel, events go strictly in the order enqueued (the coordinator's sequence order):
/// a channel's next event is handed out only once the one before it was delivered or given up.
/// Different channels proceed independently, at most ``Policy/maxConcurrentPosts`` at a time;
/// a channel waiting for its retry does not hold one of those places.
struct WebhookQueue {
    typealias Instant = ContinuousClock.Instant

    /// The limits a queue works within (from ``WebhookSettings``).
    struct Policy: Sendable, Equatable {
        var queueLimit: Int
        var maxAttempts: Int
        var maxConcurrentPosts: Int
        var backoff: WebhookBackoff

        init(_ settings: WebhookSettings) {
            // Clamped, not trusted: settings may have been changed after validation.
            queueLimit = max(1, settings.queueLimit)
            maxAttempts = max(1, settings.maxAttempts)
            maxConcurrentPosts = max(1, settings.maxConcurrentPosts)
            let initial = max(settings.initialBackoff, .milliseconds(1))
            backoff = WebhookBackoff(initial: initial, maximum: max(settings.maxBackoff, initial))
        }
    }

    /// An event to post now; report its outcome with ``delivered(channel:)`` or
    /// ``failed(channel:now:jitter:)``.
    struct Post: Sendable {
        var channel: String
        var event: WebhookEvent
        /// 1 for the first attempt.
        var attempt: Int
    }

    /// What happens after a failed post.
    enum FailureOutcome: Equatable {
        /// The event is posted again once `delay` has passed.
        case retry(after: Duration, failedAttempts: Int)
        /// The event ran out of attempts; the channel's next event goes.
        case givenUp(WebhookEvent, attempts: Int)
    }

    /// A waiting event with its place in the URL's arrival order.
    private struct Waiting {
        var arrival: UInt64
        var event: WebhookEvent
    }

    /// The event of a channel that is being delivered: posted now, or waiting for its retry.
    private struct Current {
        var event: WebhookEvent
        var attempts: Int
        var retryAt: Instant?
    }

    private struct ChannelQueue {
        var waiting: Deque<Waiting> = []
        var current: Current?
    }

    let policy: Policy
    private var channels: [String: ChannelQueue] = [:]
    /// Channels whose next event may be posted, oldest first; entries gone stale (channel
    /// emptied by a drop, or already taken) are skipped when taken.
    private var ready: Deque<String> = []
    /// Channels waiting to retry their current event.
    private var retrying: [String: Instant] = [:]
    /// Every waiting event's (arrival, channel) in arrival order, to find the oldest for a drop;
    /// entries of events that left are pruned lazily.
    private var arrivals: Deque<(arrival: UInt64, channel: String)> = []
    private var nextArrival: UInt64 = 0
    /// Posts handed out and not yet reported.
    private(set) var posting = 0
    /// Events waiting for their turn (not counting current ones).
    private(set) var waitingCount = 0
    /// Channels with a current event (posting or waiting to retry).
    private(set) var currentCount = 0
    private(set) var counts = WebhookCounts()

    init(policy: Policy) {
        self.policy = policy
    }

    /// Nothing waiting, nothing being delivered.
    var isIdle: Bool { waitingCount == 0 && currentCount == 0 }

    /// Adds `event` behind its channel's earlier events.
    ///
    /// - Returns: the event dropped to respect the queue limit (the oldest waiting one of any
    ///   channel, possibly `event` itself when nothing else waits), or nil.
    mutating func enqueue(_ event: WebhookEvent) -> WebhookEvent? {
        let channel = event.orderKey
        let arrival = nextArrival
        nextArrival += 1
        var queue = channels[channel, default: ChannelQueue()]
        if queue.waiting.isEmpty && queue.current == nil { ready.append(channel) }
        queue.waiting.append(Waiting(arrival: arrival, event: event))
        channels[channel] = queue
        arrivals.append((arrival, channel))
        waitingCount += 1
        let dropped = waitingCount > policy.queueLimit ? dropOldest() : nil
        counts.queued = waitingCount + currentCount
        pruneArrivalsIfSparse()
        return dropped
    }

    /// The posts to start now: due retries first (they hold older events), then channels in
    /// the order they became ready, up to the concurrency limit.
    mutating func takePosts(now: Instant) -> [Post] {
        var posts: [Post] = []
        if !retrying.isEmpty && posting < policy.maxConcurrentPosts {
            let due = retrying.filter { $0.value <= now }.sorted { $0.value < $1.value }
            for (channel, _) in due where posting < policy.maxConcurrentPosts {
                retrying[channel] = nil
                guard var current = channels[channel]?.current else { continue }
                current.attempts += 1
                current.retryAt = nil
                channels[channel]?.current = current
                posting += 1
                posts.append(Post(channel: channel, event: current.event, attempt: current.attempts))
            }
        }
        while posting < policy.maxConcurrentPosts, let channel = ready.popFirst() {
            guard var queue = channels[channel], queue.current == nil, let head = queue.waiting.popFirst() else {
                continue
            }
            queue.current = Current(event: head.event, attempts: 1)
            channels[channel] = queue
            waitingCount -= 1
            currentCount += 1
            posting += 1
            posts.append(Post(channel: channel, event: head.event, attempt: 1))
        }
        return posts
    }

    /// The earliest time a retry falls due, if any channel waits for one.
    var nextRetryAt: Instant? {
        retrying.values.min()
    }

    /// The post for `channel` succeeded: its next event may go.
    mutating func delivered(channel: String) {
        guard channels[channel]?.current != nil else { return }
        counts.delivered += 1
        finishCurrent(of: channel)
    }

    /// The post for `channel` failed (error status, timeout, connection error).
    ///
    /// - Parameter jitter: in -1...1, scales the ±20% variation of the wait.
    mutating func failed(channel: String, now: Instant, jitter: Double) -> FailureOutcome? {
        guard var current = channels[channel]?.current else { return nil }
        if current.attempts >= policy.maxAttempts {
            counts.givenUp += 1
            finishCurrent(of: channel)
            return .givenUp(current.event, attempts: current.attempts)
        }
        let delay = policy.backoff.delay(afterAttempt: current.attempts, jitter: jitter)
        current.retryAt = now + delay
        channels[channel]?.current = current
        retrying[channel] = now + delay
        posting -= 1
        counts.retried += 1
        return .retry(after: delay, failedAttempts: current.attempts)
    }

    private mutating func finishCurrent(of channel: String) {
        guard var queue = channels[channel] else { return }
        queue.current = nil
        posting -= 1
        currentCount -= 1
        if queue.waiting.isEmpty {
            channels[channel] = nil
        } else {
            channels[channel] = queue
            ready.append(channel)
        }
        counts.queued = waitingCount + currentCount
    }

    /// Removes the oldest waiting event of any channel.
    private mutating func dropOldest() -> WebhookEvent? {
        while let entry = arrivals.popFirst() {
            let channel = entry.channel
            guard var queue = channels[channel], let first = queue.waiting.first, first.arrival == entry.arrival else {
                continue  // that event already left
            }
            queue.waiting.removeFirst()
            channels[channel] = queue.waiting.isEmpty && queue.current == nil ? nil : queue
            waitingCount -= 1
            counts.dropped += 1
            return first.event
        }
        return nil
    }

    /// Rebuilds the arrival order once most of its entries are stale, so it stays proportional
    /// to the waiting events even when one old event sits in front of a fast stream.
    private mutating func pruneArrivalsIfSparse() {
        guard arrivals.count > 2 * waitingCount + 64 else { return }
        arrivals = Deque(arrivals.filter { entry in
            guard let first = channels[entry.channel]?.waiting.first else { return false }
            return first.arrival <= entry.arrival
        })
    }
}
