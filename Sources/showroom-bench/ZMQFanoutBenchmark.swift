import ArgumentParser
import CZeroMQ
import Foundation
import ShowroomKit
import Synchronization
import ZeroMQ

/// `showroom-bench zmq-fanout`: one ROUTER fans a frame out to N DEALER peers read by other
/// threads, once through the ZeroMQ wrapper and once through a plain loop over the C API, and
/// prints the delivered rates and their ratio. The receiving side is the same plain C loop in
/// both runs, so the difference is the wrapper's send path.
struct ZMQFanoutBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zmq-fanout",
        abstract: "Fan-out throughput: the ZeroMQ wrapper against the raw C API.")

    @Option(help: "DEALER peers to fan out to.")
    var peers = 100

    @Option(help: "Payload bytes per message.")
    var size = 1200

    @Option(help: "Seconds of sending per run.")
    var seconds = 3.0

    @Option(help: "Threads reading the peers.")
    var receiverThreads = 2

    @Option(help: "Runs of each variant, alternating; the best of each is reported.")
    var repeats = 2

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard (1...2000).contains(peers) else { throw ValidationError("--peers must be 1–2000") }
        guard (1...(16 << 20)).contains(size) else { throw ValidationError("--size must be 1 byte – 16 MiB") }
        guard seconds > 0 && seconds <= 120 else { throw ValidationError("--seconds must be in (0, 120]") }
        guard (1...16).contains(receiverThreads) else { throw ValidationError("--receiver-threads must be 1–16") }
        guard (1...10).contains(repeats) else { throw ValidationError("--repeats must be 1–10") }
    }

    func run() throws {
        try ZeroMQLibrary.requireSupported()
        var wrapper = FanoutResult.zero
        var raw = FanoutResult.zero
        for _ in 0..<repeats {
            raw = max(raw, try measure(.raw))
            wrapper = max(wrapper, try measure(.wrapper))
        }
        guard raw.messagesPerSecond > 0, wrapper.messagesPerSecond > 0 else {
            throw NothingMeasured("no samples of the fan-out: the \(raw.messagesPerSecond > 0 ? "wrapper" : "raw C") run delivered nothing")
        }
        let ratio = wrapper.messagesPerSecond / raw.messagesPerSecond
        if json {
            let object: [String: Any] = [
                "benchmark": "zmq-fanout", "peers": peers, "size": size, "seconds": seconds,
                "wrapper_msgs_per_s": wrapper.messagesPerSecond.rounded(),
                "wrapper_mb_per_s": (wrapper.megabytesPerSecond(size) * 10).rounded() / 10,
                "wrapper_refused": wrapper.refused,
                "wrapper_ns_per_send": (wrapper.nanosecondsPerSend * 10).rounded() / 10,
                "raw_msgs_per_s": raw.messagesPerSecond.rounded(),
                "raw_mb_per_s": (raw.megabytesPerSecond(size) * 10).rounded() / 10,
                "raw_refused": raw.refused,
                "raw_ns_per_send": (raw.nanosecondsPerSend * 10).rounded() / 10,
                "ratio": (ratio * 1000).rounded() / 1000,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("zmq-fanout: \(peers) peers, \(size) B, \(seconds) s per run, best of \(repeats)")
            for (name, result) in [("wrapper", wrapper), ("raw C", raw)] {
                let label = name.padding(toLength: 8, withPad: " ", startingAt: 0)
                print(label + String(format: " %10.0f msg/s  %7.1f MB/s delivered   %6.1f ns per send call  (%d refused at HWM)",
                                     result.messagesPerSecond, result.megabytesPerSecond(size),
                                     result.nanosecondsPerSend, result.refused))
            }
            print(String(format: "ratio    %.3f (wrapper / raw C)", ratio))
        }
    }

    private enum Variant { case wrapper, raw }

    private func measure(_ variant: Variant) throws -> FanoutResult {
        let context = try Context(ioThreads: 1)
        let router = try Socket(.router, context: context)
        try router.set(.routerMandatory, 1)
        let endpoint = try router.bind("tcp://127.0.0.1:*")
        let ids = (0..<peers).map { Array("peer-\($0)".utf8) }

        let progress = ReceiverProgress()
        let receivers = (0..<receiverThreads).map { t in
            startCountingReceiver(context: context, endpoint: endpoint,
                          ids: stride(from: t, to: peers, by: receiverThreads).map { ids[$0] },
                          progress: progress)
        }
        defer {
            progress.stop.store(true, ordering: .relaxed)
            for done in receivers { done.wait() }
        }
        // Every peer says hello first, so the ROUTER knows all routing ids before the clock starts.
        var known = Set<[UInt8]>()
        let helloDeadline = ContinuousClock.now + .seconds(10)
        while known.count < peers {
            guard ContinuousClock.now < helloDeadline else {
                throw ValidationError("only \(known.count) of \(peers) peers connected within 10 s")
            }
            if try router.poll(.readable, timeout: .milliseconds(100)).contains(.readable),
               let frames = try router.receiveFrames() {
                known.insert(frames[0])
            }
        }

        let payload = [UInt8](repeating: 0xA5, count: size)
        let start = ContinuousClock.now
        let end = start + .milliseconds(Int(seconds * 1000))
        let (sent, refused) = switch variant {
        case .wrapper: try sendThroughWrapper(router, ids: ids, payload: payload, until: end)
        case .raw: sendThroughCAPI(router.unsafeHandle, ids: ids, payload: payload, until: end)
        }
        // The rate counts what arrived, so wait for the queues to drain (bounded).
        let drainDeadline = ContinuousClock.now + .seconds(10)
        while progress.delivered.load(ordering: .relaxed) < sent && ContinuousClock.now < drainDeadline {
            _ = try router.poll(.readable, timeout: .milliseconds(1))
        }
        let seconds = start.duration(to: .now).seconds
        return FanoutResult(messagesPerSecond: Double(progress.delivered.load(ordering: .relaxed)) / seconds,
                            refused: refused, nanosecondsPerSend: self.seconds * 1e9 / Double(max(sent + refused, 1)))
    }

    /// The wrapper's fan-out: one `Multipart` frame sent by reference to every peer.
    private func sendThroughWrapper(_ router: Socket, ids: [[UInt8]], payload: [UInt8], until end: ContinuousClock.Instant) throws -> (Int, Int) {
        let frame = Multipart([payload])
        var sent = 0, refused = 0
        while ContinuousClock.now < end {
            for id in ids {
                if try router.send(to: id, frame) == .sent { sent += 1 } else { refused += 1 }
            }
        }
        return (sent, refused)
    }

    /// The same fan-out as a plain loop over the C API.
    private func sendThroughCAPI(_ router: UnsafeMutableRawPointer, ids: [[UInt8]], payload: [UInt8], until end: ContinuousClock.Instant) -> (Int, Int) {
        let source = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 2)
        let copy = source + 1
        defer { zmq_msg_close(source); source.deallocate() }
        zmq_msg_init_size(source, payload.count)
        payload.withUnsafeBytes { zmq_msg_data(source).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        var sent = 0, refused = 0
        while ContinuousClock.now < end {
            for id in ids {
                let rc = id.withUnsafeBytes { zmq_send(router, $0.baseAddress, $0.count, ZMQ_DONTWAIT | ZMQ_SNDMORE) }
                if rc < 0 { refused += 1; continue }
                zmq_msg_init(copy)
                zmq_msg_copy(copy, source)
                if zmq_msg_send(copy, router, ZMQ_DONTWAIT) < 0 { zmq_msg_close(copy) }
                sent += 1
            }
        }
        return (sent, refused)
    }
}

