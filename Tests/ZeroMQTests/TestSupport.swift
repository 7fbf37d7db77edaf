import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import ZeroMQ
import CZeroMQ

/// Runs `body` on a new thread and returns a semaphore signalled when it ends.
func onNewThread(_ name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.name = name
    thread.start()
    return done
}

/// Waits for `semaphore` up to `seconds`; fails the test (and returns false) if it is not signalled.
@discardableResult
func waitFor(_ semaphore: DispatchSemaphore, seconds: Double, _ what: String,
             file: StaticString = #filePath, line: UInt = #line) -> Bool {
    if semaphore.wait(timeout: .now() + seconds) == .timedOut {
        XCTFail("timed out after \(seconds) s waiting for \(what)", file: file, line: line)
        return false
    }
    return true
}

/// Receives one multipart message, waiting up to `seconds`; nil on timeout.
func receive(_ socket: Socket, within seconds: Double = 5) throws -> [[UInt8]]? {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try socket.poll(.readable, timeout: .milliseconds(50)).contains(.readable) {
            return try socket.receiveFrames()
        }
    }
    return nil
}

/// A count several threads update, with a wait for it to reach a value.
final class Counter: @unchecked Sendable {
    // @unchecked: `value` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var value = 0

    func add(_ n: Int = 1) {
        condition.lock()
        value += n
        condition.broadcast()
        condition.unlock()
    }

    var current: Int {
        condition.lock()
        defer { condition.unlock() }
        return value
    }

    /// Waits until the count is at least `target` or `deadline` passes; returns the count.
    func wait(atLeast target: Int, until deadline: Date) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while value < target && condition.wait(until: deadline) {}
        return value
    }
}

/// Polls `sockets` for readability up to `timeout`; returns the indices that are readable.
func pollReadable(_ sockets: [Socket], timeout: Duration) -> [Int] {
    var items = sockets.map { zmq_pollitem_t(socket: $0.handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0) }
    guard zmq_poll(&items, Int32(items.count), Int(timeout.milliseconds)) > 0 else { return [] }
    return items.indices.filter { items[$0].revents != 0 }
}

/// Routing id of fan-out peer `i`.
func peerID(_ i: Int) -> [UInt8] { Array(String(format: "peer-%03d", i).utf8) }

/// Creates `count` DEALER peers with routing ids ``peerID(_:)`` on the calling thread, connects
/// them to `endpoint` and has each say hello, so the ROUTER learns every routing id.
func connectPeers(_ count: Int, context: Context, endpoint: String,
                  configure: (Socket) throws -> Void = { _ in }) throws -> [Socket] {
    try (0..<count).map { i in
        let peer = try Socket(.dealer, context: context)
        try peer.setRoutingID(peerID(i))
        try configure(peer)
        try peer.connect(endpoint)
        _ = try peer.send(Array("hello".utf8))
        return peer
    }
}

/// Receives hellos on `router` until `count` distinct peers have spoken (bounded wait).
func awaitHellos(_ router: Socket, count: Int, file: StaticString = #filePath, line: UInt = #line) throws {
    var hellos = Set<[UInt8]>()
    while hellos.count < count {
        guard let frames = try receive(router) else {
            XCTFail("only \(hellos.count) of \(count) peers said hello", file: file, line: line)
            return
        }
        hellos.insert(frames[0])
    }
}
