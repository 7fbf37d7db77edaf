import ArgumentParser
import Foundation
import MediaCodecs
import NodeRuntime
import OperatorTools
import Routing
import ShowroomAuth
import ShowroomKit
import ShowroomWire
import Synchronization
import ZeroMQ

/// `showroom-bench calls`: 1v1 call set-up. With media, N caller/callee pairs of SDK engines with
/// test-pattern cameras (C pairs at a time) each make one call the way an app does (login, prepare,
/// call; the callee accepts when it rings) and the time from `call` to connected on both sides
/// (accepted, and each side decoded the other's first frame) is measured. With `--signal-only`,
/// bare signaling clients on threads of their own dial, accept and hang up as fast as the
/// call-signal nodes answer, each request sent to the uid's owner node, and set-ups per second are
/// printed.
struct CallsBenchmark: AsyncParsableCommand, TargetedBenchmark {
    static let configuration = CommandConfiguration(
        commandName: "calls",
        abstract: "1v1 calls: call → connected on both sides (with media), or set-ups per second (--signal-only).")

    @OptionGroup var target: BenchTarget

    @Option(help: "Caller/callee pairs.")
    var pairs = 20

    @Option(help: "Pairs calling at once.")
    var concurrency = 20

    @Flag(name: .customLong("signal-only"), help: "No media: dial, accept and hang up as fast as possible.")
    var signalOnly = false

    @Option(help: "With --signal-only: calls each pair makes (a node lets one caller start 10 calls in 10 s).")
    var rounds = 5

    @Flag(name: .customLong("fresh-engines"),
          help: "Each pair's engines hold nothing before the call (no live room: every join opens new sessions).")
    var freshEngines = false

    func validate() throws {
        guard (1...5000).contains(pairs) else { throw ValidationError("--pairs must be 1–5000") }
        guard (1...500).contains(concurrency) else { throw ValidationError("--concurrency must be 1–500") }
        guard (1...10).contains(rounds) else {
            throw ValidationError("--rounds must be 1–10: a call-signal node lets one caller start 10 calls in 10 s; use more --pairs")
        }
    }

    func run() async throws {
        if signalOnly { try await runSignalOnly() } else { try await runWithMedia() }
    }

    // MARK: - With media

