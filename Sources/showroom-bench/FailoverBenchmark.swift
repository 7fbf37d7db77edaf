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

    @Option(name: .customLong("seed"), help: "A cluster member (repeatable).")
    var seeds: [String] = []

    @Option(help: "Audience members of the channel.")
    var audiences = 10

    @Option(help: "Seconds to wait for every audience member to recover.")
    var timeout = 15.0

    @Option(help: "The edge killed: origin (where the host is) or relay (one pulling the channel: start the cluster with --relay-threshold below --audiences).")
    var kill = "origin"

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var app: AppCredentials

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed") }
        _ = try app.resolved()  // a missing credential stops the benchmark before it starts anything
        guard (1...500).contains(audiences) else { throw ValidationError("--audiences must be 1–500") }
        guard ["origin", "relay"].contains(kill) else { throw ValidationError("--kill is origin or relay") }
    }

    func run() async throws {
        let status = try await clusterStatus(seeds: seeds)
        let edges = OwnerRing(.coordinator, of: status.members).isEmpty ? -1 : OwnerRing(.edge, of: status.members).count
        guard edges >= 2 else {
            throw ValidationError(edges < 0 ? "the cluster has no coordinator to place channels again"
                                            : "the cluster needs at least two alive edges (it has \(edges))")
        }
        let channel = "bench-failover-\(UInt32.random(in: 0 ... .max))"
        let hostUID: UInt32 = 1
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)))
        await host.setLocalVideoSource(TestPatternCamera(width: 320, height: 240, framesPerSecond: 15))
        try await host.joinChannel(token: try app.token(channel: channel, uid: hostUID, role: .publisher),
                                   channel: channel, uid: hostUID, options: .broadcaster)
        let loop = try EngineLoop(name: "bench-failover")
        let pictures = (0..<audiences).map { _ in PictureTimes() }
        var engines: [ShowroomEngine] = []
        for i in 0..<audiences {
            let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)), loop: loop)
            let uid = 1000 + UInt32(i)
            let connection = ChannelConnection(channel: channel, uid: uid)
            let times = pictures[i]
            try await engine.setupRemoteVideo(uid: hostUID, connection: connection, sink: DecodingVideoSink(
                readFrameCounters: false, onPicture: { _ in times.record() }))
            try await engine.joinChannel(token: try app.token(channel: channel, uid: uid, role: .subscriber),
                                         channel: channel, uid: uid, options: .audience)
            engines.append(engine)
        }
        progress("\(audiences) audience members joined \(channel); waiting for video", json: json)
        try await eventually("every audience member decodes video", timeout: .seconds(10)) { pictures.allSatisfy { !$0.isEmpty } }

        // Where the host and each audience member are; the victim's pid from itself.
        let origin = await host.edgeID(of: ChannelConnection(channel: channel, uid: hostUID)) ?? ""
        var edgeOf: [String] = []
        for (i, engine) in engines.enumerated() {
            edgeOf.append(await engine.edgeID(of: ChannelConnection(channel: channel, uid: 1000 + UInt32(i))) ?? "")
        }
        guard let victim = kill == "origin" ? origin : edgeOf.first(where: { $0 != origin && !$0.isEmpty }), !victim.isEmpty else {
            throw ValidationError("no audience member is on a relay: start the cluster with --relay-threshold below --audiences")
        }
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
        let gaps = stayed.map { pictures[$0].longestGap(after: killedAt).seconds * 1000 }
        let failures = moved.count - times.count + stayed.filter { pictures[$0].first(after: killedAt + .seconds(2)) == nil }.count

        for engine in engines {
            try? await engine.leaveChannel()
            await engine.shutdown()
        }
        try? await host.leaveChannel()
        await host.shutdown()
        await loop.shutdown()

        let recovery = LatencyHistogram(milliseconds: times)
        if json {
            try printJSON([
                "benchmark": "failover", "audiences": audiences, "killed_edge": victim, "killed": kill,
                "recover_ms_p50": rounded(recovery.percentileMs(0.5)), "recover_ms_max": rounded(recovery.maxMs),
                "rejoined": moved.count, "stayed": stayed.count, "gap_ms_max": rounded(gaps.max() ?? 0),
                "failures": failures,
            ])
        } else {
            print("edge SIGKILL (the \(kill), \(victim)) → audience decoding again, \(audiences) audience members")
            print(String(format: "  %d rejoined: p50 %7.1f ms   max %7.1f ms   not recovered %d", moved.count, recovery.percentileMs(0.5),
                         recovery.maxMs, failures))
            if !stayed.isEmpty { print(String(format: "  %d kept their connection: longest gap in pictures %.1f ms", stayed.count, gaps.max() ?? 0)) }
        }
    }
}
