import Foundation
import Synchronization
import XCTest
@testable import ZeroMQ

/// The loop's behaviour, with the way it sleeps on this system (epoll on Linux).
/// ``EventLoopOverPollTests`` runs every test again with poll(2), the other systems' way.
class EventLoopTests: XCTestCase {
    private var context: Context!
    private var loop: EventLoop!

    class var waitMethod: DescriptorWaitMethod { .best }

    override func setUpWithError() throws {
        context = try Context()
        loop = try EventLoop(name: "test-loop", context: context, waitMethod: Self.waitMethod)
        loop.start()
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

    /// Hundreds of sockets on one loop, each handler taking a single message per call: every
    /// message arrives, in order per socket, because a socket that stays ready gets another turn.
    func testHundredsOfSocketsEachTakingOneMessagePerCallReceiveEverything() throws {
        let loop = self.loop!
        let sockets = 300
        let perSocket = 5
        let router = try Socket(.router, context: context)
        try router.set(.routerMandatory, 1)
        let endpoint = try router.bind("tcp://127.0.0.1:*")
        let received = Counter()
        let outOfOrder = Counter()
        try loop.submitAndWait {
            for index in 0..<sockets {
                let dealer = try Socket(.dealer, context: loop.context)
                try dealer.setRoutingID(Array("dealer-\(index)".utf8))
                try dealer.connect(endpoint)
                _ = try dealer.send(Array("hello".utf8))
                var expected: UInt8 = 0
                let frames = Multipart()
                loop.register(dealer) { socket, _ in
                    guard (try? socket.receive(into: frames)) == true else { return }
                    if frames.bytes(of: 0) != [expected] { outOfOrder.add() }
                    expected &+= 1
                    received.add()
                }
            }
        }
        var peers: [[UInt8]] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while peers.count < sockets, ContinuousClock.now < deadline {
            if try router.poll(.readable, timeout: .milliseconds(100)).contains(.readable),
               let frames = try router.receiveFrames() {
                peers.append(frames[0])
            }
        }
        XCTAssertEqual(peers.count, sockets, "every dealer said hello")
        // Several messages per socket in one go, sockets in shuffled order.
        for round in 0..<perSocket {
            for peer in peers.shuffled() {
                XCTAssertEqual(try router.send(to: peer, Multipart([[UInt8(round)]])), .sent)
            }
        }
        XCTAssertEqual(received.wait(atLeast: sockets * perSocket, until: Date() + 10), sockets * perSocket)
        XCTAssertEqual(outOfOrder.current, 0)
        router.close()
    }

    /// A socket used outside its handler (here a blocking poll in posted work) may have its
    /// notification consumed by that use; the loop must still call the handler for the message.
    func testSocketUsedOutsideItsHandlerStillWakesItsHandler() throws {
        let loop = self.loop!
        let received = Counter()
        let endpoint = "inproc://used-outside-handler"
        let socket = try loop.submitAndWait { () throws -> LoopBound<Socket> in
            let pair = try Socket(.pair, context: loop.context)
            try pair.bind(endpoint)
            loop.register(pair) { socket, _ in
                while (try? socket.receiveFrames()) != nil { received.add() }
            }
            return LoopBound(pair, loop: loop)
        }
        let peer = try Socket(.pair, context: context)
        try peer.connect(endpoint)
        // A first message settles the connection, so nothing else is pending on the socket.
        XCTAssertEqual(try peer.send(Array("first".utf8)), .sent)
        XCTAssertEqual(received.wait(atLeast: 1, until: Date() + 5), 1)
        // Hold the loop, send, then let posted work see the message with a poll of its own.
        let holding = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let sawIt = Counter()
        loop.execute {
            holding.signal()
            gate.wait()
            if (try? socket.value.poll(.readable, timeout: .seconds(5)))?.contains(.readable) == true { sawIt.add() }
        }
        waitFor(holding, seconds: 5, "the posted work to hold the loop")
        XCTAssertEqual(try peer.send(Array("hi".utf8)), .sent)
        gate.signal()
        XCTAssertEqual(received.wait(atLeast: 2, until: Date() + 5), 2, "the handler got the message")
        XCTAssertEqual(sawIt.current, 1, "the posted work saw the message first")
        peer.close()
    }

    /// An unregistered socket's handler is not called; a socket closed while registered is
    /// forgotten, and a socket registered after it (perhaps with its descriptor number) works.
    func testUnregisteredAndClosedSocketsAreForgotten() throws {
        let loop = self.loop!
        let calls = Mutex<[String]>([])
        func pairOnLoop(_ name: String) throws -> LoopBound<Socket> {
            try loop.submitAndWait {
                let pair = try Socket(.pair, context: loop.context)
                try pair.bind("inproc://forgotten-\(name)")
                loop.register(pair) { socket, _ in
                    while (try? socket.receiveFrames()) != nil { calls.withLock { $0.append(name) } }
                }
                return LoopBound(pair, loop: loop)
            }
        }
        func peer(_ name: String) throws -> Socket {
            let peer = try Socket(.pair, context: context)
            try peer.connect("inproc://forgotten-\(name)")
            return peer
        }
        let unregistered = try pairOnLoop("unregistered")
        let closed = try pairOnLoop("closed")
        try loop.submitAndWait {
            loop.unregister(unregistered.value)
            closed.value.close()
        }
        let unregisteredPeer = try peer("unregistered")
        XCTAssertEqual(try unregisteredPeer.send(Array("x".utf8)), .sent)
        _ = try pairOnLoop("later")
        let laterPeer = try peer("later")
        XCTAssertEqual(try laterPeer.send(Array("y".utf8)), .sent)
        let deadline = Date() + 5
        while calls.withLock({ !$0.contains("later") }), Date() < deadline { usleep(1000) }
        XCTAssertEqual(calls.withLock { $0 }, ["later"])
        // The unregistered socket belongs to the caller again: its message waits there.
        let frames = try loop.submitAndWait { try unregistered.value.receiveFrames() }
        XCTAssertEqual(frames, [Array("x".utf8)])
        unregisteredPeer.close()
        laterPeer.close()
        try loop.submitAndWait { unregistered.value.close() }
    }

    /// Watching for writability calls the handler when the socket can send, and stops when the
    /// events go back to readable only.
    func testUpdatedEventsReportWritability() throws {
        let loop = self.loop!
        let writable = Counter()
        try loop.submitAndWait {
            let pair = try Socket(.pair, context: loop.context)
            try pair.bind("inproc://writability")
            loop.register(pair) { socket, events in
                if events.contains(.writable) {
                    writable.add()
                    loop.updateEvents(of: socket, to: .readable)
                }
            }
            loop.updateEvents(of: pair, to: [.readable, .writable])
        }
        let peer = try Socket(.pair, context: context)
        try peer.connect("inproc://writability")
        XCTAssertEqual(writable.wait(atLeast: 1, until: Date() + 5), 1)
        // A later timer proves the handler was not called again once writability was dropped.
        let after = DispatchSemaphore(value: 0)
        loop.execute { loop.scheduleTimer(after: .milliseconds(30)) { after.signal() } }
        waitFor(after, seconds: 5, "the check timer")
        XCTAssertEqual(writable.current, 1)
        peer.close()
    }
}

/// Every ``EventLoopTests`` test again, with the loop sleeping in poll(2).
final class EventLoopOverPollTests: EventLoopTests {
    override class var waitMethod: DescriptorWaitMethod { .poll }

