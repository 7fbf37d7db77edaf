import ShowroomWire
@testable import Webhooks
import XCTest

/// The per-URL queue as a pure state machine, with a fake clock: order per channel, retries,
/// giving up, the concurrency limit and the queue limit.
final class WebhookQueueTests: XCTestCase {
    private let start = ContinuousClock.now

    private func queue(
        queueLimit: Int = 100, maxAttempts: Int = 5, maxConcurrentPosts: Int = 8
    ) throws -> WebhookQueue {
        let settings = try WebhookSettings(
            urls: [], secret: "", initialBackoff: .milliseconds(100), maxBackoff: .seconds(1),
            maxAttempts: maxAttempts, queueLimit: queueLimit, maxConcurrentPosts: maxConcurrentPosts)
        return WebhookQueue(policy: WebhookQueue.Policy(settings))
    }

    private func notices(_ posts: [WebhookQueue.Post]) -> [String] {
        posts.map(\.event.noticeID)
    }

    func testAChannelsNextEventWaitsUntilTheOneBeforeIsDelivered() throws {
        var queue = try queue()
        for sequence in UInt64(1)...3 { XCTAssertNil(queue.enqueue(channelEvent(channel: "a", sequence: sequence))) }
        XCTAssertNil(queue.enqueue(channelEvent(channel: "b", sequence: 1)))

        XCTAssertEqual(notices(queue.takePosts(now: start)), ["a-1", "b-1"])
        XCTAssertEqual(notices(queue.takePosts(now: start)), [], "a-2 must wait for a-1")
        queue.delivered(channel: "a")
        XCTAssertEqual(notices(queue.takePosts(now: start)), ["a-2"])
        queue.delivered(channel: "a")
        queue.delivered(channel: "b")
        XCTAssertEqual(notices(queue.takePosts(now: start)), ["a-3"])
        queue.delivered(channel: "a")
        XCTAssertTrue(queue.isIdle)
        XCTAssertEqual(queue.counts.delivered, 4)
        XCTAssertEqual(queue.counts.queued, 0)
    }

    func testAFailedPostIsRetriedAfterItsBackoffAndKeepsItsChannelWaiting() throws {
        var queue = try queue()
        _ = queue.enqueue(channelEvent(channel: "a", sequence: 1))
        _ = queue.enqueue(channelEvent(channel: "a", sequence: 2))
        XCTAssertEqual(notices(queue.takePosts(now: start)), ["a-1"])

        XCTAssertEqual(
            queue.failed(channel: "a", now: start, jitter: 0), .retry(after: .milliseconds(100), failedAttempts: 1))
        XCTAssertEqual(queue.nextRetryAt, start + .milliseconds(100))
        XCTAssertEqual(notices(queue.takePosts(now: start + .milliseconds(99))), [], "not due yet, and a-2 waits")
        let retry = queue.takePosts(now: start + .milliseconds(100))
        XCTAssertEqual(notices(retry), ["a-1"])
        XCTAssertEqual(retry.first?.attempt, 2)
        XCTAssertNil(queue.nextRetryAt)

        queue.delivered(channel: "a")
        XCTAssertEqual(notices(queue.takePosts(now: start + .milliseconds(100))), ["a-2"])
        XCTAssertEqual(queue.counts.retried, 1)
        XCTAssertEqual(queue.counts.delivered, 1)
    }

    func testAnEventIsGivenUpAfterMaxAttemptsAndTheNextOneGoes() throws {
        var queue = try queue(maxAttempts: 3)
        _ = queue.enqueue(channelEvent(channel: "a", sequence: 1))
        _ = queue.enqueue(channelEvent(channel: "a", sequence: 2))
        var now = start
        XCTAssertEqual(notices(queue.takePosts(now: now)), ["a-1"])
        for failed in 1...2 {
            guard case .retry(let delay, failed)? = queue.failed(channel: "a", now: now, jitter: 0) else {
                return XCTFail("attempt \(failed) should be retried")
            }
            now = now + delay
            XCTAssertEqual(notices(queue.takePosts(now: now)), ["a-1"])
        }
        XCTAssertEqual(
            queue.failed(channel: "a", now: now, jitter: 0),
            .givenUp(WebhookEvent(channelEvent(channel: "a", sequence: 1)), attempts: 3))
        XCTAssertEqual(notices(queue.takePosts(now: now)), ["a-2"])
        XCTAssertEqual(queue.counts.givenUp, 1)
        XCTAssertEqual(queue.counts.retried, 2)
    }

