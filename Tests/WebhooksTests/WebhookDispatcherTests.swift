import Logging
import ShowroomTesting
import ShowroomWire
import Webhooks
import XCTest

/// The dispatcher against real HTTP receivers on 127.0.0.1: signing, order per channel,
/// outages, a receiver that comes up late, a failing URL beside a working one, the queue limit
/// and shutdown.
final class WebhookDispatcherTests: XCTestCase {
    private var receivers: [TestReceiver] = []
    private var dispatchers: [WebhookDispatcher] = []

    override func tearDown() async throws {
        for dispatcher in dispatchers { await dispatcher.shutdown(grace: .zero) }
        for receiver in receivers { await receiver.stop() }
        dispatchers = []
        receivers = []
    }

    private var logger: Logger {
        var logger = Logger(label: "webhooks-test")
        logger.logLevel = .error
        return logger
    }

    private func startReceiver(port: UInt16 = 0, gated: Bool = false, answer: @escaping TestReceiver.Answer = { _ in 200 })
        async throws -> TestReceiver
    {
        let receiver = try await TestReceiver.start(port: port, gated: gated, answer: answer)
        receivers.append(receiver)
        return receiver
    }

    /// Fast retries so outages in tests last milliseconds.
    private func makeDispatcher(
        urls: [String], secret: String = "s3cret", maxAttempts: Int = 1_000, queueLimit: Int = 10_000
    ) throws -> WebhookDispatcher {
        let settings = try WebhookSettings(
            urls: urls, secret: secret, requestTimeout: .seconds(2), initialBackoff: .milliseconds(5),
            maxBackoff: .milliseconds(50), maxAttempts: maxAttempts, queueLimit: queueLimit)
        let dispatcher = WebhookDispatcher(settings: settings, logger: logger)
        dispatchers.append(dispatcher)
        return dispatcher
    }

    /// Enqueues `count` events on each channel, interleaved across channels.
    private func enqueue(_ dispatcher: WebhookDispatcher, channels: [String], count: Int) {
        for sequence in 1...count {
            for channel in channels { dispatcher.enqueue(channelEvent(channel: channel, sequence: UInt64(sequence))) }
        }
    }

    /// Sequences of the accepted posts, per channel, in the order accepted.
    private func acceptedSequences(_ receiver: TestReceiver) -> [String: [UInt64]] {
        var sequences: [String: [UInt64]] = [:]
        for post in receiver.accepted {
            guard let event = post.event else { continue }
            sequences[event.channel, default: []].append(event.sequence)
        }
        return sequences
    }

    func testPostsAreSignedJSONWithTheNoticeIdAndVerifyOnlyWithTheSecret() async throws {
        let signed = try await startReceiver()
        let unsigned = try await startReceiver()
        let dispatcher = try makeDispatcher(urls: [signed.url])
        let unsignedDispatcher = try makeDispatcher(urls: [unsigned.url], secret: "")
        let event = channelEvent(channel: "room-1", sequence: 1)
        dispatcher.enqueue(event)
        unsignedDispatcher.enqueue(event)
        try await eventually("both receivers got the event") { signed.posts.count == 1 && unsigned.posts.count == 1 }

        let post = try XCTUnwrap(signed.posts.first)
        XCTAssertEqual(post.body, ChannelEventJSON.encode(event))
        XCTAssertEqual(post.event, event)
        XCTAssertEqual(post.contentType, "application/json")
        XCTAssertEqual(post.noticeID, "room-1-1")
        let signature = try XCTUnwrap(post.signature)
        XCTAssertTrue(WebhookSignature.verify(body: post.body, secret: "s3cret", signature: signature))
        XCTAssertFalse(WebhookSignature.verify(body: post.body, secret: "another", signature: signature))
        XCTAssertNil(unsigned.posts.first?.signature, "no secret: no signature header")
        XCTAssertEqual(unsigned.posts.first?.noticeID, "room-1-1")
    }

