import ArgumentParser
import Foundation
import OperatorTools
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization

/// `showroom-bench scale`: one host, N viewers of one channel over the cluster's edges, placed by
/// the coordinators (the channel's origin takes its share, relays the rest: start the cluster with
/// `cluster.sh up --relay-threshold T`). Prints, for the measured seconds: delivered MB/s and
/// dropped frames; publish → receive latency per edge (origin and relays); the latency a relay
/// hop adds, frame by frame; each edge's egress (payload bytes it sent) and CPU seconds per
/// delivered GB. It refuses a cluster that keeps every viewer on the origin (no relay hop to
/// measure) and stops with an error, not zeros, when a figure got no samples.
struct ScaleBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "One channel over several edges: delivery, latency per edge, the relay hop, origin egress, CPU per GB.",
        discussion: "Needs a cluster started with `deploy/cluster.sh up --relay-threshold N`, N below --subscribers: "
            + "a cluster that places every viewer on the channel's origin is refused.")

    @OptionGroup var target: BenchTarget

    @Option(help: "Viewers of the channel.")
    var subscribers = 600

    @Option(help: "Edges the cluster must have alive.")
    var edges = 3

    @Option(help: "Seconds measured (after a 3 s warm-up).")
    var seconds = 20.0

    @Option(name: .customLong("bitrate-kbps"), help: "The host's video bitrate in kbit/s.")
    var bitrateKbps = 300

    func validate() throws {
        guard (1...2000).contains(subscribers) else { throw ValidationError("--subscribers must be 1–2000") }
        guard (1...20).contains(edges) else { throw ValidationError("--edges must be 1–20") }
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
        try checkRelayThreshold()
    }

    /// The fix named whenever the relay hop cannot be measured.
    private var relayFix: String {
        "start the cluster with `deploy/cluster.sh up --relay-threshold N` (N below --subscribers, \(subscribers)) so that relays take viewers"
    }

    /// Refuses, before anything joins, a local cluster whose run directory (`--run-dir` or
    /// `SHOWROOM_RUN_DIR`; the processes' configuration file is its app.json) says that no viewer
    /// goes to a relay. Without a run directory the placement of the viewers is checked instead.
    private func checkRelayThreshold() throws {
        guard let directory = app.runDirectory ?? ProcessInfo.processInfo.environment["SHOWROOM_RUN_DIR"], !directory.isEmpty,
              let data = FileManager.default.contents(atPath: URL(fileURLWithPath: directory).appendingPathComponent("app.json").path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return }
        let threshold = object["relayThreshold"] as? Int ?? 0
        guard threshold == 0 || threshold >= subscribers else { return }
        throw ValidationError("the relay hop cannot be measured: the cluster in \(directory) "
            + (threshold == 0 ? "places no viewer on a relay (relay threshold 0, off)"
                              : "keeps \(threshold) viewers on the origin, and --subscribers is \(subscribers)")
            + "; \(relayFix)")
    }

    func run() async throws {
        let status = try await clusterStatus(seeds: seeds)
        let edgeMembers = status.members.filter { $0.isAlive(as: .edge) && !$0.adminEndpoint.isEmpty }
        guard edgeMembers.count >= edges else {
            throw ValidationError("the cluster has \(edgeMembers.count) alive edges; --edges asks for \(edges)")
        }
        var pids: [String: Int32] = [:]
        for member in edgeMembers { pids[member.id] = try await memberProcessID(member.id, seeds: seeds) }
        let admins = Dictionary(uniqueKeysWithValues: edgeMembers.map { ($0.id, $0.adminEndpoint) })

        let channel = "bench-scale-\(UInt32.random(in: 0 ... .max))"
        let hostUID: UInt32 = 1
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        var configuration = EngineConfiguration(entry: .seeds(clientSeeds))
        configuration.media = LocalMediaConfiguration(videoBitrateKbps: bitrateKbps, keyframeInterval: .seconds(2))
        let host = try await ShowroomEngine(configuration: configuration)
        let clip = try EncodedClip(width: 320, height: 180, framesPerSecond: 15, bitrateKbps: bitrateKbps, seconds: 2)
        await host.setExternalEncodedVideoSource(true)
        try await host.joinChannel(token: try app.token(channel: channel, uid: hostUID, role: .publisher), channel: channel,
                                   uid: hostUID, options: .broadcaster)
        let pushing = Task { try await clip.push(through: host) }
        defer { pushing.cancel() }
        let origin = await host.edgeID(of: ChannelConnection(channel: channel, uid: hostUID)) ?? "?"

        // The viewers, as apps join: placement by the coordinators, a sink per viewer.
        let loops = try (0..<4).map { try EngineLoop(name: "bench-scale-\($0)") }
        let meters = EdgeMeters()
        let hop = ForwardLatencyMeter()
        var viewers: [ShowroomEngine] = []
        progress("\(subscribers) viewers joining \(channel) (origin \(origin)) ...", json: json)
        for index in 0..<subscribers {
            let uid = 1000 + UInt32(index)
            let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)),
                                                  loop: loops[index % loops.count])
            let connection = ChannelConnection(channel: channel, uid: uid)
            try await viewer.setupRemoteVideo(uid: hostUID, connection: connection, sink: ClosureVideoSink { frame in
                meters.record(frame, hop: hop)
                return .received
            })
            try await viewer.joinChannel(token: try app.token(channel: channel, uid: uid, role: .subscriber), channel: channel,
                                         uid: uid, options: .audience)
            meters.place(uid, on: await viewer.edgeID(of: connection) ?? "?", origin: origin)
            viewers.append(viewer)
        }
        // Viewers all on the origin leave nothing to pair: refuse before measuring.
        guard admins.keys.contains(where: { $0 != origin && meters.viewers(on: $0) > 0 }) else {
            throw NothingMeasured("the relay hop cannot be measured: all \(subscribers) viewers were placed on the origin \(origin); \(relayFix)")
        }
        try await Task.sleep(for: .seconds(3))  // warm-up: every viewer past its first keyframe
        meters.reset()
        hop.reset()
        var bytesBefore: [String: Double] = [:]
        var cpuBefore: [String: Double] = [:]
        for (id, admin) in admins {
            bytesBefore[id] = try await adminMetric("showroom_edge_payload_bytes_delivered", at: admin)
            cpuBefore[id] = pids[id].flatMap(CPUTime.process) ?? 0
        }
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))  // the measured period
        let elapsed = start.duration(to: .now).seconds
        var egress: [String: Double] = [:]
        var cpu: [String: Double] = [:]
        for (id, admin) in admins {
            egress[id] = (try await adminMetric("showroom_edge_payload_bytes_delivered", at: admin)) - (bytesBefore[id] ?? 0)
            cpu[id] = (pids[id].flatMap(CPUTime.process) ?? 0) - (cpuBefore[id] ?? 0)
        }
        let measured = meters.snapshot()
        let added = hop.snapshot().added
        pushing.cancel()
        _ = await pushing.result
        for viewer in viewers { await viewer.shutdown() }
        await host.shutdown()
        for loop in loops { await loop.shutdown() }

        let delivered = measured.values.reduce(0) { $0 + $1.bytes }
        let dropped = measured.values.reduce(0) { $0 + $1.gaps }
        // An edge whose viewers received nothing, or no frame seen at both taps, has no figure to give.
        let silent = admins.keys.sorted().filter { meters.viewers(on: $0) > 0 && (measured[$0]?.latency.count ?? 0) == 0 }
        guard silent.isEmpty else {
            throw NothingMeasured("the viewers on \(silent.joined(separator: ", ")) received no frame in the \(seconds) s measured")
        }
        try added.requireSamples("the relay hop", "no frame reached both the origin's and a relay's tapped viewer in \(seconds) s")
        var perEdge: [String: Any] = [:]
        for id in admins.keys.sorted() {
            let counts = measured[id]
            let gigabytes = (egress[id] ?? 0) / 1e9
            // An edge without viewers (or egress) has no latency (or cost per GB): null, not 0.
            perEdge[id] = [
                "role": id == origin ? "origin" : "relay", "viewers": meters.viewers(on: id),
                "latency_ms_p50": figure(counts?.latency.percentileMsIfAny(0.5), 2),
                "latency_ms_p99": figure(counts?.latency.percentileMsIfAny(0.99), 2),
                "egress_mb_s": rounded((egress[id] ?? 0) / elapsed / 1e6, 2),
                "cpu_s": rounded(cpu[id] ?? 0, 2),
                "edge_cpu_s_per_gb": figure(gigabytes > 0 ? (cpu[id] ?? 0) / gigabytes : nil, 1),
            ] as [String: Any]
        }
        let figures: [String: Any] = [
            "benchmark": "scale", "subscribers": subscribers, "edges": admins.count, "seconds": seconds, "bitrate_kbps": bitrateKbps,
            "origin": origin, "delivered_mb_s": rounded(Double(delivered) / elapsed / 1e6, 2), "dropped_frames": dropped,
            "relay_added_latency_ms_p50": rounded(added.percentileMs(0.5), 2),
            "relay_added_latency_ms_p99": rounded(added.percentileMs(0.99), 2), "relay_paired_frames": added.count,
            "origin_egress_mb_s": rounded((egress[origin] ?? 0) / elapsed / 1e6, 2), "per_edge": perEdge,
        ]
        if json {
            try printJSON(figures)
        } else {
            print("scale: 1 host → \(subscribers) viewers over \(admins.count) edges (origin \(origin)), \(bitrateKbps) kbit/s, \(seconds) s")
            print(String(format: "  delivered %.2f MB/s, dropped frames %d; relay hop adds p50 %.2f ms, p99 %.2f ms (%d frames paired)",
                         Double(delivered) / elapsed / 1e6, dropped, added.percentileMs(0.5), added.percentileMs(0.99), added.count))
            for id in admins.keys.sorted() {
                let latency = measured[id]?.latency
                let latencyText = latency.map { $0.count > 0 } == true
                    ? String(format: "latency p50 %.2f ms p99 %.2f ms", latency!.percentileMs(0.5), latency!.percentileMs(0.99))
                    : "no latency (no viewers)"
                let perGB = (egress[id] ?? 0) > 0 ? String(format: "%.1f s per GB", (cpu[id] ?? 0) / ((egress[id] ?? 0) / 1e9)) : "no egress"
                print(String(format: "  %@ %@: %d viewers, %@, egress %.2f MB/s, CPU %.2f s (%@)",
                             id, id == origin ? "(origin)" : "(relay) ", meters.viewers(on: id), latencyText,
                             (egress[id] ?? 0) / elapsed / 1e6, cpu[id] ?? 0, perGB))
            }
        }
    }
}

