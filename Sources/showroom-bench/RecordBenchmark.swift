import AdminEndpoint
import ArgumentParser
import Foundation
import OperatorTools
import ShowroomKit
import ShowroomTesting
import Synchronization

/// `showroom-bench record`: live channels, each a host pushing a pre-encoded VP8 clip and a tone
/// and one viewer, recorded through the server API in steps (a quarter, half, all of
/// `--channels`). Each step measures the edges' CPU first without recording (ingest and fan-out),
/// then while every channel is recorded; prints the CPU per recorded stream-hour beside the
/// fan-out's per stream-hour, and whether any recording lost a frame (a recording that cannot keep
/// up fails with its reason; its files say so). The edges must run on this machine (their CPU time
/// is read from /proc).
struct RecordBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Recording: edge CPU per recorded stream-hour beside fan-out, and the most streams recorded with no frame lost.")

    @OptionGroup var target: BenchTarget

    @Option(help: "A coordinator's server API (http://host:port); default: coordinator-1's api= in the run directory.")
    var api: String?

    @Option(help: "The customer key as id:secret (scope recording); default: the run directory's api-key.")
    var key: String?

    @Option(help: "Channels (one host and one viewer each) at the last step; the steps are a quarter, half and all of them.")
    var channels = 100

    @Option(help: "Seconds measured per step, with and without recording each.")
    var seconds = 20.0

    @Option(name: .customLong("bitrate-kbps"), help: "Each host's video bitrate in kbit/s.")
    var bitrateKbps = 500

    @Option(help: "Each host's frames per second.")
    var fps = 15

    func validate() throws {
        guard (4...400).contains(channels) else { throw ValidationError("--channels must be 4–400") }
        guard seconds >= 5, seconds <= 600 else { throw ValidationError("--seconds must be 5–600") }
        guard (50...5_000).contains(bitrateKbps) else { throw ValidationError("--bitrate-kbps must be 50–5000") }
    }

    /// The run directory of a cluster.sh cluster, if one is named.
    private var runDirectory: String? { app.runDirectory ?? ProcessInfo.processInfo.environment["SHOWROOM_RUN_DIR"] }

    private func apiAddress() throws -> String {
        if let api { return api }
        guard let directory = runDirectory,
              let ready = try? String(contentsOfFile: directory + "/coordinator-1.out", encoding: .utf8),
              let field = ready.split(whereSeparator: { $0 == " " || $0 == "\n" }).first(where: { $0.hasPrefix("api=") })
        else { throw ValidationError("give --api http://host:port, or --run-dir (or SHOWROOM_RUN_DIR) of a cluster.sh cluster") }
        let address = String(field.dropFirst(4))
        return address.hasPrefix("http") ? address : "http://" + address
    }

    /// The CPU seconds of every edge on this machine so far.
    private static func edgeCPU() -> Double {
        CPUTime.processes(named: "showroom-edge").values.reduce(0) { $0 + $1.seconds }
    }

    /// The CPU seconds of the edges' recording threads so far (the muxing and the writes; the
    /// copy into their queues is on the edge's loop, in ``edgeCPU()``).
    private static func recordingThreadCPU() -> Double {
        var total = 0.0
        for pid in CPUTime.processes(named: "showroom-edge").keys {
            for tid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
                guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8),
                      name.trimmingCharacters(in: .whitespacesAndNewlines) == "recording",
                      let seconds = ProcFS.cpuSeconds(statAt: "/proc/\(pid)/task/\(tid)/stat") else { continue }
                total += seconds
            }
        }
        return total
    }

    /// Sends a request as a business server would: a 429 is sent again after its `Retry-After`.
    private static func send(_ client: ServerAPIClient, _ method: String, _ path: String, json: Any? = nil) async throws -> APIResponse {
        for _ in 0..<10 {
            let response = try await client.send(method, path, json: json)
            guard response.status == 429 else { return response }
            let seconds = Int(response.headers["retry-after"] ?? response.headers["Retry-After"] ?? "1") ?? 1
            try await Task.sleep(for: .seconds(min(max(seconds, 1), 10)))
        }
        return try await client.send(method, path, json: json)
    }

    struct Step {
        var streams: Int
        var fanoutCPU: Double
        var recordingCPU: Double
        var recordingThreadCPU: Double
        var recordedUIDs: Int
        var failedFiles: Int
        var shortFiles: Int
        var files: Int
        var benchCPU: Double
    }

    func run() async throws {
        let client = ServerAPIClient(base: try apiAddress(), key: try customerKey(key, runDirectory: app.runDirectory))
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let clip = try EncodedClip(width: 640, height: 360, framesPerSecond: fps, bitrateKbps: bitrateKbps, seconds: 2)
        let loops = try [EngineLoop(name: "bench-record-1"), EngineLoop(name: "bench-record-2")]
        let prefix = "bench-rec-\(UInt32.random(in: 0 ... .max))"
        var hosts: [ShowroomEngine] = []
        var viewers: [ShowroomEngine] = []
        var pushes: [Task<Void, any Error>] = []
        var steps: [Step] = []
        defer { for push in pushes { push.cancel() } }

        for streams in [channels / 4, channels / 2, channels] {
            // More channels, each a host pushing the clip and a viewer (a real app's order: the sink
            // is set when the host is known, the tokens come from the app's credentials).
            while hosts.count < streams {
                let index = hosts.count
                let channel = "\(prefix)-\(index)"
                var configuration = EngineConfiguration(entry: .seeds(clientSeeds))
                configuration.media = LocalMediaConfiguration(videoBitrateKbps: bitrateKbps, keyframeInterval: .seconds(2))
                let host = try await ShowroomEngine(configuration: configuration, loop: loops[index % 2])
                await host.setExternalEncodedVideoSource(true)
                await host.setLocalAudioSource(ToneMicrophone())
                try await host.joinChannel(token: try app.token(channel: channel, uid: 1, role: .publisher), channel: channel, uid: 1,
                                           options: .broadcaster)
                pushes.append(Task { try await clip.push(through: host) })
                hosts.append(host)
                let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)), loop: loops[(index + 1) % 2])
                try await viewer.setupRemoteVideo(uid: 1, connection: ChannelConnection(channel: channel, uid: 2),
                                                  sink: ClosureVideoSink { _ in .received })
                try await viewer.joinChannel(token: try app.token(channel: channel, uid: 2, role: .subscriber), channel: channel, uid: 2,
                                             options: .audience)
                viewers.append(viewer)
            }
            progress("\(streams) channels live; \(seconds) s without recording, then \(seconds) s recorded", json: json)
            try await Task.sleep(for: .seconds(2))  // settle: every host's first GOP out
            let benchBefore = CPUTime.process(getpid()) ?? 0
            var before = Self.edgeCPU()
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            let fanout = Self.edgeCPU() - before

            var ids: [(channel: String, id: String)] = []
            for index in 0..<streams {
                let channel = "\(prefix)-\(index)"
                let started = try await Self.send(client, "POST", "/v1/channels/\(channel)/recordings", json: [String: Any]())
                guard started.status == 201, let id = try started.object()["id"] as? String else {
                    throw ValidationError("starting the recording of \(channel) failed: \(started.status) \(started.text)")
                }
                ids.append((channel, id))
            }
            try await Task.sleep(for: .seconds(2))  // each recording's first keyframe
            before = Self.edgeCPU()
            let threadBefore = Self.recordingThreadCPU()
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            let recording = Self.edgeCPU() - before
            let recordingThread = Self.recordingThreadCPU() - threadBefore
            let listed = try await client.send("GET", "/v1/recordings")
            let recordedUIDs = (try listed.object()["recordings"] as? [[String: Any]] ?? [])
                .filter { ($0["channel"] as? String)?.hasPrefix(prefix) == true }.count
            for (channel, id) in ids { _ = try await Self.send(client, "POST", "/v1/channels/\(channel)/recordings/\(id)/stop") }
            // The files' reports reach the coordinators with the edges' next activities.
            var failed = 0, short = 0, files = 0
            let deadline = ContinuousClock.now + .seconds(15)
            for (channel, id) in ids {
                var reported: [[String: Any]] = []
                while reported.isEmpty, ContinuousClock.now < deadline {
                    let got = try await Self.send(client, "GET", "/v1/channels/\(channel)/recordings/\(id)")
                    reported = try got.object()["files"] as? [[String: Any]] ?? []
                    if reported.isEmpty { try await Task.sleep(for: .milliseconds(100)) }  // poll period: no event reaches a bench
                }
                files += reported.count
                failed += reported.filter { !($0["failure"] as? String ?? "").isEmpty }.count
                let covered = reported.reduce(Int64(0)) { $0 + ($1["duration_ms"] as? Int64 ?? Int64($1["duration_ms"] as? Int ?? 0)) }
                if reported.isEmpty || Double(covered) < (seconds + 2 - 1.5) * 1000 { short += 1 }
            }
            steps.append(Step(streams: streams, fanoutCPU: fanout, recordingCPU: recording, recordingThreadCPU: recordingThread,
                              recordedUIDs: recordedUIDs,
                              failedFiles: failed, shortFiles: short, files: files,
                              benchCPU: (CPUTime.process(getpid()) ?? 0) - benchBefore))
        }
        for push in pushes { push.cancel() }
        for engine in hosts + viewers {
            try? await engine.leaveChannel()
            await engine.shutdown()
        }
        for loop in loops { await loop.shutdown() }
        await client.shutdown()
        report(steps)
    }

    private func report(_ steps: [Step]) {
        let hours = seconds / 3600
        func perStreamHour(_ cpu: Double, _ streams: Int) -> Double { cpu / (Double(streams) * hours) }
        let clean = steps.filter { $0.failedFiles == 0 && $0.shortFiles == 0 && $0.recordedUIDs == $0.streams }
        let most = clean.map(\.streams).max() ?? 0
        if json {
            try? printJSON([
                "benchmark": "record", "seconds": seconds, "bitrate_kbps": bitrateKbps, "fps": fps,
                "most_streams_recorded_without_loss": most,
                "steps": steps.map { step -> [String: Any] in
                    let extra = max(0, step.recordingCPU - step.fanoutCPU)
                    return [
                        "streams": step.streams, "recorded": step.recordedUIDs, "files": step.files,
                        "files_failed": step.failedFiles, "recordings_short": step.shortFiles,
                        "edge_cpu_s_fanout": rounded(step.fanoutCPU, 2), "edge_cpu_s_recording": rounded(step.recordingCPU, 2),
                        "fanout_cpu_s_per_stream_hour": rounded(perStreamHour(step.fanoutCPU, step.streams), 1),
                        "recording_cpu_s_per_stream_hour": rounded(perStreamHour(extra, step.streams), 1),
                        "recording_thread_cpu_s_per_stream_hour": rounded(perStreamHour(step.recordingThreadCPU, step.streams), 1),
                        "bench_cpu_s": rounded(step.benchCPU, 2),
                    ]
                },
            ])
            return
        }
        print("recording: \(bitrateKbps) kbit/s VP8 640x360 at \(fps) fps + Opus per channel, one viewer each, \(seconds) s per phase")
        print("  streams  recorded  files  failed  short   edge CPU s per stream-hour: fan-out  + recording (its thread)   bench CPU s")
        for step in steps {
            let extra = max(0, step.recordingCPU - step.fanoutCPU)
            print(String(format: "  %7d  %8d  %5d  %6d  %5d   %32.1f  %11.1f %8.1f   %11.1f", step.streams, step.recordedUIDs, step.files,
                         step.failedFiles, step.shortFiles, perStreamHour(step.fanoutCPU, step.streams),
                         perStreamHour(extra, step.streams), perStreamHour(step.recordingThreadCPU, step.streams), step.benchCPU))
        }
        print("  most streams recorded at once with no frame lost: \(most)")
    }
}