/// A thread owning `ids.count` DEALER peers (each says hello first, so the ROUTER knows it),
/// counting what they receive with a plain C loop until `progress.stop` is set.
///
/// With `stampedHeaders`, the first part of every multipart message starts with its send time
/// (``MediaClock`` microseconds, little-endian) and the receiver adds its latency to
/// `progress.latency` when it stops.
func startCountingReceiver(context: Context, endpoint: String, ids: [[UInt8]],
                           progress: ReceiverProgress, stampedHeaders: Bool = false) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        defer { done.signal() }
        let peers: [Socket]
        do {
            peers = try ids.map { id -> Socket in
                let peer = try Socket(.dealer, context: context)
                try peer.setRoutingID(id)
                try peer.connect(endpoint)
                _ = try peer.send(Array("hello".utf8))
                return peer
            }
        } catch {
            FileHandle.standardError.write(Data("receiver thread: \(error)\n".utf8))
            return
        }
        var items = peers.map { zmq_pollitem_t(socket: $0.unsafeHandle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0) }
        let message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
        zmq_msg_init(message)
        defer { zmq_msg_close(message); message.deallocate() }
        var latency = LatencyHistogram()
        defer { if stampedHeaders { progress.latency.withLock { $0.merge(latency) } } }
        var inMessage = false
        while !progress.stop.load(ordering: .relaxed) {
            guard zmq_poll(&items, Int32(items.count), 20) > 0 else { continue }
            for item in items where item.revents != 0 {
                var count = 0
                var bytes = 0
                while zmq_msg_recv(message, item.socket, ZMQ_DONTWAIT) >= 0 {
                    count += 1
                    bytes += zmq_msg_size(message)
                    if stampedHeaders {
                        if !inMessage, zmq_msg_size(message) >= 8 {
                            var sent: UInt64 = 0
                            withUnsafeMutableBytes(of: &sent) { $0.copyMemory(from: UnsafeRawBufferPointer(start: zmq_msg_data(message), count: 8)) }
                            latency.record(microseconds: Int64(bitPattern: MediaClock.nowMicroseconds() &- UInt64(littleEndian: sent)))
                        }
                        inMessage = zmq_msg_more(message) != 0
                    }
                }
                progress.delivered.add(count, ordering: .relaxed)
                progress.bytes.add(bytes, ordering: .relaxed)
            }
        }
    }
    thread.start()
    return done
}

/// What the receiver threads share with the sender.
final class ReceiverProgress: Sendable {
    /// Messages received.
    let delivered = Atomic<Int>(0)
    /// Bytes received.
    let bytes = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    /// Send → receive latencies, merged in by the receivers when they stop (stamped headers only).
    let latency = Mutex(LatencyHistogram())
}

private struct FanoutResult: Comparable {
    var messagesPerSecond: Double
    var refused: Int
    /// Sender time per send call, accepted or refused: the cost of the send path itself.
    var nanosecondsPerSend: Double
    static let zero = FanoutResult(messagesPerSecond: 0, refused: 0, nanosecondsPerSend: 0)
    static func < (a: FanoutResult, b: FanoutResult) -> Bool { a.messagesPerSecond < b.messagesPerSecond }
    func megabytesPerSecond(_ size: Int) -> Double { messagesPerSecond * Double(size) / 1_000_000 }
}
