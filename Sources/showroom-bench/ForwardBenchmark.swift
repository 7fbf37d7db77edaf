import OperatorTools
import ArgumentParser
import Foundation
import ShowroomKit
import Synchronization

/// `showroom-bench forward`: one host publishes VP8 + Opus in a source channel and forwards its
/// tracks into a destination channel (on another edge when the cluster has one: the edge-to-edge
/// link); a viewer in each channel measures publish → receive latency of the same frames. Prints
/// the latency the forward adds, frame by frame (forwarded minus direct), at p50 and p99.
struct ForwardBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Forwarding into another channel: the publish → receive latency it adds over a direct viewer.")

    @OptionGroup var target: BenchTarget

    @Option(help: "Seconds measured (after a 2 s warm-up).")
    var seconds = 10.0

    @Option(name: .customLong("bitrate-kbps"), help: "The host's video bitrate in kbit/s.")
    var bitrateKbps = 1200

    @Option(help: "The host's frames per second.")
    var fps = 30

    @Flag(name: .customLong("same-edge"), help: "Place the destination on the source's edge (forward in the edge) instead of another.")
    var sameEdge = false

    func validate() throws {
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
        guard (1...60).contains(fps) else { throw ValidationError("--fps must be 1-60") }
    }

    func run() async throws {
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        let source = "bench-fwd-src-\(tag)"
        let hostUID: UInt32 = 1
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let (host, clip) = try await EncodedClip.host(seeds: clientSeeds, bitrateKbps: bitrateKbps, fps: fps)
        let connection = try await host.joinChannel(
            token: try app.token(channel: source, uid: hostUID, role: .publisher), channel: source, uid: hostUID, options: .broadcaster)
        func edge(of channel: String) async throws -> String {
            try await host.placement.edge(
                for: channel, avoiding: nil,
                joiningAs: PlacementCredentials(uid: hostUID, token: try app.token(channel: channel, uid: hostUID, role: .publisher))).id
        }
        let sourceEdge = try await edge(of: source)
        var destination = "bench-fwd-dst-\(tag)-0"
        var destinationEdge = try await edge(of: destination)
        for i in 1..<40 where (destinationEdge == sourceEdge) != sameEdge {
            destination = "bench-fwd-dst-\(tag)-\(i)"
            destinationEdge = try await edge(of: destination)
        }

        let meter = ForwardLatencyMeter()
        let loop = try EngineLoop(name: "bench-forward-viewers")
        var viewers: [ShowroomEngine] = []
        for (index, channel) in [source, destination].enumerated() {
            let uid = 1000 + UInt32(index)
            let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)), loop: loop)
            let forwarded = index == 1
            let viewerConnection = ChannelConnection(channel: channel, uid: uid)
            try await viewer.setupRemoteVideo(uid: hostUID, connection: viewerConnection, sink: ClosureVideoSink { frame in
                meter.record(frame, forwarded: forwarded)
                return .received
            })
            try await viewer.joinChannel(
                token: try app.token(channel: channel, uid: uid, role: .subscriber), channel: channel, uid: uid, options: .audience)
            viewers.append(viewer)
        }
        let pushing = Task { try await clip.push(through: host) }
        defer { pushing.cancel() }
        try await host.startForwardStream(
            to: [ForwardDestination(channel: destination, token: try app.token(channel: destination, uid: hostUID, role: .publisher))],
            connection: connection)
        progress("source \(source) on \(sourceEdge), destination \(destination) on \(destinationEdge); 2 s warm-up, then \(seconds) s measured", json: json)
        try await Task.sleep(for: .seconds(2))  // warm-up: the forward joins and the viewers reach a keyframe
        meter.reset()
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))  // the measured period
        let measured = meter.snapshot()
        pushing.cancel()
        _ = await pushing.result
        try? await host.stopForwardStream(connection: connection)
        try? await host.leaveChannel()
        await host.shutdown()
        for viewer in viewers { await viewer.shutdown() }
        await loop.shutdown()

        try measured.direct.requireSamples("the direct viewer's latency", "it received no frame of the host in \(seconds) s")
        try measured.forwarded.requireSamples("the forwarded viewer's latency",
                                              "no frame was forwarded into \(destination) in \(seconds) s (is the forward running?)")
        try measured.added.requireSamples("the latency the forward adds", "no frame reached both viewers in \(seconds) s")
        let figures: [String: Any] = [
            "benchmark": "forward", "seconds": seconds, "bitrate_kbps": bitrateKbps, "fps": fps,
            "source_edge": sourceEdge, "destination_edge": destinationEdge, "same_edge": sourceEdge == destinationEdge,
            "paired_frames": measured.added.count, "direct_frames": measured.directFrames, "forwarded_frames": measured.forwardedFrames,
            "direct_latency_ms_p50": rounded(measured.direct.percentileMs(0.5), 2),
            "direct_latency_ms_p99": rounded(measured.direct.percentileMs(0.99), 2),
            "forwarded_latency_ms_p50": rounded(measured.forwarded.percentileMs(0.5), 2),
            "forwarded_latency_ms_p99": rounded(measured.forwarded.percentileMs(0.99), 2),
            "forward_added_latency_ms_p50": rounded(measured.added.percentileMs(0.5), 2),
            "forward_added_latency_ms_p99": rounded(measured.added.percentileMs(0.99), 2),
            "forward_added_latency_ms_max": rounded(measured.added.maxMs, 2),
        ]
        if json {
            try printJSON(figures)
        } else {
            print("forward: \(bitrateKbps) kbit/s VP8 at \(fps) fps, \(source)@\(sourceEdge) → \(destination)@\(destinationEdge), \(seconds) s")
            print(String(format: "  direct viewer      p50 %.2f ms   p99 %.2f ms   (%d frames)",
                         measured.direct.percentileMs(0.5), measured.direct.percentileMs(0.99), measured.directFrames))
            print(String(format: "  forwarded viewer   p50 %.2f ms   p99 %.2f ms   (%d frames)",
                         measured.forwarded.percentileMs(0.5), measured.forwarded.percentileMs(0.99), measured.forwardedFrames))
            print(String(format: "  added by forward   p50 %.2f ms   p99 %.2f ms   max %.2f ms   (%d frames paired)",
                         measured.added.percentileMs(0.5), measured.added.percentileMs(0.99), measured.added.maxMs, measured.added.count))
        }
    }
}

