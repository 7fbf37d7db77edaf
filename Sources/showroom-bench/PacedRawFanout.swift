import CZeroMQ
import Foundation
import ShowroomKit
import ShowroomWire
import ZeroMQ

/// The yardstick of `showroom-bench fanout`: the same frames at the same pace, fanned out by a bare
/// ROUTER over the C API to the same number of DEALER peers, with nothing else going on. Its CPU
/// seconds per delivered GB (the sending thread plus its context's I/O thread, which does the TCP
/// writes) is what an edge's cost is compared with.
struct PacedRawFanout {
    /// Peers to fan out to.
    var peers: Int
    /// The frames to send in one period, with their sizes; sent evenly spaced over `period`.
    var frameSizes: [Int]
    var period: Duration
    var seconds: Double

    struct Result {
        var cpuSeconds: Double
        var deliveredBytes: Int
        /// Send → receive latency of every delivered frame.
        var latency: LatencyHistogram
        var cpuSecondsPerGB: Double { deliveredBytes > 0 ? cpuSeconds / (Double(deliveredBytes) / 1e9) : 0 }
    }

    func measure() throws -> Result {
        let receiving = try Context(ioThreads: 1)
        let before = CPUTime.threadIDs()
        let sending = try Context(ioThreads: 1)
        let router = try Socket(.router, context: sending)
        // libzmq starts a context's threads with its first socket: the new ones are the sender's.
        let senderThreads = CPUTime.threadIDs().subtracting(before)
        defer {
            router.close()
            sending.shutdown()
            receiving.shutdown()
        }
        try router.set(.routerMandatory, 1)
        let endpoint = try router.bind("tcp://127.0.0.1:*")
        let ids = (0..<peers).map { Array("peer-\($0)".utf8) }
        let progress = ReceiverProgress()
        let receivers = (0..<2).map { t in
            startCountingReceiver(context: receiving, endpoint: endpoint,
                                  ids: stride(from: t, to: peers, by: 2).map { ids[$0] }, progress: progress,
                                  stampedHeaders: true)
        }
        var receiversStopped = false
        func stopReceivers() {
            guard !receiversStopped else { return }
            receiversStopped = true
            progress.stop.store(true, ordering: .relaxed)
            for done in receivers { done.wait() }
        }
        defer { stopReceivers() }
        var known = Set<[UInt8]>()
        let helloDeadline = ContinuousClock.now + .seconds(10)
        while known.count < peers, ContinuousClock.now < helloDeadline {
            if try router.poll(.readable, timeout: .milliseconds(100)).contains(.readable), let frames = try router.receiveFrames() {
                known.insert(frames[0])
            }
        }
        guard known.count == peers else { throw ShowroomError.unavailable("only \(known.count) of \(peers) raw peers connected within 10 s") }
        progress.bytes.store(0, ordering: .relaxed)

        var header = [UInt8](repeating: 0x5A, count: 48)
        let payloads = frameSizes.map { [UInt8](repeating: 0xA5, count: $0) }
        let spacing = period / max(frameSizes.count, 1)
        let cpuBefore = senderThreads.compactMap(CPUTime.thread).reduce(0, +)
        let threadBefore = CPUTime.currentThread()
        let start = ContinuousClock.now
        let end = start + .milliseconds(Int(seconds * 1000))
        var next = start
        var index = 0
        while next < end {
            let wait = ContinuousClock.now.duration(to: next)
            if wait > .zero { _ = try router.poll([], timeout: wait) }
            // The send time travels in the header, as the publisher's does in a media header.
            withUnsafeBytes(of: MediaClock.nowMicroseconds().littleEndian) { header.replaceSubrange(0..<8, with: $0) }
            let frame = Multipart([header, payloads[index % payloads.count]])
            for id in ids { _ = try router.send(to: id, frame) }
            index += 1
            next += spacing
        }
        let cpu = CPUTime.currentThread() - threadBefore
            + senderThreads.compactMap(CPUTime.thread).reduce(0, +) - cpuBefore
        // Let the queues drain (until nothing more arrives for 100 ms) before counting.
        let drainDeadline = ContinuousClock.now + .seconds(5)
        var last = -1
        while ContinuousClock.now < drainDeadline {
            let received = progress.bytes.load(ordering: .relaxed)
            if received == last { break }
            last = received
            _ = try router.poll([], timeout: .milliseconds(100))
        }
        stopReceivers()
        return Result(cpuSeconds: cpu, deliveredBytes: progress.bytes.load(ordering: .relaxed),
                      latency: progress.latency.withLock { $0 })
    }
}
