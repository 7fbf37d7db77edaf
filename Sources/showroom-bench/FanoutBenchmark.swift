import OperatorTools
import ArgumentParser
import Edge
import Foundation
import MediaCodecs
import NodeRuntime
import ShowroomKit
import ShowroomWire
import Synchronization
import ZeroMQ

/// `showroom-bench fanout`: one host publishes VP8 + Opus at about `--bitrate-kbps` to N
/// subscribers on the same edge; prints delivered throughput, dropped frames, publish → receive
/// latency, and the edge process's CPU seconds per delivered GB next to a bare ZeroMQ fan-out of
/// the same frames at the same pace, measured in the same run. The edge must run on this machine
/// (its CPU time is read from /proc).
struct FanoutBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Edge fan-out: throughput, drops, latency and CPU per GB against bare ZeroMQ.")

    @OptionGroup var target: BenchTarget

    @Option(help: "Subscribers.")
    var subscribers = 200

    @Option(help: "Seconds measured (after a 2 s warm-up).")
    var seconds = 20.0

    @Option(name: .customLong("bitrate-kbps"), help: "The host's video bitrate in kbit/s.")
    var bitrateKbps = 1200

    @Option(help: "The host's frames per second.")
    var fps = 30

    func validate() throws {
        guard (1...2000).contains(subscribers) else { throw ValidationError("--subscribers must be 1–2000") }
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
    }

    func run() async throws {
        let channel = "bench-fanout-\(UInt32.random(in: 0 ... .max))"
        let hostUID: UInt32 = 1
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let (host, clip) = try await EncodedClip.host(seeds: clientSeeds, bitrateKbps: bitrateKbps, fps: fps)

        // The subscribers share two loops: hundreds of engines, two threads.
        let loops = try [EngineLoop(name: "bench-subscribers-1"), EngineLoop(name: "bench-subscribers-2")]
        let meter = DeliveryMeter()
        var engines: [ShowroomEngine] = []
        for i in 0..<subscribers {
            let uid = 1000 + UInt32(i)
            let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)), loop: loops[i % 2])
            let connection = ChannelConnection(channel: channel, uid: uid)
            try await engine.setupRemoteVideo(uid: hostUID, connection: connection, sink: ClosureVideoSink { frame in
                meter.record(frame, video: true)
                return .received
            })
            try await engine.setupRemoteAudio(uid: hostUID, connection: connection, sink: MeteredAudioSink(meter))
            try await engine.joinChannel(
                token: try app.token(channel: channel, uid: uid, role: .subscriber), channel: channel, uid: uid, options: .audience)
            engines.append(engine)
        }
        try await host.joinChannel(
            token: try app.token(channel: channel, uid: hostUID, role: .publisher), channel: channel, uid: hostUID,
            options: .broadcaster)
        let pushing = Task { try await clip.push(through: host) }
        defer { pushing.cancel() }
        let edge = try await host.placement.edge(
            for: channel, avoiding: nil,
            joiningAs: PlacementCredentials(uid: hostUID, token: try app.token(channel: channel, uid: hostUID, role: .publisher)))
        let edgePID = try await memberProcessID(edge.id, seeds: seeds)
        progress("\(subscribers) subscribers on \(edge.id) (pid \(edgePID)); 2 s warm-up, then \(seconds) s measured", json: json)

        try await Task.sleep(for: .seconds(2))
        meter.reset()
        let cpuBefore = CPUTime.process(edgePID) ?? 0
        let machineBefore = CPUTime.machine()
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let measured = meter.snapshot()
        let cpu = (CPUTime.process(edgePID) ?? 0) - cpuBefore
        let elapsed = start.duration(to: .now).seconds
        let steal = CPUTime.stealPercent(from: machineBefore, to: CPUTime.machine())
        let hostStatistics = await host.statistics()

        pushing.cancel()
        _ = await pushing.result
        try? await host.leaveChannel()
        await host.shutdown()
        for engine in engines { await engine.shutdown() }
        for loop in loops { await loop.shutdown() }

        try measured.latency.requireSamples("delivery to the subscribers", "none received a frame in the \(seconds) s measured")
        // The yardstick: the same frame sizes and pace through a bare ROUTER.
        progress("bare ZeroMQ fan-out of the same frames to \(subscribers) peers ...", json: json)
        let perSecondVideo = measured.meanVideoBytes
        let perSecondAudio = measured.meanAudioBytes
        let machineBeforeRaw = CPUTime.machine()
        let raw = try PacedRawFanout(
            peers: subscribers,
            frameSizes: Array(repeating: max(perSecondVideo, 1), count: fps) + Array(repeating: max(perSecondAudio, 1), count: 50),
            period: .seconds(1), seconds: min(seconds, 10)
        ).measure()
        let rawSteal = CPUTime.stealPercent(from: machineBeforeRaw, to: CPUTime.machine())
        try raw.latency.requireSamples("the bare ZeroMQ fan-out", "its peers received nothing")

        let gigabytes = Double(measured.bytes) / 1e9
        let edgeCPUPerGB = gigabytes > 0 ? cpu / gigabytes : 0
        let ratio = raw.cpuSecondsPerGB > 0 ? edgeCPUPerGB / raw.cpuSecondsPerGB : 0
        let latency = measured.latency
        let figures: [String: Any] = [
            "benchmark": "fanout", "subscribers": subscribers, "seconds": seconds, "bitrate_kbps": bitrateKbps,
            "delivered_mb_s": rounded(Double(measured.bytes) / elapsed / 1e6, 2),
            "delivered_frames": measured.frames, "dropped_frames": measured.gaps,
            "latency_ms_p50": rounded(latency.percentileMs(0.5), 2), "latency_ms_p99": rounded(latency.percentileMs(0.99), 2),
            "latency_ms_max": rounded(latency.maxMs, 2),
            "raw_zmq_latency_ms_p50": rounded(raw.latency.percentileMs(0.5), 2),
            "raw_zmq_latency_ms_p99": rounded(raw.latency.percentileMs(0.99), 2),
            "edge_cpu_s": rounded(cpu, 2), "edge_cpu_s_per_gb": rounded(edgeCPUPerGB, 2),
            "raw_zmq_cpu_s_per_gb": rounded(raw.cpuSecondsPerGB, 2), "edge_to_raw_cpu_ratio": rounded(ratio, 2),
            "cpu_steal_percent": steal.map { rounded($0, 1) } ?? NSNull(),
            "raw_zmq_cpu_steal_percent": rawSteal.map { rounded($0, 1) } ?? NSNull(),
            "host_video_frames_sent": hostStatistics.videoFramesSent, "host_frames_dropped_on_send": hostStatistics.framesDroppedOnSend,
        ]
        if json {
            try printJSON(figures)
        } else {
            print("fan-out: 1 host → \(subscribers) subscribers, \(bitrateKbps) kbit/s VP8 + Opus, \(seconds) s")
            print(String(format: "  delivered          %8.2f MB/s   (%d frames)", Double(measured.bytes) / elapsed / 1e6, measured.frames))
            print("  dropped frames     \(measured.gaps)")
            print(String(format: "  latency            p50 %.2f ms   p99 %.2f ms   max %.2f ms",
                         latency.percentileMs(0.5), latency.percentileMs(0.99), latency.maxMs))
            print(String(format: "  edge CPU           %.2f s = %.2f s per delivered GB", cpu, edgeCPUPerGB))
            print(String(format: "  bare ZeroMQ        %.2f s per delivered GB   (edge / bare = %.2f)", raw.cpuSecondsPerGB, ratio))
            print(String(format: "  bare ZeroMQ        latency p50 %.2f ms   p99 %.2f ms", raw.latency.percentileMs(0.5), raw.latency.percentileMs(0.99)))
            if let steal, let rawSteal {
                print(String(format: "  CPU steal          %.1f %% of the machine's time during the edge run, %.1f %% during the bare one",
                             steal, rawSteal))
            }
        }
    }
}

