import ArgumentParser
import Foundation
import MediaCodecs
import OperatorTools
import ShowroomKit
import Synchronization

/// `showroom-bench pk`: pairs of live rooms, each host publishing VP8 + Opus, each room A with an
/// audience. Every pair goes into a PK the way the apps do it (the host of A invites through the
/// room service with its token, the host of B accepts); from the accept's answer, the time until
/// each audience member of A has decoded host B's first picture. In forward mode the cluster
/// forwards host B into A's channel (the audience has one connection and a sink for host B); in
/// subscribe mode each audience member, on the room's PK_STARTED event, joins B's channel as the
/// seeds do. Then, in forward mode, the publish → receive latency the forward adds (host B seen in
/// A's channel against a viewer in B's own channel).
struct PKBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "pk",
        abstract: "PK accepted → every audience member of A decodes host B: first-frame p50 / p99, and the latency forwarding adds.")

    enum Mode: String, ExpressibleByArgument { case forward, subscribe }

    @OptionGroup var target: BenchTarget

    @Option(help: "PK pairs (two rooms each).")
    var pairs = 5

    @Option(help: "Audience members per room A.")
    var audiences = 20

    @Option(help: "forward (the cluster forwards the peer host) or subscribe (the audience joins the peer's channel).")
    var mode: Mode = .forward

    @Option(help: "Seconds the added latency of a forward is measured (forward mode).")
    var seconds = 5.0

    func validate() throws {
        guard (1...20).contains(pairs) else { throw ValidationError("--pairs must be 1-20") }
        guard (1...50).contains(audiences) else { throw ValidationError("--audiences must be 1-50") }
        guard seconds > 0, seconds <= 60 else { throw ValidationError("--seconds must be in (0, 60]") }
    }

    func run() async throws {
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let serviceLoop = try EngineLoop(name: "bench-pk-rooms")
        let rooms = RoomService(seeds: clientSeeds, loop: serviceLoop)
        let viewerLoops = try (0..<4).map { try EngineLoop(name: "bench-pk-viewers-\($0)") }
        let clip = try EncodedClip(width: 160, height: 120, framesPerSecond: 15, bitrateKbps: 150, seconds: 2)
        var hosts: [ShowroomEngine] = []
        var pushing: [Task<Void, any Error>] = []
        var viewers: [ShowroomEngine] = []
        let firstPictures = FirstPictureTimes()
        let meter = ForwardLatencyMeter()
        defer { for task in pushing { task.cancel() } }

        // The rooms and their hosts, live.
        struct Pair { var a: String; var b: String; var hostA: UInt32; var hostB: UInt32 }
        var roomPairs: [Pair] = []
        for index in 0..<pairs {
            let pair = Pair(a: "bench-pk-\(tag)-a\(index)", b: "bench-pk-\(tag)-b\(index)",
                            hostA: 10_000 + UInt32(index) * 2, hostB: 10_001 + UInt32(index) * 2)
            for (room, uid) in [(pair.a, pair.hostA), (pair.b, pair.hostB)] {
                let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)))
                await host.setExternalEncodedVideoSource(true)
                await host.setLocalAudioSource(ToneMicrophone())
                _ = try await rooms.createRoom(name: room, ownerUid: uid, roomID: room)
                try await host.joinChannel(token: try app.token(channel: room, uid: uid, role: .publisher), channel: room, uid: uid,
                                           options: .broadcaster)
                pushing.append(Task { try await clip.push(through: host) })
                hosts.append(host)
            }
            roomPairs.append(pair)
        }

        // Each room A's audience: joined to A, with a sink for host B where the mode shows it.
        for (pairIndex, pair) in roomPairs.enumerated() {
            for member in 0..<audiences {
                let uid = 20_000 + UInt32(pairIndex * 100 + member)
                let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)),
                                                      loop: viewerLoops[(pairIndex * audiences + member) % viewerLoops.count])
                let key = "\(pairIndex)/\(member)"
                let sink = FirstPictureSink { firstPictures.record(key) }
                if mode == .forward {
                    let own = ChannelConnection(channel: pair.a, uid: uid)
                    try await viewer.setupRemoteVideo(uid: pair.hostB, connection: own, sink: pairIndex == 0 && member == 0
                        ? TeeVideoSink(sink) { meter.record($0, forwarded: true) } : sink)
                } else {
                    let peer = ChannelConnection(channel: pair.b, uid: uid)
                    try await viewer.setupRemoteVideo(uid: pair.hostB, connection: peer, sink: sink)
                }
                try await viewer.joinChannel(token: try app.token(channel: pair.a, uid: uid, role: .subscriber), channel: pair.a,
                                             uid: uid, options: .audience)
                viewers.append(viewer)
            }
        }
        // A viewer in B's own channel of the first pair: the direct latency forwarding is compared to.
        let direct = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(clientSeeds)), loop: viewerLoops[0])
        try await direct.setupRemoteVideo(uid: roomPairs[0].hostB, connection: ChannelConnection(channel: roomPairs[0].b, uid: 29_999),
                                          sink: ClosureVideoSink { meter.record($0, forwarded: false); return .received })
        try await direct.joinChannel(token: try app.token(channel: roomPairs[0].b, uid: 29_999, role: .subscriber),
                                     channel: roomPairs[0].b, uid: 29_999, options: .audience)
        viewers.append(direct)
        progress("\(pairs) pairs, \(audiences) audience members per room A, mode \(mode.rawValue); starting the PKs", json: json)

        // In subscribe mode the audience joins the peer's channel on the room's PK_STARTED event.
        var followers: [Task<Void, Never>] = []
        if mode == .subscribe {
            for (pairIndex, pair) in roomPairs.enumerated() {
                let members = Array(viewers[(pairIndex * audiences)..<((pairIndex + 1) * audiences)])
                // Tokens for the peer's channel, as the app server would hand them out.
                let joins = try members.indices.map { member in
                    let uid = 20_000 + UInt32(pairIndex * 100 + member)
                    return (uid, try app.token(channel: pair.b, uid: uid, role: .subscriber))
                }
                let roomA = pair.a
                followers.append(Task {
                    for await event in rooms.events(for: roomA) {
                        guard case .interaction(let step) = event, step.kind == .pkStarted, case .pk(let pk) = step.room.interaction
                        else { continue }
                        await withTaskGroup(of: Void.self) { group in
                            for (viewer, (uid, token)) in zip(members, joins) {
                                group.addTask {
                                    _ = try? await viewer.joinChannel(token: token, channel: pk.peerChannel, uid: uid, options: .audience)
                                }
                            }
                        }
                        return
                    }
                })
            }
            // The subscriptions reach the coordinators in the background.
            try await Task.sleep(for: .seconds(1))
        }

        // The PKs, one pair after the other, timed from the accept's answer.
        var acceptedAt: [Int: ContinuousClock.Instant] = [:]
        var failures = 0
        for (index, pair) in roomPairs.enumerated() {
            do {
                let invitation = try await rooms.invitePK(
                    roomID: pair.a, uid: pair.hostA, token: try app.token(channel: pair.a, uid: pair.hostA, role: .publisher),
                    peerRoomID: pair.b, mediaMode: mode == .forward ? .forward : .subscribe)
                _ = try await rooms.acceptPK(roomID: pair.b, uid: pair.hostB,
                                             token: try app.token(channel: pair.b, uid: pair.hostB, role: .publisher),
                                             invitationID: invitation.id)
                acceptedAt[index] = ContinuousClock.now
            } catch {
                progress("pair \(index): the PK did not start: \(error)", json: json)
                failures += audiences
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while firstPictures.count < acceptedAt.count * audiences, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        var firstFrame = LatencyHistogram()
        for (index, accepted) in acceptedAt {
            for member in 0..<audiences {
                guard let seen = firstPictures.time("\(index)/\(member)") else {
                    failures += 1
                    continue
                }
                // A picture decoded before the accept's answer reached the bench counts as 0.
                firstFrame.record(microseconds: max(0, Int64(accepted.duration(to: seen) / .microseconds(1))))
            }
        }
        var added = LatencyHistogram()
        if mode == .forward {
            meter.reset()
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))  // the measured period
            added = meter.snapshot().added
        }

        for task in followers { task.cancel() }
        for task in pushing { task.cancel() }
        for viewer in viewers { await viewer.shutdown() }
        for host in hosts { await host.shutdown() }
        for loop in viewerLoops { await loop.shutdown() }
        await rooms.shutdown()
        await serviceLoop.shutdown()

        try firstFrame.requireSamples("host B's first picture at A's audience",
                                      "none of the \(pairs * audiences) audience members decoded it within 10 s (\(failures) failures)")
        if mode == .forward {
            try added.requireSamples("the latency the forward adds",
                                     "no frame of host B reached both A's tapped viewer and B's own in \(seconds) s")
        }
        var figures: [String: Any] = [
            "benchmark": "pk", "mode": mode.rawValue, "pairs": pairs, "audiences": audiences,
            "pk_first_frame_ms_p50": rounded(firstFrame.percentileMs(0.5), 1),
            "pk_first_frame_ms_p99": rounded(firstFrame.percentileMs(0.99), 1),
            "pk_first_frame_ms_max": rounded(firstFrame.maxMs, 1),
            "failures": failures,
        ]
        if mode == .forward {
            figures["forward_added_latency_ms_p50"] = rounded(added.percentileMs(0.5), 2)
            figures["forward_added_latency_ms_p99"] = rounded(added.percentileMs(0.99), 2)
            figures["forward_paired_frames"] = added.count
        }
        if json {
            try printJSON(figures)
        } else {
            print("pk: \(pairs) pairs × \(audiences) audience members, mode \(mode.rawValue)")
            print(String(format: "  accepted → host B's first picture at A's audience   p50 %.1f ms   p99 %.1f ms   max %.1f ms   failures %d",
                         firstFrame.percentileMs(0.5), firstFrame.percentileMs(0.99), firstFrame.maxMs, failures))
            if mode == .forward {
                print(String(format: "  added by the forward   p50 %.2f ms   p99 %.2f ms   (%d frames paired)",
                             added.percentileMs(0.5), added.percentileMs(0.99), added.count))
            }
        }
    }
}

