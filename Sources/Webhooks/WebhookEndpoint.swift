import AsyncHTTPClient
import Logging
import ShowroomWire
import Synchronization

/// One receiver URL: its ``WebhookQueue`` behind a mutex, and the task that performs what the
/// queue hands out (posts, retries after their wait). Enqueueing only takes the mutex briefly
/// and signals the task, so it never blocks the caller.
final class WebhookEndpoint: Sendable {
    let url: String
    private let secret: String
    private let requestTimeout: Duration
    private let client: HTTPClient
    private let logger: Logger
    private let state: Mutex<State>
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    private struct State {
        var queue: WebhookQueue
        var closing = false
        /// Events refused because shutdown had begun.
        var refused = 0
        /// Drops not yet reported in a warning, and when the last warning went out.
        var unreportedDrops = 0
        var lastDropWarning: ContinuousClock.Instant?
    }

    /// Drops are reported at most this often per URL: under overload they come by thousands.
    private static let dropWarningInterval: Duration = .seconds(5)
    /// Bytes of a response body read (and discarded) so the connection can be reused.
    private static let responseBodyLimit = 64 * 1024

    init(url: String, settings: WebhookSettings, client: HTTPClient, logger: Logger) {
        self.url = url
        self.secret = settings.secret
        self.requestTimeout = settings.requestTimeout
        self.client = client
        var logger = logger
        logger[metadataKey: "webhook"] = "\(url)"
        self.logger = logger
        self.state = Mutex(State(queue: WebhookQueue(policy: WebhookQueue.Policy(settings))))
        // One pending wake-up is enough: each wake-up looks at the whole queue.
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues `event` behind its channel's earlier events.
    func enqueue(_ event: WebhookEvent) {
        enum Outcome { case queued, refused, dropped(WebhookEvent, report: Int?) }
        let outcome = state.withLock { state -> Outcome in
            guard !state.closing else {
                state.refused += 1
                return .refused
            }
            guard let dropped = state.queue.enqueue(event) else { return .queued }
            state.unreportedDrops += 1
            let now = ContinuousClock.now
            if let last = state.lastDropWarning, now - last < Self.dropWarningInterval {
                return .dropped(dropped, report: nil)
            }
            state.lastDropWarning = now
            defer { state.unreportedDrops = 0 }
            return .dropped(dropped, report: state.unreportedDrops)
        }
        switch outcome {
        case .queued:
            signal.yield()
        case .refused:
            logger.debug("webhook event refused: shutting down", metadata: ["notice": "\(event.noticeID)"])
        case .dropped(let dropped, let report):
            signal.yield()
            logger.debug("webhook event dropped: queue full", metadata: ["notice": "\(dropped.noticeID)"])
            if let report {
                logger.warning(
                    "webhook queue full: dropping the oldest events",
                    metadata: ["dropped": "\(report)", "oldest_dropped": "\(dropped.noticeID)"])
            }
        }
    }

    /// The counts so far.
    var counts: WebhookCounts {
        state.withLock { state in
            var counts = state.queue.counts
            counts.dropped += state.refused
            return counts
        }
    }

    /// Refuses new events from now on and lets ``run()`` return once the queue is empty.
    func close() {
        state.withLock { $0.closing = true }
        signal.yield()
    }

    /// Delivers until closed and empty, or until the task is cancelled (in-flight posts are
    /// then cancelled too).
    func run() async {
        await withDiscardingTaskGroup { group in
            var wakeUpAt: ContinuousClock.Instant?
            for await _ in signals {
                let now = ContinuousClock.now
                let (posts, retryAt, finished) = state.withLock { state in
                    (state.queue.takePosts(now: now), state.queue.nextRetryAt, state.closing && state.queue.isIdle)
                }
                if finished { break }
                for post in posts {
                    group.addTask { await self.deliver(post) }
                }
                if let pending = wakeUpAt, pending <= now { wakeUpAt = nil }
                // A retry already due but not taken waits for a place: the end of a post wakes us.
                if let retryAt, retryAt > now, wakeUpAt.map({ retryAt < $0 }) ?? true {
                    wakeUpAt = retryAt
                    let signal = self.signal
                    group.addTask {
                        try? await Task.sleep(until: retryAt, clock: .continuous)
                        signal.yield()
                    }
                }
            }
            group.cancelAll()  // pending wake-ups
        }
    }

    /// Posts one event and reports the outcome to the queue.
    private func deliver(_ post: WebhookQueue.Post) async {
        let failure = await self.post(post.event)
        if Task.isCancelled { return }  // shutting down: the outcome no longer matters
        let now = ContinuousClock.now
        let metadata: Logger.Metadata = [
            "notice": "\(post.event.noticeID)", "attempt": "\(post.attempt)",
        ]
        if let failure {
            let outcome = state.withLock { $0.queue.failed(channel: post.channel, now: now, jitter: .random(in: -1...1)) }
            switch outcome {
            case .retry(let delay, _):
                logger.debug(
                    "webhook post failed, will retry",
                    metadata: metadata.merging(["error": "\(failure)", "retry_in": "\(delay)"]) { $1 })
            case .givenUp(_, let attempts):
                logger.warning(
                    "webhook event given up",
                    metadata: metadata.merging(["error": "\(failure)", "attempts": "\(attempts)"]) { $1 })
            case nil:
                break
            }
        } else {
            state.withLock { $0.queue.delivered(channel: post.channel) }
            logger.trace("webhook event delivered", metadata: metadata)
        }
        signal.yield()
    }

    /// POSTs `event`; returns nil when the receiver answered 2xx, else what went wrong.
    private func post(_ event: WebhookEvent) async -> String? {
        let body = event.body
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Showroom-Webhooks")
        request.headers.add(name: WebhookSignature.noticeHeader, value: event.noticeID)
        if !secret.isEmpty {
            request.headers.add(name: WebhookSignature.header, value: WebhookSignature.sign(body: body, secret: secret))
        }
        request.body = .bytes(body)
        let status: UInt
        do {
            let response = try await client.execute(
                request, timeout: .nanoseconds(Self.nanoseconds(requestTimeout)), logger: logger)
            status = response.status.code
            // Read a little of the body so the connection can carry the next post.
            var remaining = Self.responseBodyLimit
            do {
                for try await chunk in response.body {
                    remaining -= chunk.readableBytes
                    if remaining < 0 { break }
                }
            } catch {
                // The answer's status is what counts; a body cut short only costs the connection.
            }
        } catch {
            return "\(error)"
        }
        return (200..<300).contains(status) ? nil : "HTTP status \(status)"
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