/// One GOP of VP8 test pattern encoded once, pushed by a host at its frame rate in a loop, from
/// its keyframe again whenever a subscriber asks for one.
struct EncodedClip: Sendable {
    let frames: [ExternalEncodedVideoFrame]
    let framesPerSecond: Int

    init(width: Int, height: Int, framesPerSecond: Int, bitrateKbps: Int, seconds: Int) throws {
        let count = framesPerSecond * seconds
        let encoder = try VideoEncoder(configuration: .init(
            codec: .vp8, width: width, height: height, framesPerSecond: framesPerSecond,
            targetBitrateKbps: bitrateKbps, keyframeInterval: count))
        var pattern = TestPatternSource(width: width, height: height)
        var frames: [ExternalEncodedVideoFrame] = []
        // Twice round, keeping the second GOP: the rate control has settled by then.
        for index in 0..<(2 * count) {
            let packets = try encoder.encode(pattern.nextFrame(), forceKeyframe: index == count)
            if index >= count { frames += packets.map { ExternalEncodedVideoFrame($0, width: width, height: height) } }
        }
        self.frames = frames
        self.framesPerSecond = framesPerSecond
    }

    /// A host engine with pushed video and a tone, and the 640x360 clip it pushes: one GOP encoded
    /// up front, over and over (the SDK's custom encoded video track), so live encoding does not
    /// take CPU from the edges and the receivers a benchmark measures.
    static func host(seeds: [String], bitrateKbps: Int, fps: Int) async throws -> (ShowroomEngine, EncodedClip) {
        var configuration = EngineConfiguration(entry: .seeds(seeds))
        configuration.media = LocalMediaConfiguration(videoBitrateKbps: bitrateKbps, keyframeInterval: .seconds(2))
        let host = try await ShowroomEngine(configuration: configuration)
        let clip = try EncodedClip(width: 640, height: 360, framesPerSecond: fps, bitrateKbps: bitrateKbps, seconds: 2)
        await host.setExternalEncodedVideoSource(true)
        await host.setLocalAudioSource(ToneMicrophone())
        return (host, clip)
    }