/// What the viewers received, per edge they are on; one origin viewer and one relay viewer also
/// feed the relay-hop meter (the same frames paired by sequence).
final class EdgeMeters: Sendable {
    private struct State {
        var edgeOf: [UInt32: String] = [:]
        var meters: [String: DeliveryMeter] = [:]
        var originTap: UInt32?
        var relayTap: UInt32?
    }

    private let state = Mutex(State())

    func place(_ uid: UInt32, on edge: String, origin: String) {
        state.withLock { state in
            state.edgeOf[uid] = edge
            if state.meters[edge] == nil { state.meters[edge] = DeliveryMeter() }
            if edge == origin, state.originTap == nil { state.originTap = uid }
            if edge != origin, state.relayTap == nil { state.relayTap = uid }
        }
    }

    func record(_ frame: RemoteMediaFrame, hop: ForwardLatencyMeter) {
        let uid = frame.connection.uid
        let (meter, tap) = state.withLock { state -> (DeliveryMeter?, Bool?) in
            let tap: Bool? = uid == state.originTap ? false : (uid == state.relayTap ? true : nil)
            return (state.edgeOf[uid].flatMap { state.meters[$0] }, tap)
        }
        meter?.record(frame, video: true)
        if let tap { hop.record(frame, forwarded: tap) }
    }

    func reset() { for meter in state.withLock({ Array($0.meters.values) }) { meter.reset() } }

    func snapshot() -> [String: DeliveryMeter.Counts] { state.withLock { $0.meters.mapValues { $0.snapshot() } } }

    func viewers(on edge: String) -> Int { state.withLock { $0.edgeOf.values.filter { $0 == edge }.count } }
}