/// When each audience member decoded its first picture of the peer host.
final class FirstPictureTimes: Sendable {
    private let times = Mutex<[String: ContinuousClock.Instant]>([:])

    func record(_ key: String) {
        let now = ContinuousClock.now
        times.withLock { if $0[key] == nil { $0[key] = now } }
    }

    func time(_ key: String) -> ContinuousClock.Instant? { times.withLock { $0[key] } }

    var count: Int { times.withLock { $0.count } }
}

/// Decodes until the first picture (as an app's renderer would), then only counts: the bench
/// measures the first picture without spending the machine on decoding a hundred streams.
final class FirstPictureSink: RemoteVideoSink {
    private let decoder = Mutex<VideoDecoder?>(try? VideoDecoder(codec: .vp8))
    private let decoded = Atomic<Bool>(false)
    private let onFirst: @Sendable () -> Void

    init(onFirst: @escaping @Sendable () -> Void) { self.onFirst = onFirst }

    func consume(_ frame: RemoteMediaFrame) -> VideoSinkOutcome {
        guard !decoded.load(ordering: .relaxed) else { return .received }
        let picture = decoder.withLock { decoder in try? decoder?.decode([UInt8](frame.payload)) }
        guard picture != nil else { return .failed }
        decoded.store(true, ordering: .relaxed)
        decoder.withLock { $0 = nil }
        onFirst()
        return .received
    }
}

/// Passes frames to a sink and to a closure (the latency meter).
final class TeeVideoSink: RemoteVideoSink {
    private let sink: any RemoteVideoSink
    private let tap: @Sendable (RemoteMediaFrame) -> Void

    init(_ sink: any RemoteVideoSink, tap: @escaping @Sendable (RemoteMediaFrame) -> Void) {
        self.sink = sink
        self.tap = tap
    }

    func consume(_ frame: RemoteMediaFrame) -> VideoSinkOutcome {
        tap(frame)
        return sink.consume(frame)
    }
}