    // XCTest on Linux runs only the test methods a class declares itself: name them again.
    override func testHundredsOfSocketsEachTakingOneMessagePerCallReceiveEverything() throws { try super.testHundredsOfSocketsEachTakingOneMessagePerCallReceiveEverything() }
    override func testRegisteredSocketHandlerReceivesOnTheLoop() throws { try super.testRegisteredSocketHandlerReceivesOnTheLoop() }
    override func testRepeatingTimerRepeatsUntilCancelled() throws { try super.testRepeatingTimerRepeatsUntilCancelled() }
    override func testShutdownWithPendingMessagesReturnsWithinASecond() throws { try super.testShutdownWithPendingMessagesReturnsWithinASecond() }
    override func testSocketUsedOutsideItsHandlerStillWakesItsHandler() throws { try super.testSocketUsedOutsideItsHandlerStillWakesItsHandler() }
    override func testTimersFireInDeadlineOrderAndCancelledOnesDoNot() throws { try super.testTimersFireInDeadlineOrderAndCancelledOnesDoNot() }
    override func testUnregisteredAndClosedSocketsAreForgotten() throws { try super.testUnregisteredAndClosedSocketsAreForgotten() }
    override func testUpdatedEventsReportWritability() throws { try super.testUpdatedEventsReportWritability() }
    override func testWorkFromAsyncCodeRunsOnTheLoopAndReturnsResults() async throws { try await super.testWorkFromAsyncCodeRunsOnTheLoopAndReturnsResults() }
    override func testWorkFromOtherThreadsRunsOnTheLoopAndReturnsResults() throws { try super.testWorkFromOtherThreadsRunsOnTheLoopAndReturnsResults() }
}
