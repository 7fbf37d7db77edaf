import XCTest
@testable import ZeroMQ

/// `SocketMonitor` against real TCP connections on loopback.
final class SocketMonitorTests: XCTestCase {
    /// Events the monitor reports until `deadline`, stopping at the first that matches `wanted`.
    private func waitForEvent(_ wanted: SocketMonitorEvents, on monitor: SocketMonitor, within seconds: Double = 5) throws -> [SocketMonitorEvent] {
        var seen: [SocketMonitorEvent] = []
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            guard try monitor.socket.poll(.readable, timeout: .milliseconds(50)).contains(.readable) else { continue }
            while let event = try monitor.nextEvent() {
                seen.append(event)
                if wanted.contains(event.event) { return seen }
            }
        }
        XCTFail("no event \(wanted.rawValue) within \(seconds) s; saw \(seen)")
        return seen
    }

    func testDealerReportsDisconnectedWhenItsRouterCloses() throws {
        let context = try Context()
        let router = try Socket(.router, context: context)
        let endpoint = try router.bind("tcp://127.0.0.1:*")
        let dealer = try Socket(.dealer, context: context)
        let monitor = try SocketMonitor(watching: dealer, events: [.handshakeSucceeded, .disconnected], context: context)
        try dealer.connect(endpoint)

        let untilUp = try waitForEvent(.handshakeSucceeded, on: monitor)
        XCTAssertEqual(untilUp.last?.event, .handshakeSucceeded)
        XCTAssertFalse(untilUp.contains { $0.event == .disconnected })

        // The peer goes away: its TCP connection closes and the dealer hears of it at once.
        router.close()
        let started = ContinuousClock.now
        let untilDown = try waitForEvent(.disconnected, on: monitor)
        let disconnected = try XCTUnwrap(untilDown.last)
        XCTAssertEqual(disconnected.event, .disconnected)
        XCTAssertEqual(disconnected.endpoint, endpoint)
        XCTAssertLessThan(started.duration(to: .now), .seconds(1))

        monitor.stop()
        monitor.stop()  // twice is harmless
        dealer.close()
    }

    func testNoEventsWhenNothingHappens() throws {
        let context = try Context()
        let dealer = try Socket(.dealer, context: context)
        let monitor = try SocketMonitor(watching: dealer, events: .disconnected, context: context)
        XCTAssertNil(try monitor.nextEvent())
        monitor.stop()
        dealer.close()
    }
}
