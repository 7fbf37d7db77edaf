import ArgumentParser
import ClusterSimulation
import Foundation

/// `showroom-bench relay-scale`: one channel over many edges with a crowd of viewers, on the
/// simulated network and clock (``RelayScenario``): the origin's egress, how long placement takes
/// to settle, and who notices when a relay edge dies. The same flags print the same figures
/// (besides wall time and memory).
struct RelayScaleBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay-scale",
        abstract: "One channel, many edges and viewers, simulated: origin egress, placement settling, a relay's death.")

    @Option(help: "Edges (the origin among them).")
    var edges = 100

    @Option(help: "Viewers of the channel.")
    var viewers = 100_000

    @Option(help: "Room-coordinators.")
    var coordinators = 3

    @Option(help: "Viewers per edge before the next edge relays (default: viewers / edges).")
    var relayThreshold: Int?

    @Option(help: "Video frames per second.")
    var fps = 1

    @Option(help: "Over how many seconds the viewers join.")
    var joinSeconds = 10

    @Option(help: "The seed every random number comes from.")
    var seed: UInt64 = 1

    @Flag(help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard (2...1_000).contains(edges) else { throw ValidationError("--edges must be 2–1000") }
        guard (1...1_000_000).contains(viewers) else { throw ValidationError("--viewers must be 1–1000000") }
        guard (1...9).contains(coordinators) else { throw ValidationError("--coordinators must be 1–9") }
        guard (1...30).contains(fps) else { throw ValidationError("--fps must be 1–30") }
        guard (1...600).contains(joinSeconds) else { throw ValidationError("--join-seconds must be 1–600") }
        if let relayThreshold, !(1...1_000_000).contains(relayThreshold) {
            throw ValidationError("--relay-threshold must be 1–1000000")
        }
    }

    func run() throws {
        SimulateBenchmark.ensureDeterministicHashing()
        var settings = RelayScenario.Settings()
        settings.seed = seed
        settings.edges = edges
        settings.viewers = viewers
        settings.coordinators = coordinators
        settings.relayThreshold = relayThreshold
        settings.fps = fps
        settings.joinWindowMs = joinSeconds * 1000
        let wallStart = ContinuousClock.now
        let outcome = try RelayScenario(settings: settings).run()
        let wall = ContinuousClock.now - wallStart
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let peakRSS = Self.peakResidentMiB()
        let o = outcome
        if json {
            try printJSON([
                "edges": edges, "viewers": viewers, "coordinators": coordinators, "seed": seed, "fps": fps,
                "relay_threshold": settings.threshold, "origin": o.origin, "hosting_edges": o.hostingEdges,
                "relays": o.relays, "origin_viewers": o.originViewers, "frames_published": o.framesPublished,
                "origin_link_frames_per_s": rounded(o.originLinkFramesPerSecond),
                "origin_link_bytes_per_s": rounded(o.originLinkBytesPerSecond),
                "copies_per_frame": rounded(o.copiesPerFrame, 2),
                "origin_local_frames_per_s": rounded(o.originLocalFramesPerSecond),
                "origin_local_bytes_per_s": rounded(o.originLocalBytesPerSecond),
                "settled_ms": o.settledMs.map { Int($0) } ?? -1,
                "every_edge_hosting_ms": o.everyEdgeHostingMs.map { Int($0) } ?? -1,
                "first_frame_ms_p50": o.firstFrameMs.p50, "first_frame_ms_p99": o.firstFrameMs.p99,
                "first_frame_ms_max": o.firstFrameMs.max,
                "killed_edge": o.killedEdge, "killed_viewers": o.killedViewers,
                "killed_viewers_missing_frames": o.killedViewersMissingFrames,
                "noticed_elsewhere": o.noticedElsewhere, "not_receiving_at_kill": o.notReceivingAtKill, "back": o.back,
                "rejoin_ms_p50": o.rejoinMs.p50, "rejoin_ms_p99": o.rejoinMs.p99, "rejoin_ms_max": o.rejoinMs.max,
                "failover_goal_ms": settings.failoverGoalMs, "back_within_goal": o.backWithinGoal,
                "events": o.events, "simulated_s": rounded(Double(o.simulatedMs) / 1000), "digest": o.digest,
                "wall_s": rounded(wallSeconds, 2), "peak_rss_mib": peakRSS,
            ])
        } else {
            print("\(edges) edges, \(viewers) viewers, \(coordinators) coordinators, \(fps) fps, relay threshold \(settings.threshold), seed \(seed)")
            print("placement: origin \(o.origin), \(o.hostingEdges) edges hosting (\(o.relays) relays), \(o.originViewers) viewers on the origin")
            print("  settled \(o.settledMs.map { "\($0) ms" } ?? "never") after the first join; every edge hosting after "
                  + "\(o.everyEdgeHostingMs.map { "\($0) ms" } ?? "never"); join to first frame p50 \(o.firstFrameMs.p50) ms, "
                  + "p99 \(o.firstFrameMs.p99) ms, max \(o.firstFrameMs.max) ms")
            print(String(format: "origin egress to relays: %.1f frames/s, %.0f bytes/s, %.2f copies per frame (%d frames published)",
                         o.originLinkFramesPerSecond, o.originLinkBytesPerSecond, o.copiesPerFrame, o.framesPublished))
            print(String(format: "origin egress to its own viewers: %.1f frames/s, %.0f bytes/s",
                         o.originLocalFramesPerSecond, o.originLocalBytesPerSecond))
            print("relay \(o.killedEdge) killed: its \(o.killedViewers) viewers rejoined, \(o.back) back "
                  + "(\(o.killedViewersMissingFrames) missed a frame); \(o.noticedElsewhere) viewers elsewhere saw a gap "
                  + "(\(o.notReceivingAtKill) others were not receiving yet)")
            print("  back after p50 \(o.rejoinMs.p50) ms, p99 \(o.rejoinMs.p99) ms, max \(o.rejoinMs.max) ms; "
                  + "\(o.backWithinGoal) of \(o.killedViewers) within the \(settings.failoverGoalMs) ms goal")
            print("events=\(o.events) simulated=\(Double(o.simulatedMs) / 1000)s digest=\(o.digest)")
            print(String(format: "wall %.1f s, peak RSS %d MiB", wallSeconds, peakRSS))
        }
    }

    /// The process's peak resident set (VmHWM), in MiB; 0 where /proc is not there.
    static func peakResidentMiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kib / 1024
    }
}