    private func runWithMedia() async throws {
        let clientSeeds = try await ClientSeeds.resolve(seeds)
        let credentials = try app.resolved()
        let loops = try (0..<2).map { try EngineLoop(name: "bench-calls-\($0)") }
        progress("\(pairs) pairs call with media, \(concurrency) at a time, "
                 + (freshEngines ? "fresh engines" : "each caller watching its callee's live room"), json: json)
        let base = UInt32.random(in: 100_000...1_000_000) * 10
        var times: [Double] = []
        /// Each side's timeline steps (ms from the call's start), over every call that connected.
        var steps: [String: [Double]] = [:]
        var failures: [String: Int] = [:]
        /// The CPU time spent while calls were being set up.
        var spent = CPUSpent()
        var next = 0
        while next < pairs {
            let batch = next..<min(pairs, next + concurrency)
            next = batch.upperBound
            // As apps do: users log in when their app starts, long before anyone calls. The
            // batch's calls then start together, so setting up does not count as calling.
            let ready = await withTaskGroup(of: Result<Pair, ShowroomError>.self) { group in
                for index in batch {
                    let caller = base + UInt32(index) * 2
                    let loop = loops[index % loops.count]
                    let live = !freshEngines
                    group.addTask {
                        await Pair.start(caller: caller, callee: caller + 1, seeds: clientSeeds, loop: loop, credentials: credentials,
                                         live: live)
                    }
                }
                var pairs: [Result<Pair, ShowroomError>] = []
                for await pair in group { pairs.append(pair) }
                return pairs
            }
            let pairs = ready.compactMap { try? $0.get() }
            for case .failure(let error) in ready { failures["E\(error.code.rawValue)", default: 0] += 1 }
            let before = CPUSpent.Snapshot.now()
            let results = await withTaskGroup(of: Result<Pair.Connected, ShowroomError>.self) { group in
                for pair in pairs { group.addTask { await pair.call() } }
                var results: [Result<Pair.Connected, ShowroomError>] = []
                for await result in group { results.append(result) }
                return results
            }
            spent.add(since: before)
            for result in results {
                switch result {
                case .success(let connected):
                    times.append(connected.ms)
                    for (side, timeline) in [("caller", connected.caller), ("callee", connected.callee)] {
                        for (step, elapsed) in timeline { steps["\(side) \(step)", default: []].append(elapsed.seconds * 1000) }
                    }
                case .failure(let error): failures["E\(error.code.rawValue)", default: 0] += 1
                }
            }
            // The calls go on while the others of the batch set up (as calls last minutes, not
            // milliseconds); then they end, and everything the batch started is stopped before
            // the next batch starts.
            await withTaskGroup(of: Void.self) { group in
                for pair in pairs { group.addTask { await pair.hangUp() } }
            }
            for pair in pairs { await pair.stop() }
        }
        for loop in loops { await loop.shutdown() }
        let latency = LatencyHistogram(milliseconds: times)
        // The CPU figures are per connected call too: none connected, nothing to divide by.
        try latency.requireSamples("call → connected", "none of the \(pairs) calls connected \(failures)")
        /// Milliseconds a connected call of `seconds` spent over all of them.
        func perCall(_ seconds: Double) -> Double { seconds * 1000 / Double(max(1, times.count)) }
        let failed = failures.values.reduce(0, +)
        if json {
            try printJSON([
                "benchmark": "calls", "pairs": pairs, "concurrency": concurrency, "path": freshEngines ? "fresh" : "show",
                "connect_ms_p50": rounded(latency.percentileMs(0.5)), "connect_ms_p99": rounded(latency.percentileMs(0.99)),
                "connect_ms_max": rounded(latency.maxMs), "failures": failed, "failure_codes": failures,
                "cpu_ms_per_call": rounded(perCall(spent.busySeconds)), "bench_cpu_ms_per_call": rounded(perCall(spent.ownSeconds)),
                "cluster_cpu_ms_per_call": spent.byExecutable.mapValues { rounded(perCall($0)) },
                "steal_percent": rounded(spent.stealPercent),
            ])
        } else {
            print("call → connected on both sides (first remote frames decoded), \(times.count) calls, \(concurrency) at a time, "
                  + (freshEngines ? "fresh engines" : "show → 1v1 (the caller watched the host's live room)"))
            print(String(format: "  p50 %6.1f ms   p99 %6.1f ms   max %6.1f ms", latency.percentileMs(0.5),
                         latency.percentileMs(0.99), latency.maxMs))
            print("  failures \(failed)\(failures.isEmpty ? "" : " \(failures)")")
            print(String(format: "  CPU while calls were on: %.1f ms a call (every process; %.1f ms of it this one's engines); stolen by the hypervisor: %.1f%%",
                         perCall(spent.busySeconds), perCall(spent.ownSeconds), spent.stealPercent))
            print("    the cluster's: " + spent.byExecutable.sorted { $0.key < $1.key }.map {
                String(format: "%@ %.1f ms", $0.key, perCall($0.value))
            }.joined(separator: ", "))
            print("  each side's timeline, ms from the call (p50 / p99):")
            let figures = steps.mapValues { LatencyHistogram(milliseconds: $0) }
            for (step, figure) in figures.sorted(by: { ($0.value.percentileMs(0.5), $0.key) < ($1.value.percentileMs(0.5), $1.key) }) {
                print("    " + step.padding(toLength: 32, withPad: " ", startingAt: 0)
                      + String(format: "%6.1f / %6.1f", figure.percentileMs(0.5), figure.percentileMs(0.99)))
            }
        }
    }

    /// A caller and a callee, each with its engine (a 160×120 camera at 15 fps), logged in to
    /// signaling; the callee accepts what rings. On the show → 1v1 path (`live`), as in the app: the
    /// callee hosts a live room, the caller watches it (decodes the host) and then calls; the host's
    /// live connection pauses while the call is on.
    private struct Pair: Sendable {
        let caller: UInt32, callee: UInt32
        let calling: ShowroomEngine, called: ShowroomEngine
        let callerClient: CallClient, calleeClient: CallClient

