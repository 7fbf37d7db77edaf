import ArgumentParser
import Foundation
import OperatorTools
import ShowroomKit
import Synchronization

/// `showroom-bench switch`: instant switch. Hosts are live in `--rooms` rooms; `--viewers` viewers
/// each swipe `--swipes` times down the room list, and the time from each swipe to the new room's
/// first decoded video frame is measured:
/// - `cold`: the app leaves the room and joins the next (the seeds' order without a loader: the
///   view is set up when the host is announced);
/// - `preload`: a ``VideoLoader`` feed that only preloads the rooms around (their edges known and
///   sessions open), so a swipe is a join without placement or handshake;
/// - `prejoin`: a ``VideoLoader`` feed (the room on screen plus one prejoined on each side), so a
///   swipe is a subscription on a channel joined already.
///
/// It also prints the CPU spent over the swipes: this process's (its synthetic hosts' encoders and
/// viewers' decoders share the machine with the cluster), each `showroom-…` executable's on this
/// machine, the machine's busy share and what the hypervisor stole, so a latency tail can be told
/// apart from a machine that was full.
struct SwitchBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "switch",
        abstract: "Swipe → first decoded video frame of the next live room: cold, preloaded or prejoined by the video loader.")

    @OptionGroup var target: BenchTarget

    @Option(help: "Live rooms (one host each, 160×120 VP8 at 15 fps, 2 s GOP).")
    var rooms = 30

    @Option(help: "Viewers swiping at the same time.")
    var viewers = 10

    @Option(help: "Swipes per viewer.")
    var swipes = 20

    @Option(help: "cold (leave, join the next room), preload (the video loader's feed without prejoin: rooms around preloaded, the next one joined on the swipe) or prejoin (the feed: one room on each side prejoined).")
    var mode = "prejoin"

    func validate() throws {
        guard (2...200).contains(rooms) else { throw ValidationError("--rooms must be 2–200") }
        guard (1...100).contains(viewers) else { throw ValidationError("--viewers must be 1–100") }
        guard (1...1000).contains(swipes) else { throw ValidationError("--swipes must be 1–1000") }
        guard ["cold", "preload", "prejoin"].contains(mode) else { throw ValidationError("--mode is cold, preload or prejoin") }
    }

    func run() async throws {
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let prefix = "bench-switch-\(UInt32.random(in: 0 ... .max))"
        let hostLoop = try EngineLoop(name: "bench-switch-hosts")
        var hosts: [ShowroomEngine] = []
        var anchors: [AnchorInfo] = []
        for n in 0..<rooms {
            let channel = "\(prefix)-\(n)", uid = UInt32(1_000 + n)
            // A configuration per engine: each carries its own client id (one id is one client).
            var configuration = EngineConfiguration(entry: .seeds(clientSeeds))
            configuration.media = LocalMediaConfiguration(videoBitrateKbps: 200, keyframeInterval: .seconds(2))
            let host = try await ShowroomEngine(configuration: configuration, loop: hostLoop)
            await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            try await host.joinChannel(token: try app.token(channel: channel, uid: uid, role: .publisher), channel: channel,
                                       uid: uid, options: .broadcaster)
            hosts.append(host)
            anchors.append(AnchorInfo(channel: channel, uid: uid, token: ""))
        }
        progress("\(rooms) hosts live; \(viewers) viewers swipe \(swipes) times each (\(mode))", json: json)
        let viewerLoops = try (0..<2).map { try EngineLoop(name: "bench-switch-viewers-\($0)") }
        // The CPU spent while swiping: this process's is its synthetic clients' (the hosts' VP8
        // encoders and the viewers' decoders), to tell their load apart from the switch path's.
        let cpuBefore = CPUSpent.Snapshot.now()
        let swipesBegan = ContinuousClock.now
        let outcomes = try await withThrowingTaskGroup(of: (times: [Double], failures: Int, held: Int).self) { group in
            for viewer in 0..<viewers {
                let uid = UInt32(500_000 + viewer)
                let tokens = try anchors.map { AnchorInfo(channel: $0.channel, uid: $0.uid, token: try app.token(channel: $0.channel, uid: uid, role: .subscriber)) }
                let loop = viewerLoops[viewer % viewerLoops.count]
                let (mode, swipes, start) = (self.mode, self.swipes, viewer * rooms / max(1, viewers))
                group.addTask {
                    mode == "cold"
                        ? await Self.coldViewer(uid: uid, rooms: tokens, start: start, swipes: swipes, seeds: clientSeeds, loop: loop)
                        : await Self.loaderViewer(uid: uid, rooms: tokens, start: start, swipes: swipes, seeds: clientSeeds, loop: loop,
                                                  prejoinCount: mode == "prejoin" ? 1 : 0)
                }
            }
            var all: [(times: [Double], failures: Int, held: Int)] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        var spent = CPUSpent()
        spent.add(since: cpuBefore)
        let swipeSeconds = swipesBegan.duration(to: .now).seconds
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        /// A share of the machine's CPU capacity over the swipes, in percent.
        func share(_ seconds: Double) -> Double { seconds * 100 / max(swipeSeconds * cores, 1e-9) }
        for host in hosts {
            try? await host.leaveChannel()
            await host.shutdown()
        }
        for loop in viewerLoops + [hostLoop] { await loop.shutdown() }
        let latency = LatencyHistogram(milliseconds: outcomes.flatMap(\.times))
        let failures = outcomes.map(\.failures).reduce(0, +)
        let held = outcomes.map(\.held).max() ?? 0
        try latency.requireSamples("swipe → first frame", "all \(failures) swipes failed (no first frame within 5 s)")
        if json {
            try printJSON([
                "benchmark": "switch", "mode": mode, "rooms": rooms, "viewers": viewers, "swipes": swipes,
                "switch_ms_p50": rounded(latency.percentileMs(0.5)), "switch_ms_p95": rounded(latency.percentileMs(0.95)),
                "switch_ms_p99": rounded(latency.percentileMs(0.99)), "switch_ms_max": rounded(latency.maxMs),
                "failures": failures, "channels_held_max": held,
                "swipe_seconds": rounded(swipeSeconds), "bench_cpu_s": rounded(spent.ownSeconds, 2),
                "bench_cpu_percent_of_machine": rounded(share(spent.ownSeconds)), "machine_busy_percent": figure(spent.busyPercent),
                "cluster_cpu_s": spent.byExecutable.mapValues { rounded($0, 2) }, "steal_percent": rounded(spent.stealPercent),
            ])
        } else {
            print("swipe → first decoded frame of the next room (\(mode)), \(latency.count) swipes, \(viewers) viewers, \(rooms) rooms")
            print(String(format: "  p50 %6.1f ms   p95 %6.1f ms   p99 %6.1f ms   max %6.1f ms", latency.percentileMs(0.5),
                         latency.percentileMs(0.95), latency.percentileMs(0.99), latency.maxMs))
            print("  failures \(failures)   channels held per viewer at most \(held)")
            print(String(format: "  CPU over the %.1f s of swipes (%d cores): this process (%d hosts encoding, %d viewers decoding) %.1f s = %.0f%% of the machine; machine busy %@; stolen %.1f%%",
                         swipeSeconds, Int(cores), rooms, viewers, spent.ownSeconds, share(spent.ownSeconds), spent.busyPercent.map { String(format: "%.0f%%", $0) } ?? "not measured",
                         spent.stealPercent))
            // Every showroom-… process on the machine (the cluster's, and any other run's).
            print("    showroom-… processes on this machine: " + spent.byExecutable.sorted { $0.key < $1.key }.map {
                String(format: "%@ %.1f s (%.0f%%)", $0.key, $0.value, share($0.value))
            }.joined(separator: ", "))
        }
    }

    /// A viewer on a video loader feed (with `prejoinCount` rooms prejoined on each side; 0: only
    /// preloaded): each swipe moves the feed; the time to the room's first frame report is
    /// measured.
    private static func loaderViewer(uid: UInt32, rooms: [AnchorInfo], start: Int, swipes: Int, seeds: [String],
                                     loop: EngineLoop, prejoinCount: Int) async -> (times: [Double], failures: Int, held: Int) {
        guard let engine = try? await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop) else {
            return ([], swipes, 0)
        }
        let loader = VideoLoader(engine: engine, localUID: uid, prejoinCount: prejoinCount,
                                 videoSink: { _ in DecodingVideoSink(readFrameCounters: false) })
        let reports = AsyncStream<VideoLoaderEvent>.makeStream(bufferingPolicy: .bufferingNewest(100))
        let forward = Task { for await event in loader.events { reports.continuation.yield(event) } }
        var iterator = reports.stream.makeAsyncIterator()
        var times: [Double] = [], failures = 0, held = 0
        // The first room is opened before the swipes start, as a feed opens on its first room.
        loader.swipe(to: start % rooms.count, in: rooms)
        await loader.settle()
        _ = await Self.nextFirstFrame(of: rooms[start % rooms.count].channel, in: &iterator, reports.continuation)
        for swipe in 1...swipes {
            let room = rooms[(start + swipe) % rooms.count]
            let began = ContinuousClock.now
            loader.swipe(to: (start + swipe) % rooms.count, in: rooms)
            if await Self.nextFirstFrame(of: room.channel, in: &iterator, reports.continuation) {
                times.append((ContinuousClock.now - began).seconds * 1000)
            } else {
                failures += 1
            }
            await loader.settle()
            held = max(held, loader.heldChannels.count)
        }
        loader.cleanCache()
        await loader.settle()
        forward.cancel()
        await engine.shutdown()
        return (times, failures, held)
    }

    /// Waits (at most 5 s) for the first frame report of `channel`; false on an error or the deadline.
    private static func nextFirstFrame(of channel: String, in iterator: inout AsyncStream<VideoLoaderEvent>.Iterator,
                                       _ reports: AsyncStream<VideoLoaderEvent>.Continuation) async -> Bool {
        let deadline = Task {
            try await Task.sleep(for: .seconds(5))
            reports.yield(.error(channel: channel, .deadlineExceeded("no first frame within 5 s")))
        }
        defer { deadline.cancel() }
        while let event = await iterator.next() {
            switch event {
            case .firstFrame(channel, _, _, _): return true
            case .error(channel, _): return false
            default: continue
            }
        }
        return false
    }

    /// A viewer without a loader: each swipe leaves the room and joins the next, setting the
    /// host's view up when the host is announced.
    private static func coldViewer(uid: UInt32, rooms: [AnchorInfo], start: Int, swipes: Int, seeds: [String],
                                   loop: EngineLoop) async -> (times: [Double], failures: Int, held: Int) {
        guard let engine = try? await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop) else {
            return ([], swipes, 0)
        }
        var times: [Double] = [], failures = 0
        for swipe in 0...swipes {
            let room = rooms[(start + swipe) % rooms.count]
            let connection = ChannelConnection(channel: room.channel, uid: uid)
            let began = ContinuousClock.now
            let events = engine.events(bufferingNewest: 100)  // subscribed before the join
            let waiter = Task { () -> Bool in
                for await event in events {
                    switch event {
                    case .userJoined(connection, room.uid):
                        try? await engine.setupRemoteVideo(uid: room.uid, connection: connection, sink: DecodingVideoSink(readFrameCounters: false))
                    case .firstRemoteVideoFrameDecoded(connection, room.uid, _, _, _): return true
                    default: break
                    }
                }
                return false
            }
            let deadline = Task {
                try await Task.sleep(for: .seconds(5))
                waiter.cancel()
            }
            if swipe > 0 { try? await engine.leaveChannel() }
            let joined = (try? await engine.joinChannel(token: room.token, channel: room.channel, uid: uid, options: .audience)) != nil
            let decoded = joined ? await waiter.value : false
            deadline.cancel()
            waiter.cancel()
            // The opening room is not a swipe.
            if swipe > 0 {
                if decoded { times.append((ContinuousClock.now - began).seconds * 1000) } else { failures += 1 }
            }
        }
        try? await engine.leaveChannel()
        await engine.shutdown()
        return (times, failures, 1)
    }
}