    func testThreeChannelsOfTwentyEventsArriveInOrderPerChannelEachOnce() async throws {
        let receiver = try await startReceiver()
        let dispatcher = try makeDispatcher(urls: [receiver.url])
        let channels = ["room-1", "room-2", "room-3"]
        enqueue(dispatcher, channels: channels, count: 20)
        try await eventually("60 events delivered") { await dispatcher.statistics().total.delivered == 60 }

        XCTAssertEqual(receiver.posts.count, 60, "each event once")
        let sequences = acceptedSequences(receiver)
        for channel in channels { XCTAssertEqual(sequences[channel], Array(1...20), channel) }
        let statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.total.delivered, 60)
        XCTAssertEqual(statistics.total.retried, 0)
        XCTAssertEqual(statistics.total.queued, 0)
        XCTAssertEqual(statistics.perURL[receiver.url]?.delivered, 60)
    }

    func testAnOutageOf503sIsRetriedAndEveryEventStillArrivesInOrder() async throws {
        let outage = 15
        let receiver = try await startReceiver { number in number <= outage ? 503 : 200 }
        let dispatcher = try makeDispatcher(urls: [receiver.url])
        let channels = ["room-1", "room-2", "room-3"]
        enqueue(dispatcher, channels: channels, count: 10)
        try await eventually("30 events delivered") { await dispatcher.statistics().total.delivered == 30 }

        let sequences = acceptedSequences(receiver)
        for channel in channels { XCTAssertEqual(sequences[channel], Array(1...10), channel) }
        // No event was posted before the one before it in its channel was accepted.
        var acceptedUpTo: [String: UInt64] = [:]
        for post in receiver.posts {
            let event = try XCTUnwrap(post.event)
            let last = acceptedUpTo[event.channel, default: 0]
            XCTAssertEqual(event.sequence, last + 1, "\(event.noticeID) posted while \(last) was the last accepted")
            if post.status == 200 { acceptedUpTo[event.channel] = event.sequence }
        }
        XCTAssertEqual(receiver.posts.count, 30 + outage)
        let statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.total.retried, outage)
        XCTAssertEqual(statistics.total.delivered, 30)
        XCTAssertEqual(statistics.total.givenUp, 0)
    }

    func testAReceiverThatIsDownAtFirstGetsEverythingOnceItListens() async throws {
        // Find a free port, then leave it closed.
        let probe = try await TestReceiver.start()
        let port = probe.port
        await probe.stop()
        let url = "http://127.0.0.1:\(port)/events"
        let dispatcher = try makeDispatcher(urls: [url])
        enqueue(dispatcher, channels: ["room-1"], count: 5)
        try await eventually("connection attempts failed and were retried") {
            await dispatcher.statistics().total.retried >= 3
        }
        let delivered = await dispatcher.statistics().total.delivered
        XCTAssertEqual(delivered, 0)

        let receiver = try await startReceiver(port: port)
        try await eventually("the late receiver got all 5 events") { await dispatcher.statistics().total.delivered == 5 }
        XCTAssertEqual(acceptedSequences(receiver)["room-1"], [1, 2, 3, 4, 5])
    }

    func testAURLThatAlwaysFailsDoesNotDelayAnotherURL() async throws {
        let failing = try await startReceiver { _ in 500 }
        let working = try await startReceiver()
        let dispatcher = try makeDispatcher(urls: [failing.url, working.url])
        let channels = ["room-1", "room-2"]
        enqueue(dispatcher, channels: channels, count: 10)
        try await eventually("the working URL got everything") {
            await dispatcher.statistics().perURL[working.url]?.delivered == 20
        }

        let sequences = acceptedSequences(working)
        for channel in channels { XCTAssertEqual(sequences[channel], Array(1...10), channel) }
        let statistics = await dispatcher.statistics()
        let failingCounts = try XCTUnwrap(statistics.perURL[failing.url])
        XCTAssertEqual(failingCounts.delivered, 0)
        XCTAssertEqual(failingCounts.queued, 20, "the failing URL still holds every event")
        XCTAssertGreaterThan(failingCounts.retried, 0)
        XCTAssertEqual(statistics.perURL[working.url]?.delivered, 20)
        // Still retrying the first event of each channel only.
        XCTAssertEqual(Set(failing.posts.compactMap { $0.event?.sequence }), [1])
    }

    func testAURLThatDoesNotAnswerDoesNotDelayAnotherURL() async throws {
        let hanging = try await startReceiver(gated: true)
        let working = try await startReceiver()
        let dispatcher = try makeDispatcher(urls: [hanging.url, working.url])
        enqueue(dispatcher, channels: ["room-1", "room-2"], count: 10)
        try await eventually("the working URL got everything") {
            await dispatcher.statistics().perURL[working.url]?.delivered == 20
        }
        try await eventually("each channel's first post hangs") { hanging.waitingAtGate == 2 }
        let statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.perURL[hanging.url]?.queued, 20)
    }

    func testBeyondTheQueueLimitTheOldestQueuedEventsAreDropped() async throws {
        let receiver = try await startReceiver(gated: true)
        let dispatcher = try makeDispatcher(urls: [receiver.url], queueLimit: 3)
        dispatcher.enqueue(channelEvent(channel: "room-1", sequence: 1))
        try await eventually("the first event is being posted") { receiver.waitingAtGate == 1 }
        for sequence in 2...10 { dispatcher.enqueue(channelEvent(channel: "room-1", sequence: UInt64(sequence))) }
        var statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.total.dropped, 6)
        XCTAssertEqual(statistics.total.queued, 4)

        receiver.openGate()
        try await eventually("the kept events were delivered") { await dispatcher.statistics().total.delivered == 4 }
        XCTAssertEqual(acceptedSequences(receiver)["room-1"], [1, 8, 9, 10])
        statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.total.queued, 0)
        XCTAssertEqual(statistics.total.dropped, 6)
    }

    func testAnEventIsGivenUpAfterMaxAttemptsAndTheChannelMovesOn() async throws {
        let receiver = try await startReceiver { number in number <= 3 ? 500 : 200 }
        let dispatcher = try makeDispatcher(urls: [receiver.url], maxAttempts: 3)
        enqueue(dispatcher, channels: ["room-1"], count: 2)
        try await eventually("the second event was delivered") { await dispatcher.statistics().total.delivered == 1 }
        XCTAssertEqual(receiver.posts.map { $0.event?.sequence }, [1, 1, 1, 2])
        let statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.total.givenUp, 1)
        XCTAssertEqual(statistics.total.retried, 2)
        XCTAssertEqual(statistics.total.delivered, 1)
    }

    func testShutdownFlushesWhatIsQueuedAndRefusesLaterEvents() async throws {
        let receiver = try await startReceiver()
        let dispatcher = try makeDispatcher(urls: [receiver.url])
        enqueue(dispatcher, channels: ["room-1", "room-2"], count: 10)
        await dispatcher.shutdown(grace: .seconds(10))
        XCTAssertEqual(receiver.accepted.count, 20, "shutdown returns once the queue is flushed")
        dispatcher.enqueue(channelEvent(channel: "room-1", sequence: 11))
        let statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.total.delivered, 20)
        XCTAssertEqual(statistics.total.dropped, 1, "refused after shutdown")
        XCTAssertEqual(statistics.total.queued, 0)
    }

    func testShutdownGivesUpOnAFailingURLAfterTheGracePeriod() async throws {
        let failing = try await startReceiver { _ in 503 }
        let dispatcher = try makeDispatcher(urls: [failing.url])
        enqueue(dispatcher, channels: ["room-1"], count: 3)
        try await eventually("the receiver refused a post") { failing.posts.count >= 1 }
        let started = ContinuousClock.now
        await dispatcher.shutdown(grace: .milliseconds(200))
        let took = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(took, .milliseconds(200))
        XCTAssertLessThan(took, .seconds(3), "shutdown does not wait for retries beyond its grace")
        let statistics = await dispatcher.statistics()
        XCTAssertEqual(statistics.total.delivered, 0)
        XCTAssertEqual(statistics.total.queued, 3)
    }
}