/// Publish → receive latency of the same video frames at the direct and the forwarded viewer,
/// paired by sequence number.
final class ForwardLatencyMeter: Sendable {
    struct Counts {
        var direct = LatencyHistogram()
        var forwarded = LatencyHistogram()
        var added = LatencyHistogram()
        var directFrames = 0
        var forwardedFrames = 0
        /// Latency of frames seen by one viewer only so far, by sequence.
        var unpairedDirect: [UInt32: Int64] = [:]
        var unpairedForwarded: [UInt32: Int64] = [:]
    }

    private let counts = Mutex(Counts())

    func record(_ frame: RemoteMediaFrame, forwarded: Bool) {
        let latency = frame.transitMicroseconds ?? frame.latencyMicroseconds
        counts.withLock { c in
            if forwarded {
                c.forwardedFrames += 1
                c.forwarded.record(microseconds: latency)
                if let direct = c.unpairedDirect.removeValue(forKey: frame.sequence) {
                    c.added.record(microseconds: latency - direct)
                } else {
                    c.unpairedForwarded[frame.sequence] = latency
                }
            } else {
                c.directFrames += 1
                c.direct.record(microseconds: latency)
                if let other = c.unpairedForwarded.removeValue(forKey: frame.sequence) {
                    c.added.record(microseconds: other - latency)
                } else {
                    c.unpairedDirect[frame.sequence] = latency
                }
            }
            // Frames one viewer never got do not pile up.
            if c.unpairedDirect.count > 1000 { c.unpairedDirect.removeAll() }
            if c.unpairedForwarded.count > 1000 { c.unpairedForwarded.removeAll() }
        }
    }

    func reset() { counts.withLock { $0 = Counts() } }

    func snapshot() -> Counts { counts.withLock { $0 } }
}
