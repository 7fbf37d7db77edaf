import AsyncHTTPClient
import Logging
import ShowroomWire
import Synchronization

/// Posts channel events to the business servers' webhook URLs: JSON bodies
/// (``ChannelEventJSON``), signed (``WebhookSignature``), retried with backoff, in sequence order
/// per channel and URL.
///
/// Delivery is at least once: an event whose answer was lost is posted again, so receivers
/// de-duplicate on the notice id. Each URL has its own queue and task; a failing or slow URL
/// never delays another. On one URL, channels proceed independently (up to
/// ``WebhookSettings/maxConcurrentPosts`` posts at a time), while each channel's events go one
/// after the other: event n+1 is posted only once event n was delivered or given up.
///
/// Delivery runs in Swift concurrency tasks with its own HTTP client; ``enqueue(_:)`` may be
/// called from any thread, a ZeroMQ loop included. Call ``shutdown(grace:)`` before releasing
/// the dispatcher.
public final class WebhookDispatcher: Sendable {
    private let endpoints: [WebhookEndpoint]
    private let tasks: [Task<Void, Never>]
    private let client: HTTPClient
    private let logger: Logger
    private let shutDown = Mutex(false)

    /// Starts a delivery task per URL of `settings`.
    ///
    /// Settings changed after their validation are clamped to sane values (at least one attempt,
    /// one queued event, one post at a time).
    public init(settings: WebhookSettings, logger: Logger) {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow  // post only where configured
        configuration.timeout = .init(connect: .nanoseconds(WebhookEndpoint.nanoseconds(settings.requestTimeout)))
        // A refused connection fails the post at once; retrying is the queue's business.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration,
            backgroundActivityLogger: logger)
        let endpoints = settings.urls.map { WebhookEndpoint(url: $0, settings: settings, client: client, logger: logger) }
        self.client = client
        self.logger = logger
        self.endpoints = endpoints
        self.tasks = endpoints.map { endpoint in Task { await endpoint.run() } }
        if !endpoints.isEmpty {
            logger.debug("webhooks started", metadata: ["urls": "\(settings.urls)"])
        }
    }

    deinit {
        for task in tasks { task.cancel() }
        let wasShutDown = shutDown.withLock { $0 }
        if !wasShutDown { client.shutdown { _ in } }
    }

    /// Queues `event` for every URL. Never blocks; any thread. Events of a channel must be
    /// enqueued in sequence order (they are posted in the order enqueued). After
    /// ``shutdown(grace:)`` began, events are refused (counted as dropped).
    public func enqueue(_ event: RoomChannelEvent) {
        enqueue(WebhookEvent(event))
    }

    /// Queues a prepared event (a call event) for every URL, in order with the others of its
    /// order key. Never blocks; any thread.
    public func enqueue(_ event: WebhookEvent) {
        for endpoint in endpoints { endpoint.enqueue(event) }
    }

    /// Counts per URL and in total.
    public func statistics() async -> WebhookStatistics {
        var perURL: [String: WebhookCounts] = [:]
        for endpoint in endpoints { perURL[endpoint.url] = endpoint.counts }
        return WebhookStatistics(perURL: perURL)
    }

    /// Stops taking events, keeps delivering what is queued for at most `grace` (retries
    /// included), then cancels what is left and shuts the HTTP client down. Events still
    /// queued then are logged and stay counted as queued. Later calls return at once.
    public func shutdown(grace: Duration) async {
        let first = shutDown.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        for endpoint in endpoints { endpoint.close() }
        let tasks = self.tasks
        let flushed = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for task in tasks { await task.value }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: grace)
                return false
            }
            let flushed = await group.next() ?? true
            if !flushed {
                for task in tasks { task.cancel() }
            }
            group.cancelAll()
            return flushed
        }
        if !flushed {
            for endpoint in endpoints {
                let queued = endpoint.counts.queued
                if queued > 0 {
                    logger.warning(
                        "webhook events left undelivered at shutdown",
                        metadata: ["webhook": "\(endpoint.url)", "queued": "\(queued)"])
                }
            }
        }
        do {
            try await client.shutdown()
        } catch {
            logger.debug("webhook HTTP client shutdown failed", metadata: ["error": "\(error)"])
        }
    }
}
