import OperatorTools
import ArgumentParser
import Edge
import Foundation
import ShowroomKit
import ShowroomWire

/// `showroom-bench join`: instant open. A host is live; audience clients join one after
/// another, each a fresh engine (placement, session, join), and the time from the join call to
/// the first decoded video frame is measured. With the edge's GOP cache it does not depend on
/// where in the GOP the join lands.
struct JoinBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join → first decoded video frame, for audience members joining a live host.")

    @OptionGroup var target: BenchTarget

    @Option(help: "Audience members joining one after another.")
    var audiences = 50

    @Option(name: .customLong("gop-ms"), help: "The host's keyframe interval in milliseconds.")
    var gopMs = 2000

    @Option(help: "The host's frames per second.")
    var fps = 30

    @Option(name: .customLong("bitrate-kbps"), help: "The host's video bitrate in kbit/s.")
    var bitrateKbps = 500

    @Option(help: "When each audience member sets its video sink: before-join (before joining), after-joined (when userJoined names the host, the seeds' order), or both (each order in turn).")
    var sink = "both"

    func validate() throws {
        guard (1...2000).contains(audiences) else { throw ValidationError("--audiences must be 1–2000") }
        guard (100...20_000).contains(gopMs) else { throw ValidationError("--gop-ms must be 100–20000") }
        guard (1...60).contains(fps) else { throw ValidationError("--fps must be 1–60") }
        guard ["before-join", "after-joined", "both"].contains(sink) else {
            throw ValidationError("--sink is before-join, after-joined or both")
        }
    }

    func run() async throws {
        let channel = "bench-join-\(UInt32.random(in: 0 ... .max))"
        let hostUID: UInt32 = 1
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        var configuration = EngineConfiguration(entry: .seeds(clientSeeds))
        configuration.media = LocalMediaConfiguration(videoBitrateKbps: bitrateKbps, keyframeInterval: .milliseconds(gopMs))
        let host = try await ShowroomEngine(configuration: configuration)
        await host.setLocalVideoSource(TestPatternCamera(width: 320, height: 240, framesPerSecond: fps))
        await host.setLocalAudioSource(ToneMicrophone())
        try await host.joinChannel(
            token: try app.token(channel: channel, uid: hostUID, role: .publisher), channel: channel, uid: hostUID,
            options: .broadcaster)
        let audienceLoop = try EngineLoop(name: "bench-audience")
        progress("host live in \(channel); \(audiences) audience members join one after another", json: json)

        // The first join warms the path up (placement cache, the edge's channel state); not counted.
        let orders = sink == "both" ? ["before-join", "after-joined"] : [sink]
        var figures: [String: Any] = ["benchmark": "join", "audiences": audiences, "gop_ms": gopMs, "fps": fps]
        for order in orders {
            var times: [Double] = []
            var failures = 0
            var failureReasons: [String: Int] = [:]
            for i in 0...audiences {
                // Spread the joins over the GOP, so some land just after a keyframe and some just before.
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...max(1, gopMs / 10))))
                let uid = 1000 + UInt32(i) + (order == "after-joined" ? 5000 : 0)
                let result: Result<Double, ShowroomError>
                do {
                    let token = try app.token(channel: channel, uid: uid, role: .subscriber)
                    result = await joinToFirstFrame(channel: channel, hostUID: hostUID, uid: uid, token: token, seeds: clientSeeds,
                                                    loop: audienceLoop, sinkAfterJoined: order == "after-joined").result
                } catch {
                    result = .failure(.internal("cannot mint a token: \(error)"))
                }
                guard i > 0 else { continue }
                switch result {
                case .success(let elapsed): times.append(elapsed)
                case .failure(let error):
                    failures += 1
                    failureReasons["E\(error.code.rawValue)", default: 0] += 1
                }
            }
            let latency = LatencyHistogram(milliseconds: times)
            try latency.requireSamples("join → first frame (sink \(order))",
                                       "all \(audiences) audience members failed \(failureReasons)")
            let key = order == "after-joined" ? "after_joined_" : ""
            figures["\(key)first_frame_ms_p50"] = rounded(latency.percentileMs(0.5))
            figures["\(key)first_frame_ms_p95"] = rounded(latency.percentileMs(0.95))
            figures["\(key)first_frame_ms_p99"] = rounded(latency.percentileMs(0.99))
            figures["\(key)first_frame_ms_max"] = rounded(latency.maxMs)
            figures["\(key)failures"] = failures
            figures["\(key)failure_codes"] = failureReasons
            if !json {
                print("join → first decoded video frame, \(times.count) audience members, GOP \(gopMs) ms at \(fps) fps, sink set \(order == "after-joined" ? "after userJoined (the seeds' order)" : "before joining")")
                print(String(format: "  p50 %6.1f ms   p95 %6.1f ms   p99 %6.1f ms   max %6.1f ms",
                             latency.percentileMs(0.5), latency.percentileMs(0.95), latency.percentileMs(0.99), latency.maxMs))
                print("  failures \(failures)\(failureReasons.isEmpty ? "" : " \(failureReasons)")")
            }
        }
        try? await host.leaveChannel()
        await host.shutdown()
        await audienceLoop.shutdown()
        if json { try printJSON(figures) }
    }
}

