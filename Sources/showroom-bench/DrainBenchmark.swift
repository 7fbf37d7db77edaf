import ArgumentParser
import Foundation
import OperatorTools
import ShowroomKit
import ShowroomTesting

/// `showroom-bench drain`: a host and its audience; the channel's origin (or with `--drain relay`
/// a relay pulling it) is sent SIGTERM and drains, make before break: its clients join elsewhere
/// first and leave it after. Measured: each audience member's longest gap in pictures from the
/// SIGTERM on (`gap_ms_max`: one frame interval when nothing was lost), the connections that
/// moved, the audience members that saw the host go offline or went reconnecting (both 0 when the
/// drain is seamless), and the time until the edge exited.
///
/// It signals a process of the cluster it is pointed at (found by its NODE_INFO pid), so it runs
/// on the cluster's machine, against a cluster with at least two edges.
struct DrainBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain",
        abstract: "SIGTERM the edge hosting a live channel; its audience's longest picture gap while it drains (stops an edge!).")

    @OptionGroup var options: LiveAudienceOptions

    @Option(help: "The edge drained: origin (where the host is) or relay (one pulling the channel: start the cluster with --relay-threshold below --audiences).")
    var drain = "origin"

    func validate() throws {
        guard ["origin", "relay"].contains(drain) else { throw ValidationError("--drain is origin or relay") }
    }

    func run() async throws {
        let show = try await options.start("drain")
        let (seeds, audiences, timeout, json) = (options.seeds, options.audiences, options.timeout, options.json)
        let victim = try show.edge(drain)
        let pid = try await memberProcessID(victim, seeds: seeds)
        progress("SIGTERM \(victim) (pid \(pid), the \(drain) of \(show.channel))", json: json)
        let began = ContinuousClock.now
        guard Glibc.kill(pid_t(pid), SIGTERM) == 0 else {
            throw ShowroomError.unavailable("cannot signal pid \(pid) of \(victim): is the cluster on this machine?")
        }
        var exited: Duration?
        try? await eventually("the edge exits", timeout: .milliseconds(Int(timeout * 1000))) {
            guard Glibc.kill(pid_t(pid), 0) != 0 else { return false }
            exited = began.duration(to: .now)
            return true
        }
        // Everyone decodes after the exit: nobody was left behind.
        let settled = ContinuousClock.now
        try? await eventually("every audience member decodes after the drain", timeout: .seconds(5)) {
            show.pictures.allSatisfy { $0.first(after: settled) != nil }
        }
        // A gap only means something for a member that decoded after the drain (longestGap is 0
        // for one that decoded nothing): nil for the others, who are counted as failures.
        let gaps = show.pictures.map { $0.first(after: settled) != nil ? $0.longestGap(after: began).seconds * 1000 : nil }
        let onVictim = (0..<audiences).filter { show.edgeOf[$0] == victim }
        var moved = 0
        for engine in show.engines { moved += await engine.statistics().moves }
        let sawOffline = show.logs.filter { log in log.all.contains { if case .userOffline = $0 { true } else { false } } }.count
        let reconnected = show.logs.filter { log in
            log.all.contains { if case .connectionStateChanged(_, .reconnecting, _) = $0 { true } else { false } }
        }.count
        let failures = show.pictures.filter { $0.first(after: settled) == nil }.count
        await show.shutdown()

        let drainMs = exited.map { $0.seconds * 1000 }
        let gapMax = gaps.compactMap { $0 }.max()
        let movedGapMax = onVictim.compactMap { gaps[$0] }.max()
        guard let gapMax else {
            throw NothingMeasured("no samples of the gap in pictures: none of the \(audiences) audience members decoded after the drain")
        }
        if json {
            try printJSON([
                "benchmark": "drain", "audiences": audiences, "drained_edge": victim, "drained": drain,
                "on_drained_edge": onVictim.count, "moved": moved, "gap_ms_max": rounded(gapMax),
                "gap_ms_max_moved": figure(movedGapMax), "saw_offline": sawOffline,
                "reconnected": reconnected, "edge_exit_ms": figure(drainMs), "failures": failures,
            ])
        } else {
            print("edge SIGTERM (the \(drain), \(victim)) → drained make before break, \(audiences) audience members")
            print("  edge exited after \(drainMs.map { String(format: "%.0f ms", $0) } ?? "more than \(timeout) s")")
            print(String(format: "  %d on the drained edge, %d connections moved; longest gap in pictures %.1f ms (moved: %@)",
                         onVictim.count, moved, gapMax,
                         movedGapMax.map { String(format: "%.1f ms", $0) } ?? (onVictim.isEmpty ? "nobody was on it" : "none decoding after")))
            print("  saw the host go offline: \(sawOffline)   went reconnecting: \(reconnected)   not decoding after: \(failures)")
        }
    }
}
