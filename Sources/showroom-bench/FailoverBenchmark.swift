import OperatorTools
import ArgumentParser
import Foundation
import NodeRuntime
import Routing
import ShowroomKit
import ShowroomWire
import ShowroomTesting
import ZeroMQ

/// `showroom-bench failover`: a host and its audience; the channel's edge (its origin, or with
/// `--kill relay` a relay pulling it) is SIGKILLed and the time until each of that edge's audience
/// members decodes video again is measured (the SDK rejoins through the coordinator's new
/// placement without the app doing anything); audience members elsewhere keep their connections,
/// and their longest gap in pictures is measured.
///
/// It kills a process of the cluster it is pointed at (found by its NODE_INFO pid), so it runs on
/// the cluster's machine, against a cluster with at least two edges.
struct FailoverBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "failover",
        abstract: "SIGKILL the edge hosting a live channel; time until all its audience decode frames again (kills an edge!).")

    @OptionGroup var options: LiveAudienceOptions

    @Option(help: "The edge killed: origin (where the host is) or relay (one pulling the channel: start the cluster with --relay-threshold below --audiences).")
    var kill = "origin"

    func validate() throws {
        guard ["origin", "relay"].contains(kill) else { throw ValidationError("--kill is origin or relay") }
    }

    func run() async throws {
        let show = try await options.start("failover")
        let (seeds, audiences, timeout, json) = (options.seeds, options.audiences, options.timeout, options.json)
        let (channel, pictures, edgeOf) = (show.channel, show.pictures, show.edgeOf)
        let victim = try show.edge(kill)
        let pid = try await memberProcessID(victim, seeds: seeds)
        progress("SIGKILL \(victim) (pid \(pid), the \(kill) of \(channel))", json: json)
        let killedAt = ContinuousClock.now
        guard Glibc.kill(pid_t(pid), SIGKILL) == 0 else {
            throw ShowroomError.unavailable("cannot kill pid \(pid) of \(victim): is the cluster on this machine?")
        }
        // Frames decoded within 50 ms of the kill were in flight before it.
        let after = killedAt + .milliseconds(50)
        func recovered(_ i: Int) -> Double? {
            pictures[i].first(after: after).map { killedAt.duration(to: $0).seconds * 1000 }
        }
        // The recovery times come from the pictures' own timestamps, not from when this wait notices them.
        // Audience members on the killed edge rejoin; the others (a relay's, when the origin
        // dies) keep their connections: their longest gap in pictures is what they lost.
        let moved = (0..<audiences).filter { edgeOf[$0] == victim }
        let stayed = (0..<audiences).filter { edgeOf[$0] != victim }
        try? await eventually("every audience member decodes again", timeout: .milliseconds(Int(timeout * 1000))) {
            moved.allSatisfy { recovered($0) != nil } && stayed.allSatisfy { pictures[$0].first(after: killedAt + .seconds(2)) != nil }
        }
        let times = moved.compactMap(recovered)
        // A gap only means something for a member that decoded again (longestGap is 0 for none).
        let gaps = stayed.filter { pictures[$0].first(after: killedAt + .seconds(2)) != nil }
            .map { pictures[$0].longestGap(after: killedAt).seconds * 1000 }
        let failures = moved.count - times.count + stayed.filter { pictures[$0].first(after: killedAt + .seconds(2)) == nil }.count

        await show.shutdown()

        let recovery = LatencyHistogram(milliseconds: times)
        if !moved.isEmpty {
            try recovery.requireSamples("the recovery time", "none of the \(moved.count) audience members on \(victim) decoded again within \(timeout) s")
        }
        if !stayed.isEmpty && gaps.isEmpty {
            throw NothingMeasured("no samples of the gap in pictures: none of the \(stayed.count) audience members off \(victim) decoded after the kill")
        }
        if json {
            try printJSON([
                "benchmark": "failover", "audiences": audiences, "killed_edge": victim, "killed": kill,
                "recover_ms_p50": figure(recovery.percentileMsIfAny(0.5)), "recover_ms_max": figure(recovery.count > 0 ? recovery.maxMs : nil),
                "rejoined": moved.count, "stayed": stayed.count, "gap_ms_max": figure(gaps.max()),
                "failures": failures,
            ])
        } else {
            print("edge SIGKILL (the \(kill), \(victim)) → audience decoding again, \(audiences) audience members")
            if !moved.isEmpty {
                print(String(format: "  %d rejoined: p50 %7.1f ms   max %7.1f ms   not recovered %d", moved.count, recovery.percentileMs(0.5),
                             recovery.maxMs, failures))
            }
            if let gap = gaps.max() { print(String(format: "  %d kept their connection: longest gap in pictures %.1f ms", stayed.count, gap)) }
        }
    }
}