    func testAtMostMaxConcurrentPostsAreUnderWayAndARetryingChannelHoldsNoPlace() throws {
        var queue = try queue(maxConcurrentPosts: 2)
        for channel in ["a", "b", "c"] { _ = queue.enqueue(channelEvent(channel: channel, sequence: 1)) }
        XCTAssertEqual(notices(queue.takePosts(now: start)), ["a-1", "b-1"])
        XCTAssertEqual(queue.posting, 2)

        _ = queue.failed(channel: "a", now: start, jitter: 0)
        XCTAssertEqual(notices(queue.takePosts(now: start)), ["c-1"], "a waits for its retry without a place")
        queue.delivered(channel: "b")
        // a's retry is due: it goes before anything that became ready later.
        _ = queue.enqueue(channelEvent(channel: "d", sequence: 1))
        XCTAssertEqual(notices(queue.takePosts(now: start + .seconds(1))), ["a-1"])
        queue.delivered(channel: "c")
        XCTAssertEqual(notices(queue.takePosts(now: start + .seconds(1))), ["d-1"])
    }

    func testBeyondTheQueueLimitTheOldestWaitingEventOfAnyChannelIsDropped() throws {
        var queue = try queue(queueLimit: 3, maxConcurrentPosts: 1)
        _ = queue.enqueue(channelEvent(channel: "a", sequence: 1))
        XCTAssertEqual(notices(queue.takePosts(now: start)), ["a-1"], "being posted: not subject to the limit")
        XCTAssertNil(queue.enqueue(channelEvent(channel: "b", sequence: 1)))
        XCTAssertNil(queue.enqueue(channelEvent(channel: "a", sequence: 2)))
        XCTAssertNil(queue.enqueue(channelEvent(channel: "b", sequence: 2)))
        XCTAssertEqual(queue.enqueue(channelEvent(channel: "a", sequence: 3))?.noticeID, "b-1")
        XCTAssertEqual(queue.enqueue(channelEvent(channel: "b", sequence: 3))?.noticeID, "a-2")
        XCTAssertEqual(queue.counts.dropped, 2)
        XCTAssertEqual(queue.counts.queued, 4)

        queue.delivered(channel: "a")
        var delivered = ["a-1"]
        var now = start
        while !queue.isIdle {
            let posts = queue.takePosts(now: now)
            XCTAssertFalse(posts.isEmpty)
            for post in posts {
                delivered.append(post.event.noticeID)
                queue.delivered(channel: post.channel)
            }
            now = now + .milliseconds(1)
        }
        XCTAssertEqual(delivered, ["a-1", "b-2", "a-3", "b-3"])
    }

    func testManyDropsBehindOneStuckChannelKeepTheQueueBounded() throws {
        var queue = try queue(queueLimit: 10, maxConcurrentPosts: 1)
        _ = queue.enqueue(channelEvent(channel: "stuck", sequence: 1))
        _ = queue.takePosts(now: start)
        var dropped: [String] = []
        for sequence in 1...1_000 {
            if let event = queue.enqueue(channelEvent(channel: "busy", sequence: UInt64(sequence))) {
                dropped.append(event.noticeID)
            }
        }
        XCTAssertEqual(dropped, (1...990).map { "busy-\($0)" })
        XCTAssertEqual(queue.counts.queued, 11)
        queue.delivered(channel: "stuck")
        XCTAssertEqual(notices(queue.takePosts(now: start)), ["busy-991"])
    }

    func testBackoffDoublesUpToTheMaximumWithinTwentyPercentJitter() {
        let backoff = WebhookBackoff(initial: .milliseconds(200), maximum: .seconds(10))
        let plain = (1...9).map { backoff.delay(afterAttempt: $0, jitter: 0) }
        XCTAssertEqual(
            plain,
            [200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000, 10_000].map { Duration.milliseconds($0) })
        XCTAssertEqual(backoff.delay(afterAttempt: 1, jitter: 1), .milliseconds(240))
        XCTAssertEqual(backoff.delay(afterAttempt: 1, jitter: -1), .milliseconds(160))
        XCTAssertEqual(backoff.delay(afterAttempt: 1_000, jitter: 5), .seconds(12), "jitter is clamped to ±20%")
    }
}

extension WebhookQueue {
    /// Queues a channel event as the dispatcher does.
    mutating func enqueue(_ event: RoomChannelEvent) -> WebhookEvent? { enqueue(WebhookEvent(event)) }
}
