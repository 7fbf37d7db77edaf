import ArgumentParser
import Foundation
import OperatorTools
import Routing
import ShowroomKit
import ShowroomTesting

/// A host publishing a test pattern and its audience decoding it, joined the way apps join (the
/// seeds' order: join, then the video sink once the host's `userJoined` arrived): what the
/// failover and drain benchmarks take an edge away from.
struct LiveAudience {
    static let hostUID: UInt32 = 1

    let channel: String
    let host: ShowroomEngine
    let engines: [ShowroomEngine]
    /// What each audience member's engine reported.
    let logs: [EventLog]
    /// When each audience member decoded a picture.
    let pictures: [PictureTimes]
    /// The edge of the host (the channel's origin), and of each audience member.
    let origin: String
    let edgeOf: [String]
    private let loop: EngineLoop

    /// Refuses a cluster that cannot take an edge away: no coordinator, or fewer than two edges.
    static func checkCluster(seeds: [String]) async throws {
        let status = try await clusterStatus(seeds: seeds)
        let edges = OwnerRing(.coordinator, of: status.members).isEmpty ? -1 : OwnerRing(.edge, of: status.members).count
        guard edges >= 2 else {
            throw ValidationError(edges < 0 ? "the cluster has no coordinator to place channels again"
                                            : "the cluster needs at least two alive edges (it has \(edges))")
        }
    }

    static func start(_ name: String, audiences: Int, seeds: [String], app: AppCredentials, json: Bool) async throws -> LiveAudience {
        let channel = "bench-\(name)-\(UInt32.random(in: 0 ... .max))"
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)))
        await host.setLocalVideoSource(TestPatternCamera(width: 320, height: 240, framesPerSecond: 15))
        try await host.joinChannel(token: try app.token(channel: channel, uid: hostUID, role: .publisher),
                                   channel: channel, uid: hostUID, options: .broadcaster)
        let loop = try EngineLoop(name: "bench-\(name)")
        var engines: [ShowroomEngine] = []
        var logs: [EventLog] = []
        let pictures = (0..<audiences).map { _ in PictureTimes() }
        for i in 0..<audiences {
            let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)), loop: loop)
            let log = EventLog(engine)
            let connection = ChannelConnection(channel: channel, uid: 1000 + UInt32(i))
            try await engine.joinChannel(token: try app.token(channel: channel, uid: connection.uid, role: .subscriber),
                                         channel: channel, uid: connection.uid, options: .audience)
            _ = try await log.wait("audience member \(i) sees the host") {
                if case .userJoined(connection, hostUID) = $0 { true } else { false }
            }
            let times = pictures[i]
            try await engine.setupRemoteVideo(uid: hostUID, connection: connection, sink: DecodingVideoSink(
                readFrameCounters: false, onPicture: { _ in times.record() }))
            engines.append(engine)
            logs.append(log)
        }
        progress("\(audiences) audience members joined \(channel); waiting for video", json: json)
        try await eventually("every audience member decodes video", timeout: .seconds(10)) { pictures.allSatisfy { !$0.isEmpty } }
        let origin = await host.edgeID(of: ChannelConnection(channel: channel, uid: hostUID)) ?? ""
        var edgeOf: [String] = []
        for (i, engine) in engines.enumerated() {
            edgeOf.append(await engine.edgeID(of: ChannelConnection(channel: channel, uid: 1000 + UInt32(i))) ?? "")
        }
        return LiveAudience(channel: channel, host: host, engines: engines, logs: logs, pictures: pictures, origin: origin,
                            edgeOf: edgeOf, loop: loop)
    }

    /// The edge to take away: the origin, or a relay pulling the channel.
    func edge(_ which: String) throws -> String {
        guard let edge = which == "origin" ? origin : edgeOf.first(where: { $0 != origin && !$0.isEmpty }), !edge.isEmpty else {
            throw ValidationError("no audience member is on a relay: start the cluster with --relay-threshold below --audiences")
        }
        return edge
    }

    func shutdown() async {
        for engine in engines {
            try? await engine.leaveChannel()
            await engine.shutdown()
        }
        try? await host.leaveChannel()
        await host.shutdown()
        await loop.shutdown()
    }
}

/// What the benchmarks that take an edge away from a live audience are told: the cluster, the
/// audience's size, how long to wait, the output and the app.
struct LiveAudienceOptions: ParsableArguments, TargetedBenchmark {
    @OptionGroup var target: BenchTarget

    @Option(help: "Audience members of the channel.")
    var audiences = 10

    @Option(help: "Seconds to wait for every audience member to decode again.")
    var timeout = 15.0

    func validate() throws {
        guard (1...500).contains(audiences) else { throw ValidationError("--audiences must be 1–500") }
        guard timeout > 0, timeout <= 300 else { throw ValidationError("--timeout must be in (0, 300] seconds") }
    }

    /// The host and audience, on a cluster checked to have a coordinator and two edges.
    func start(_ name: String) async throws -> LiveAudience {
        try await LiveAudience.checkCluster(seeds: seeds)
        return try await LiveAudience.start(name, audiences: audiences, seeds: seeds, app: app, json: json)
    }
}
