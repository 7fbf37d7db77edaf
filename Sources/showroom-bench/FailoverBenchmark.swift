import OperatorTools
import ArgumentParser
import Foundation
import NodeRuntime
import Routing
import ShowroomKit
import ShowroomWire
import ShowroomTesting
import ZeroMQ

/// `showroom-bench failover`: a host and its audience on one edge; the edge is SIGKILLed and
/// the time until each former audience member decodes video again is measured (the SDK rejoins
/// through the coordinator's new placement without the app doing anything).
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

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var app: AppCredentials

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed") }
        _ = try app.resolved()  // a missing credential stops the benchmark before it starts anything
        guard (1...500).contains(audiences) else { throw ValidationError("--audiences must be 1–500") }
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

        // Where the channel is placed, as the coordinator tells the SDK; the edge's pid from itself.
        let edge = try await host.placement.edge(
            for: channel, avoiding: nil,
            joiningAs: PlacementCredentials(uid: hostUID, token: try app.token(channel: channel, uid: hostUID, role: .publisher)))
        let pid = try await memberProcessID(edge.id, seeds: seeds)
        progress("SIGKILL \(edge.id) (pid \(pid)), which hosts \(channel)", json: json)
        let killedAt = ContinuousClock.now
        guard kill(pid_t(pid), SIGKILL) == 0 else {
            throw ShowroomError.unavailable("cannot kill pid \(pid) of \(edge.id): is the cluster on this machine?")
        }
        // Frames decoded within 50 ms of the kill were in flight before it.
        let after = killedAt + .milliseconds(50)
        func recovered(_ i: Int) -> Double? {
            pictures[i].first(after: after).map { killedAt.duration(to: $0).seconds * 1000 }
        }
        // The recovery times come from the pictures' own timestamps, not from when this wait notices them.
        try? await eventually("every audience member decodes again", timeout: .milliseconds(Int(timeout * 1000))) {
            (0..<audiences).allSatisfy { recovered($0) != nil }
        }
        let times = (0..<audiences).compactMap(recovered)
        let failures = audiences - times.count

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
                "benchmark": "failover", "audiences": audiences, "killed_edge": edge.id,
                "recover_ms_p50": rounded(recovery.percentileMs(0.5)), "recover_ms_max": rounded(recovery.maxMs),
                "failures": failures,
            ])
        } else {
            print("edge SIGKILL → audience decoding again, \(audiences) audience members (killed \(edge.id))")
            print(String(format: "  p50 %7.1f ms   max %7.1f ms   not recovered %d", recovery.percentileMs(0.5), recovery.maxMs, failures))
        }
    }
}