/// What one audience member's join measured: the join → first decoded frame time in
/// milliseconds (or why there was none), and its video sink's decode errors until it left.
struct JoinOutcome: Sendable {
    let result: Result<Double, ShowroomError>
    let decodeErrors: Int
}

/// One audience member: a new engine joins `channel` with `token` (minted before, as a business
/// server's is), waits for the host's first decoded frame (at most 5 s), goes on watching for
/// `watching`, leaves and shuts down. The video sink is set before joining, or when `userJoined`
/// names the host (the seeds' order) with `sinkAfterJoined`. What `showroom-bench join` and `web`
/// measure the Swift SDK with.
func joinToFirstFrame(channel: String, hostUID: UInt32, uid: UInt32, token: String, seeds clientSeeds: [String],
                      loop: EngineLoop, sinkAfterJoined: Bool, watching: Duration = .zero) async -> JoinOutcome {
    let engine: ShowroomEngine
    do {
        engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)), loop: loop)
    } catch {
        return JoinOutcome(result: .failure(error), decodeErrors: 0)
    }
    let connection = ChannelConnection(channel: channel, uid: uid)
    let sink = DecodingVideoSink(readFrameCounters: false)
    let started = ContinuousClock.now
    let waiter = Task { () -> Duration? in
        for await event in engine.events {
            switch event {
            case .userJoined(_, hostUID) where sinkAfterJoined:
                // As the seeds' apps do: the view is set up when the host is announced.
                try? await engine.setupRemoteVideo(uid: hostUID, connection: connection, sink: sink)
            case .firstRemoteVideoFrameDecoded(_, hostUID, _, _, _):
                return ContinuousClock.now - started  // from the join call, whichever the order
            default: break
            }
        }
        return nil  // the stream ended, or the wait was cancelled at its deadline
    }
    let deadline = Task {
        try await Task.sleep(for: .seconds(5))
        waiter.cancel()
    }
    let result: Result<Double, ShowroomError>
    do throws(ShowroomError) {
        if !sinkAfterJoined {
            try await engine.setupRemoteVideo(uid: hostUID, connection: connection, sink: sink)
        }
        try await engine.joinChannel(token: token, channel: channel, uid: uid, options: .audience)
        if let elapsed = await waiter.value {
            result = .success(elapsed.seconds * 1000)
            if watching > .zero { try? await Task.sleep(for: watching) }
        } else {
            result = .failure(.deadlineExceeded("no decoded frame within 5 s of joining"))
        }
        try? await engine.leaveChannel()
    } catch {
        result = .failure(error)
    }
    deadline.cancel()
    waiter.cancel()
    await engine.shutdown()
    return JoinOutcome(result: result, decodeErrors: sink.statistics.decodeErrors)
}
