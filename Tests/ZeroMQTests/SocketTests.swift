import CZeroMQ
import Foundation
import Synchronization
import XCTest
@testable import ZeroMQ

final class SocketTests: XCTestCase {
    func testLibraryHasWhatTheClusterUses() throws {
        XCTAssertNoThrow(try ZeroMQLibrary.requireSupported())
        XCTAssertGreaterThanOrEqual(ZeroMQLibrary.version.major, 4)
    }

    func testRouterDealerMultipartRoundTrip() throws {
        let context = try Context()
        let router = try Socket(.router, context: context)
        let endpoint = try router.bind("tcp://127.0.0.1:*")
        XCTAssertTrue(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let dealer = try Socket(.dealer, context: context)
        try dealer.setRoutingID(Array("client-1".utf8))
        try dealer.connect(endpoint)

        let request: [[UInt8]] = [Array("header".utf8), [], Array(repeating: 0xAB, count: 5000)]
        XCTAssertEqual(try dealer.send(frames: request), .sent)

        let received = try XCTUnwrap(try receive(router))
        XCTAssertEqual(received.count, 4)
        XCTAssertEqual(received[0], Array("client-1".utf8), "ROUTER puts the peer's routing id first")
        XCTAssertEqual(Array(received[1...]), request)

        // Reply through the reusable frames: routing id + two frames.
        let reply = Multipart([Array("reply".utf8), Array(repeating: 7, count: 100)])
        XCTAssertEqual(try router.send(to: received[0], reply), .sent)
        XCTAssertEqual(try XCTUnwrap(try receive(dealer)), reply.allBytes)
        XCTAssertEqual(reply.count, 2, "sending leaves the frames intact")
    }

    func testMessageMovesIntoMultipartAndSendsWithoutCopy() throws {
        let context = try Context()
        let pull = try Socket(.pair, context: context)
        let endpoint = try pull.bind("inproc://message-test")
        let push = try Socket(.pair, context: context)
        try push.connect(endpoint)

        var message = Message(Array(repeating: 9, count: 64))
        XCTAssertEqual(message.count(), 64)
        let second = message.copy()
        let parts = Multipart()
        parts.append(message)
        parts.append(second)
        parts.append(referenceTo: 0, of: parts)
        XCTAssertEqual(parts.count, 3)
        XCTAssertEqual(try push.send(parts), .sent)
        XCTAssertEqual(try XCTUnwrap(try receive(pull)), Array(repeating: Array(repeating: 9, count: 64), count: 3))
        XCTAssertEqual(try push.send(Message(Array("one".utf8))), .sent)
        XCTAssertEqual(try XCTUnwrap(try receive(pull)), [Array("one".utf8)])
    }

    func testUnknownRoutingIDIsHostUnreachableValue() throws {
        let context = try Context()
        let router = try Socket(.router, context: context)
        try router.set(.routerMandatory, 1)
        try router.bind("tcp://127.0.0.1:*")
        let parts = Multipart([Array("hello".utf8)])
        XCTAssertEqual(try router.send(to: Array("nobody".utf8), parts), .hostUnreachable)
        // Without ROUTER_MANDATORY the same send is dropped silently, which is why we set it.
        let lax = try Socket(.router, context: context)
        XCTAssertEqual(try lax.send(to: Array("nobody".utf8), parts), .sent)
    }

    func testInvalidEndpointThrowsWithErrnoAndText() throws {
        let context = try Context()
        let socket = try Socket(.dealer, context: context)
        XCTAssertThrowsError(try socket.bind("nonsense://x")) { error in
            let zmqError = error as? ZeroMQError
            XCTAssertEqual(zmqError?.errno, EPROTONOSUPPORT)
            XCTAssertFalse(zmqError?.message.isEmpty ?? true)
            XCTAssertTrue(zmqError?.description.contains("bind nonsense://x") ?? false)
        }
    }

    /// A publisher's frame received once by a ROUTER and forwarded to 100 DEALER peers by
    /// reference: every peer gets identical bytes.
    func testOneReceivedFrameFansOutToHundredPeers() throws {
        let context = try Context()
        let router = try Socket(.router, context: context)
        try router.set(.routerMandatory, 1)
        let endpoint = try router.bind("tcp://127.0.0.1:*")

        let peerCount = 100
        let received = Mutex<[Int: [[UInt8]]]>([:])
        let ready = DispatchSemaphore(value: 0)
        let reader = onNewThread("peers") {
            do {
                let peers = try connectPeers(peerCount, context: context, endpoint: endpoint)
                ready.signal()
                let deadline = ContinuousClock.now + .seconds(10)
                while received.withLock({ $0.count }) < peerCount && ContinuousClock.now < deadline {
                    for i in pollReadable(peers, timeout: .milliseconds(100)) {
                        if let frames = try peers[i].receiveFrames() {
                            received.withLock { $0[i] = frames }
                        }
                    }
                }
            } catch {
                XCTFail("peer thread: \(error)")
            }
        }
        waitFor(ready, seconds: 10, "peers to connect")
        try awaitHellos(router, count: peerCount)

        let publisher = try Socket(.dealer, context: context)
        try publisher.setRoutingID(Array("publisher".utf8))
        try publisher.connect(endpoint)
        let payload = (0..<1200).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        XCTAssertEqual(try publisher.send(frames: [Array("header".utf8), payload]), .sent)

        let incoming = Multipart()
        let deadline = ContinuousClock.now + .seconds(5)
        while try !router.receive(into: incoming) {
            XCTAssertLessThan(ContinuousClock.now, deadline, "publisher frame never arrived")
            _ = try router.poll(.readable, timeout: .milliseconds(50))
        }
        XCTAssertEqual(incoming.bytes(of: 0), Array("publisher".utf8))
        for i in 0..<peerCount {
            XCTAssertEqual(try router.send(to: peerID(i), incoming, from: 1), .sent)
        }
        XCTAssertEqual(incoming.count, 3, "forwarding leaves the received frames intact")

        waitFor(reader, seconds: 15, "every peer to receive the frame")
        let all = received.withLock { $0 }
        XCTAssertEqual(all.count, peerCount)
        for i in 0..<peerCount {
            XCTAssertEqual(all[i], [Array("header".utf8), payload], "peer \(i)")
        }
    }

    /// One peer stops reading: it reaches its high-water mark and the sender gets `wouldBlock` for
    /// it alone, while the 99 others keep receiving everything.
    func testStalledPeerBlocksOnlyItself() throws {
        let context = try Context()
        let router = try Socket(.router, context: context)
        try router.set(.routerMandatory, 1)
        try router.set(.sendHighWaterMark, 20)
        // Small kernel buffers, so the stalled peer's queue fills after tens of messages rather
        // than megabytes.
        try router.set(.sendBuffer, 8192)
        let endpoint = try router.bind("tcp://127.0.0.1:*")

        let peerCount = 100
        let stalled = 0
        let deliveredToOthers = Counter()
        let wrongBytes = Counter()
        let stop = Mutex(false)
        let ready = DispatchSemaphore(value: 0)
        let payload = [UInt8](repeating: 0x5A, count: 1200)

        let readers = onNewThread("readers") {
            do {
                let peers = try connectPeers(peerCount, context: context, endpoint: endpoint) { peer in
                    try peer.set(.receiveHighWaterMark, 20)
                    try peer.set(.receiveBuffer, 8192)
                }
                ready.signal()
                let readers = peers.enumerated().filter { $0.offset != stalled }.map(\.element)
                let parts = Multipart()
                while !stop.withLock({ $0 }) {
                    for index in pollReadable(readers, timeout: .milliseconds(20)) {
                        while try readers[index].receive(into: parts) {
                            if parts.count != 1 || parts.bytes(of: 0) != payload { wrongBytes.add() }
                            deliveredToOthers.add()
                        }
                    }
                }
            } catch {
                XCTFail("reader thread: \(error)")
            }
        }
        defer {
            stop.withLock { $0 = true }
            waitFor(readers, seconds: 10, "reader thread to stop")
        }
        waitFor(ready, seconds: 10, "peers to connect")
        try awaitHellos(router, count: peerCount)

        let frame = Multipart([payload])
        var round = 0
        var stalledAtRound: Int?
        var othersRefused = 0
        let deadline = Date() + 30
        // Rounds of one message per peer; each round waits until the readers have taken the
        // previous one, so only the stalled peer can fill up.
        while Date() < deadline {
            round += 1
            for i in 0..<peerCount {
                let outcome = try router.send(to: peerID(i), frame)
                if i == stalled {
                    if outcome == .wouldBlock && stalledAtRound == nil { stalledAtRound = round }
                } else if outcome != .sent {
                    othersRefused += 1
                }
            }
            _ = deliveredToOthers.wait(atLeast: round * (peerCount - 1), until: deadline)
            if let at = stalledAtRound, round >= at + 20 { break }
        }
        let stalledRound = try XCTUnwrap(stalledAtRound, "the stalled peer never reached its high-water mark")
        XCTAssertGreaterThanOrEqual(stalledRound, 20, "not before its high-water mark")
        XCTAssertEqual(othersRefused, 0, "other peers were refused")
        XCTAssertEqual(deliveredToOthers.current, round * (peerCount - 1), "every message reached the 99 readers")
        XCTAssertEqual(wrongBytes.current, 0)
    }
}