        static func start(caller: UInt32, callee: UInt32, seeds: [String], loop: EngineLoop,
                          credentials: LocalAppCredentials, live: Bool) async -> Result<Pair, ShowroomError> {
            do throws(ShowroomError) {
                let calling = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop)
                let called = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop)
                for engine in [calling, called] {
                    await engine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
                }
                let pair = Pair(caller: caller, callee: callee, calling: calling, called: called,
                                callerClient: CallClient(uid: caller, engine: calling, seeds: seeds, pollWait: .seconds(5)),
                                calleeClient: CallClient(uid: callee, engine: called, seeds: seeds, pollWait: .seconds(5)))
                do throws(ShowroomError) {
                    let tokens: (caller: String, callee: String)
                    do {
                        tokens = (try credentials.loginToken(uid: caller), try credentials.loginToken(uid: callee))
                    } catch {
                        throw ShowroomError.internal("cannot make login tokens: \(error)")
                    }
                    try await pair.calleeClient.login(token: tokens.callee)
                    try await pair.callerClient.login(token: tokens.caller)
                    let hostLive = live ? try await watchLive(host: called, callee, viewer: calling, caller, credentials: credentials) : nil
                    try await pair.callerClient.prepareForCall(PrepareConfig())
                    try await pair.calleeClient.prepareForCall(PrepareConfig(pausesConnection: hostLive, liveRoomID: hostLive.map { _ in "" }))
                } catch {
                    await pair.stop()
                    throw error
                }
                return .success(pair)
            } catch {
                return .failure(error)
            }
        }

        /// The host goes live in its own channel and the viewer joins it as audience, setting its
        /// sink after the host joined (the seeds' order), until it decodes the host (at most 5 s).
        /// Returns the host's live connection.
        static func watchLive(host: ShowroomEngine, _ hostUID: UInt32, viewer: ShowroomEngine, _ viewerUID: UInt32,
                              credentials: LocalAppCredentials) async throws(ShowroomError) -> ChannelConnection {
            let channel = "live-\(hostUID)"
            let tokens: (host: String, viewer: String)
            do {
                tokens = (try credentials.token(channel: channel, uid: hostUID, role: .publisher),
                          try credentials.token(channel: channel, uid: viewerUID, role: .subscriber))
            } catch {
                throw ShowroomError.internal("cannot make live-room tokens: \(error)")
            }
            let live = try await host.joinChannelEx(token: tokens.host, connection: ChannelConnection(channel: channel, uid: hostUID),
                                                    options: .broadcaster)
            let events = viewer.events(bufferingNewest: 100)
            let watching = try await viewer.joinChannelEx(
                token: tokens.viewer, connection: ChannelConnection(channel: channel, uid: viewerUID), options: .audience)
            let decoded = Task { () -> Bool in
                for await event in events {
                    switch event {
                    case .userJoined(watching, hostUID):
                        try? await viewer.setupRemoteVideo(uid: hostUID, connection: watching, sink: DecodingVideoSink())
                    case .firstRemoteVideoFrameDecoded(watching, hostUID, _, _, _):
                        return true
                    default: break
                    }
                }
                return false
            }
            let deadline = Task {
                try await Task.sleep(for: .seconds(5))
                decoded.cancel()
            }
            defer { deadline.cancel() }
            guard await decoded.value else { throw .deadlineExceeded("the viewer of \(channel) decoded no host within 5 s") }
            return live
        }

        /// A call that connected: the time from the call to both sides connected, and each side's
        /// timeline.
        struct Connected: Sendable {
            let ms: Double
            let caller: [String: Duration]
            let callee: [String: Duration]
        }

        /// Calls; returns the time from the call to both sides connected (at most 10 s). The call
        /// goes on until ``hangUp()``.
        func call() async -> Result<Connected, ShowroomError> {
            let started = ContinuousClock.now
            let (callerClient, calleeClient) = (self.callerClient, self.calleeClient)
            let both = Task { () -> Bool in
                async let callerConnected = CallsBenchmark.connected(callerClient, accepting: false)
                async let calleeConnected = CallsBenchmark.connected(calleeClient, accepting: true)
                let (a, b) = await (callerConnected, calleeConnected)
                return a && b
            }
            let deadline = Task {
                try await Task.sleep(for: .seconds(10))
                both.cancel()
            }
            defer { deadline.cancel() }
            do throws(ShowroomError) {
                try await callerClient.call(remoteUserId: callee)
            } catch {
                both.cancel()
                return .failure(error)
            }
            let ok = await both.value
            let elapsed = ContinuousClock.now - started
            guard ok else { return .failure(.deadlineExceeded("not connected within 10 s")) }
            return .success(Connected(ms: elapsed.seconds * 1000, caller: callerClient.timeline, callee: calleeClient.timeline))
        }

        /// The caller hangs up (the call, if any, ends on both sides).
        func hangUp() async {
            try? await callerClient.hangup(remoteUserId: callee)
        }

        /// Logs both out and shuts their engines down.
        func stop() async {
            for client in [callerClient, calleeClient] {
                await client.logout()
                await client.close()
            }
            await calling.shutdown()
            await called.shutdown()
        }
    }

    /// Waits for the client's `connected` (accepting what rings when `accepting`); false when its
    /// call ended first or the wait was cancelled.
    fileprivate static func connected(_ client: CallClient, accepting: Bool) async -> Bool {
        for await event in client.events {
            switch event {
            case .connected: return true
            case .stateChanged(.calling, _, _, let info?) where accepting:
                try? await client.accept(remoteUserId: info.caller)
            case .stateChanged(.prepared, let reason, _, _) where reason != .none: return false
            default: break
            }
            if Task.isCancelled { return false }
        }
        return false
    }

    // MARK: - Signalling only

    private func runSignalOnly() async throws {
        let status = try await clusterStatus(seeds: seeds)
        let nodes = status.members.filter { $0.isAlive(as: .callsignal) && !$0.clientEndpoint.isEmpty }
        guard !nodes.isEmpty else { throw ShowroomError(.noCallSignal, "the cluster has no alive call-signal node") }
        let endpoints = Dictionary(uniqueKeysWithValues: nodes.map { ($0.id, $0.clientEndpoint) })
        let ring = OwnerRing(.callsignal, memberIDs: nodes.map(\.id))
        progress("\(pairs) pairs × \(rounds) calls, signaling only, \(concurrency) threads, \(nodes.count) call-signal node(s)", json: json)
        let base = UInt32.random(in: 100_000...1_000_000) * 10
        let credentials = try app.resolved()
        let tokens = try (0..<pairs * 2).map { try credentials.loginToken(uid: base + UInt32($0)) }
        let workers = min(concurrency, pairs)
        let context = try Context(ioThreads: 1)
        defer { context.shutdown() }
        let started = ContinuousClock.now
        let outcomes = try await withThrowingTaskGroup(of: (LatencyHistogram, [String: Int]).self) { group in
            for worker in 0..<workers {
                let mine = Array(stride(from: worker, to: pairs, by: workers))
                let rounds = self.rounds
                group.addTask {
                    try await onThread {
                        Self.signalWorker(pairs: mine, base: base, tokens: tokens, rounds: rounds, ring: ring,
                                          endpoints: endpoints, context: context)
                    }
                }
            }
            var all: [(LatencyHistogram, [String: Int])] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        let elapsed = ContinuousClock.now - started
        var latency = LatencyHistogram()
        var failures: [String: Int] = [:]
        for (histogram, failed) in outcomes {
            latency.merge(histogram)
            failures.merge(failed, uniquingKeysWith: +)
        }
        let failed = failures.values.reduce(0, +)
        try latency.requireSamples("dial → accepted", "every set-up failed \(failures)")
        let perSecond = Double(latency.count) / max(elapsed.seconds, 0.001)
        if json {
            try printJSON([
                "benchmark": "calls", "signal_only": true, "pairs": pairs, "rounds": rounds, "concurrency": workers,
                "callsignal_nodes": nodes.count, "setups": latency.count, "setups_per_s": rounded(perSecond),
                "setups_per_s_per_node": rounded(perSecond / Double(nodes.count)),
                "setup_ms_p50": rounded(latency.percentileMs(0.5), 2), "setup_ms_p99": rounded(latency.percentileMs(0.99), 2),
                "failures": failed, "failure_codes": failures,
            ])
        } else {
            print("call set-ups (dial, accept, hang up), signaling only, \(workers) threads, \(nodes.count) call-signal node(s)")
            print(String(format: "  %.0f set-ups/s (%.0f per node)   dial→accepted p50 %.2f ms   p99 %.2f ms",
                         perSecond, perSecond / Double(nodes.count), latency.percentileMs(0.5), latency.percentileMs(0.99)))
            print("  failures \(failed)\(failures.isEmpty ? "" : " \(failures)")")
        }
    }

    /// One thread: logs its pairs in, then each pair calls `rounds` times (dial, accept, hang up),
    /// every request to the owner of the uid it is for. Records dial → accepted per call.
    private static func signalWorker(pairs: [Int], base: UInt32, tokens: [String], rounds: Int, ring: OwnerRing,
                                     endpoints: [String: String], context: Context) -> (LatencyHistogram, [String: Int]) {
        var latency = LatencyHistogram()
        var failures: [String: Int] = [:]
        func fail(_ error: ShowroomError) { failures["E\(error.code.rawValue)", default: 0] += 1 }
        var clients: [String: NodeClient] = [:]
        func client(for uid: UInt32) throws(ShowroomError) -> NodeClient {
            let owner = ring.owner(of: "uid/\(uid)") ?? ""
            if let client = clients[owner] { return client }
            guard let endpoint = endpoints[owner] else { throw .unavailable("no call-signal node for uid \(uid)") }
            do {
                let client = try NodeClient(endpoint: endpoint, context: context)
                clients[owner] = client
                return client
            } catch {
                throw .unavailable("cannot connect to \(endpoint): \(error)")
            }
        }
        var sessions: [UInt32: String] = [:]
        for pair in pairs {
            for offset in [0, 1] {
                let uid = base + UInt32(pair * 2 + offset)
                do throws(ShowroomError) {
                    sessions[uid] = try client(for: uid).request(.callLogin, body: SignalLoginRequest.with {
                        $0.uid = uid
                        $0.token = tokens[pair * 2 + offset]
                    }, expecting: SignalLoginResponse.self).sessionID
                } catch { fail(error) }
            }
        }
        for _ in 0..<rounds {
            for pair in pairs {
                let caller = base + UInt32(pair * 2), callee = caller + 1
                guard let callerSession = sessions[caller], let calleeSession = sessions[callee] else { continue }
                do throws(ShowroomError) {
                    let started = ContinuousClock.now
                    let call = try client(for: caller).request(.callDial, body: SignalDialRequest.with {
                        $0.sessionID = callerSession
                        $0.callee = callee
                    }, expecting: SignalDialResponse.self).call
                    _ = try client(for: callee).request(.callAccept, body: SignalCallActionRequest.with {
                        $0.sessionID = calleeSession
                        $0.callID = call.callID
                    }, expecting: SignalCallActionResponse.self)
                    latency.record(microseconds: Int64((ContinuousClock.now - started).seconds * 1_000_000))
                    _ = try client(for: caller).request(.callHangup, body: SignalCallActionRequest.with {
                        $0.sessionID = callerSession
                        $0.callID = call.callID
                    }, expecting: SignalCallActionResponse.self)
                } catch { fail(error) }
            }
        }
        // The sessions poll nothing: they end by logging out.
        for (uid, session) in sessions {
            _ = try? client(for: uid).request(.callLogout, body: SignalLogoutRequest.with { $0.sessionID = session },
                                              expecting: SignalLogoutResponse.self)
        }
        return (latency, failures)
    }
}
