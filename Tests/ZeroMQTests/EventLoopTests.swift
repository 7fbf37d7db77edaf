import Foundation
import Synchronization
import XCTest
@testable import ZeroMQ

final class EventLoopTests: XCTestCase {
    private var context: Context!
    private var loop: EventLoop!

    override func setUpWithError() throws {
        context = try Context()
        loop = try EventLoop.start(name: "test-loop", context: context)
    }

    override func tearDown() {
        loop?.shutdown()
        loop = nil
        context = nil
    }

    func testTimersFireInDeadlineOrderAndCancelledOnesDoNot() throws {
        let fired = Mutex<[String]>([])
        let allFired = DispatchSemaphore(value: 0)
        let loop = self.loop!
        try loop.submitAndWait {
            let record: @Sendable (String) -> Void = { name in
                let count = fired.withLock { $0.append(name); return $0.count }
                if count == 5 { allFired.signal() }
            }
            loop.scheduleTimer(after: .milliseconds(40)) { record("40ms") }
            loop.scheduleTimer(after: .milliseconds(10)) { record("10ms-a") }
            let cancelled = loop.scheduleTimer(after: .milliseconds(15)) { record("cancelled") }
            loop.scheduleTimer(after: .milliseconds(20)) { record("20ms") }
            loop.scheduleTimer(after: .zero) { record("0ms") }
            loop.scheduleTimer(after: .milliseconds(10)) { record("10ms-b") }
            loop.cancelTimer(cancelled)
        }
        waitFor(allFired, seconds: 5, "five timers")
        // A later timer past the others proves the cancelled one had its chance and stayed silent.
        let late = DispatchSemaphore(value: 0)
        loop.execute { loop.scheduleTimer(after: .milliseconds(30)) { late.signal() } }
        waitFor(late, seconds: 5, "the last timer")
        XCTAssertEqual(fired.withLock { $0 }, ["0ms", "10ms-a", "10ms-b", "20ms", "40ms"])
    }

    func testRepeatingTimerRepeatsUntilCancelled() throws {
        let ticks = Counter()
        let loop = self.loop!
        let id = try loop.submitAndWait {
            loop.scheduleRepeating(every: .milliseconds(5)) { ticks.add() }
        }
        XCTAssertGreaterThanOrEqual(ticks.wait(atLeast: 3, until: Date() + 5), 3)
        let atCancel = try loop.submitAndWait {
            loop.cancelTimer(id)
            return ticks.current
        }
        // Once a later one-shot timer has fired, a live repeating timer would have ticked again.
        let after = DispatchSemaphore(value: 0)
        loop.execute { loop.scheduleTimer(after: .milliseconds(30)) { after.signal() } }
        waitFor(after, seconds: 5, "the check timer")
        XCTAssertEqual(ticks.current, atCancel)
    }

    func testWorkFromOtherThreadsRunsOnTheLoopAndReturnsResults() throws {
        let loop = self.loop!
        let total = Counter()
        let offLoop = Counter()
        let threads = (0..<4).map { t in
            onNewThread("poster-\(t)") {
                for i in 0..<100 {
                    do {
                        let (value, onLoop) = try loop.submitAndWait { (i * 2, loop.inEventLoop) }
                        if value == i * 2 { total.add() }
                        if !onLoop { offLoop.add() }
                    } catch {
                        XCTFail("submitAndWait: \(error)")
                    }
                }
            }
        }
        for thread in threads { waitFor(thread, seconds: 10, "poster thread") }
        XCTAssertEqual(total.current, 400)
        XCTAssertEqual(offLoop.current, 0, "work ran off the loop thread")
        XCTAssertFalse(loop.inEventLoop)
    }

    func testWorkFromAsyncCodeRunsOnTheLoopAndReturnsResults() async throws {
        let loop = self.loop!
        let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for i in 0..<50 {
                group.addTask { try await loop.submit { (i * i, loop.inEventLoop) } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(results.map(\.0).sorted(), (0..<50).map { $0 * $0 })
        XCTAssertTrue(results.allSatisfy(\.1))
        do {
            _ = try await loop.submit { () throws -> Int in throw ZeroMQError(errno: 0, operation: "test", message: "boom") }
            XCTFail("the work's error must reach the caller")
        } catch let error as ZeroMQError {
            XCTAssertEqual(error.message, "boom")
        }
    }

    func testRegisteredSocketHandlerReceivesOnTheLoop() throws {
        let loop = self.loop!
        let endpoint = try loop.submitAndWait {
            let router = try Socket(.router, context: loop.context)
            let endpoint = try router.bind("tcp://127.0.0.1:*")
            let frames = Multipart()
            loop.register(router) { socket, events in
                precondition(events.contains(.readable))
                // Echo every message back to its sender.
                while (try? socket.receive(into: frames)) == true {
                    _ = try? socket.send(to: frames.bytes(of: 0), frames, from: 1)
                }
            }
            return endpoint
        }
        let client = try Socket(.dealer, context: context)
        try client.connect(endpoint)
        for i in 0..<10 {
            XCTAssertEqual(try client.send(frames: [Array("ping-\(i)".utf8), [UInt8(i)]]), .sent)
        }
        for i in 0..<10 {
            XCTAssertEqual(try XCTUnwrap(try receive(client)), [Array("ping-\(i)".utf8), [UInt8(i)]])
        }
    }

    /// Shutdown returns promptly even with messages queued in both directions and work waiting;
    /// the waiting work fails instead of hanging its callers.
    func testShutdownWithPendingMessagesReturnsWithinASecond() throws {
        let loop = self.loop!
        let endpoint = try loop.submitAndWait {
            let router = try Socket(.router, context: loop.context)
            try router.set(.routerMandatory, 1)
            let endpoint = try router.bind("tcp://127.0.0.1:*")
            var peers: [[UInt8]] = []
            let frames = Multipart()
            let payload = Multipart([[UInt8](repeating: 1, count: 4000)])
            loop.register(router) { socket, _ in
                while (try? socket.receive(into: frames)) == true { peers.append(frames.bytes(of: 0)) }
                // Flood every peer that said hello; they never read, so queues stay full.
                for peer in peers {
                    for _ in 0..<2000 where (try? socket.send(to: peer, payload)) == .sent {}
                }
            }
            return endpoint
        }
        // A peer that sends a lot and reads nothing.
        let peer = try Socket(.dealer, context: context)
        try peer.connect(endpoint)
        for _ in 0..<500 { _ = try peer.send([UInt8](repeating: 2, count: 4000)) }
        XCTAssertEqual(try peer.poll(.readable, timeout: .seconds(5)), .readable, "the flood arrives")

        // Work that blocks the loop for a moment, and more queued behind it.
        let gate = DispatchSemaphore(value: 0)
        loop.execute { gate.wait() }
        let queued = Counter()
        let failed = Counter()
        let posters = (0..<3).map { t in
            onNewThread("late-poster-\(t)") {
                do {
                    _ = try loop.submitAndWait { queued.add() }
                } catch EventLoopError.shutDown {
                    failed.add()
                } catch {
                    XCTFail("unexpected \(error)")
                }
            }
        }
        let shutDown = onNewThread("shutdown") { loop.shutdown() }
        gate.signal()
        waitFor(shutDown, seconds: 1, "shutdown with pending messages")
        for poster in posters { waitFor(poster, seconds: 1, "posted work to finish or fail") }
        XCTAssertEqual(queued.current + failed.current, 3, "every caller got an answer")

        do {
            _ = try loop.submitAndWait { 1 }
            XCTFail("work posted after shutdown must fail")
        } catch EventLoopError.shutDown {}
        peer.close()
    }
}