    /// Pushes the clip through `host` until cancelled, each frame at its due time.
    func push(through host: ShowroomEngine) async throws {
        let keyframeWanted = Atomic<Bool>(false)
        let watcher = Task {
            for await event in host.events {
                if case .keyframeRequested = event { keyframeWanted.store(true, ordering: .relaxed) }
            }
        }
        defer { watcher.cancel() }
        let clock = ContinuousClock()
        let period = Duration.seconds(1) / framesPerSecond
        var due = clock.now
        var index = 0
        while !Task.isCancelled {
            if keyframeWanted.exchange(false, ordering: .relaxed) { index = 0 }
            _ = try? await host.pushExternalEncodedVideoFrame(frames[index])
            index = (index + 1) % frames.count
            due += period
            try await clock.sleep(until: due)
        }
    }
}

/// What the subscribers received, counted on their loops.
final class DeliveryMeter: Sendable {
    struct Counts {
        var frames = 0
        var bytes = 0
        var gaps = 0
        var videoFrames = 0
        var videoBytes = 0
        var audioFrames = 0
        var audioBytes = 0
        /// Publish → receive latency per frame.
        var latency = LatencyHistogram()
        var lastSequence: [UInt64: UInt32] = [:]

        var meanVideoBytes: Int { videoFrames > 0 ? videoBytes / videoFrames : 0 }
        var meanAudioBytes: Int { audioFrames > 0 ? audioBytes / audioFrames : 0 }
    }

    private let counts = Mutex(Counts())

    func record(_ frame: RemoteMediaFrame, video: Bool) {
        let key = UInt64(frame.connection.uid) << 1 | (video ? 1 : 0)
        // Publish → receive: from the moment the publisher handed the encoded frame to its socket.
        let latency = frame.transitMicroseconds ?? frame.latencyMicroseconds
        counts.withLock { c in
            c.frames += 1
            c.bytes += frame.payload.count
            if video {
                c.videoFrames += 1
                c.videoBytes += frame.payload.count
            } else {
                c.audioFrames += 1
                c.audioBytes += frame.payload.count
            }
            if let last = c.lastSequence[key], frame.sequence > last &+ 1 { c.gaps += Int(frame.sequence - last - 1) }
            c.lastSequence[key] = frame.sequence
            c.latency.record(microseconds: latency)
        }
    }

    /// Starts counting afresh (the sequence positions are kept, so gaps across the reset count).
    func reset() {
        counts.withLock { c in
            let last = c.lastSequence
            c = Counts()
            c.lastSequence = last
        }
    }

    func snapshot() -> Counts { counts.withLock { $0 } }
}

/// Counts a subscriber's audio into the meter, without decoding.
private final class MeteredAudioSink: RemoteAudioSink {
    let meter: DeliveryMeter
    init(_ meter: DeliveryMeter) { self.meter = meter }
    func consume(_ frame: RemoteMediaFrame) { meter.record(frame, video: false) }
}
