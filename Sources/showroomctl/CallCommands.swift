import ArgumentParser
import Foundation
import MediaCodecs
import OperatorTools
import ShowroomAuth
import ShowroomKit
import ShowroomWire

/// What the call commands share: a synthetic camera and microphone on an engine, and a CallClient
/// logged in with an RTM token minted from the app credentials.
struct CallEndpointOptions: ParsableArguments {
    @Option(name: .customLong("seed"), help: "A cluster member to find the call-signal nodes and edges through (repeatable).")
    var seeds: [String] = []

    @Option(help: "Seconds to stay: in the call (call), or waiting for calls (callee; 0 until stopped).")
    var seconds: Double = 5

    @OptionGroup var app: AppCredentials

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed") }
        guard seconds >= 0, seconds <= 86_400 else { throw ValidationError("--seconds must be 0–86400") }
    }

    /// An engine with a test pattern and a tone, and its call client, logged in as `uid`.
    func start(uid: UInt32) async throws -> (ShowroomEngine, CallClient) {
        let seeds = try await ClientSeeds.resolve(self.seeds)
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        await engine.setLocalVideoSource(TestPatternCamera(width: 320, height: 240, framesPerSecond: 15))
        await engine.setLocalAudioSource(ToneMicrophone())
        let calls = CallClient(uid: uid, engine: engine, seeds: seeds)
        let token = try app.resolved().loginToken(uid: uid)
        do {
            try await calls.login(token: token)
        } catch {
            emit("login_failed uid=\(uid) code=E\(error.code.rawValue) message=\"\(error.message)\"")
            await engine.shutdown()
            throw ExitCode(1)
        }
        emit("logged_in uid=\(uid)")
        return (engine, calls)
    }

    /// One line per call event.
    static func line(for event: CallClientEvent, uid: UInt32) -> String {
        switch event {
        case .stateChanged(let state, let reason, let event, let info):
            "state uid=\(uid) state=\(state.rawValue) reason=\(reason.rawValue) event=\(event.rawValue)"
                + (info.map { " call=\($0.callID) remote=\($0.remote(of: uid))" } ?? "")
        case .connected(let info):
            "connected uid=\(uid) call=\(info.callID) channel=\(info.channel)"
        case .disconnected(let info, let hangupUid, let duration):
            "disconnected uid=\(uid) call=\(info.callID) reason=\(info.endReason) hangup_uid=\(hangupUid) duration_ms=\(duration.milliseconds)"
        case .error(let error):
            "call_error uid=\(uid) code=E\(error.code.rawValue) message=\"\(error.message)\""
        case .tokenWillExpire:
            "token_will_expire uid=\(uid)"
        case .loggedIn(let node):
            "signaling uid=\(uid) node=\(node)"
        case .signalingMoved(let node):
            "signaling uid=\(uid) node=\(node) moved=true"
        case .loggedOut(let error):
            "logged_out uid=\(uid)" + (error.map { " code=E\($0.code.rawValue)" } ?? "")
        }
    }

    static func timeline(_ calls: CallClient) -> String {
        "timeline uid=\(calls.uid) " + calls.timeline.sorted { $0.value < $1.value }
            .map { "\($0.key)_ms=\($0.value.milliseconds)" }.joined(separator: " ")
    }
}

/// `showroomctl call`: calls a user, stays in the call, hangs up; prints the state changes and the
/// timeline. Exits 1 when the call did not connect.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call", abstract: "Call a user (1v1), stay a while, hang up; print the state changes and the timeline.")

    @Option(help: "The calling uid.")
    var from: UInt32

    @Option(help: "The uid to call.")
    var to: UInt32

    @Flag(help: "An audio call (video by default).")
    var audio = false

    @OptionGroup var options: CallEndpointOptions

    func run() async throws {
        let (engine, calls) = try await options.start(uid: from)
        let connected = AsyncStream<Bool>.makeStream()
        let ended = AsyncStream<Void>.makeStream()
        let from = self.from
        let printer = Task {
            for await event in calls.events {
                emit(CallEndpointOptions.line(for: event, uid: from))
                switch event {
                case .connected: connected.continuation.yield(true)
                case .disconnected: ended.continuation.yield()
                case .stateChanged(.prepared, let reason, _, _) where reason != .none: connected.continuation.yield(false)
                default: break
                }
            }
        }
        try await calls.prepareForCall(PrepareConfig())
        do {
            try await calls.call(remoteUserId: to, callType: audio ? .audio : .video)
        } catch {
            emit("call_failed uid=\(from) code=E\(error.code.rawValue) message=\"\(error.message)\"")
            connected.continuation.yield(false)
        }
        var outcome = connected.stream.makeAsyncIterator()
        let ok = await outcome.next() ?? false
        if ok {
            try await Task.sleep(for: .milliseconds(Int(options.seconds * 1000)))
            try? await calls.hangup(remoteUserId: to, reason: "done")
            // The hang-up's own notice (disconnected) is printed before the timeline; 3 s at most.
            let waiter = Task { var iterator = ended.stream.makeAsyncIterator(); _ = await iterator.next() }
            let deadline = Task {
                try await Task.sleep(for: .seconds(3))
                waiter.cancel()
            }
            await waiter.value
            deadline.cancel()
        }
        emit(CallEndpointOptions.timeline(calls))
        await calls.logout()
        await calls.close()
        await engine.shutdown()
        printer.cancel()
        if !ok { throw ExitCode(1) }
    }
}

/// `showroomctl callee`: logs in and answers every call (accepts, or rejects with a reason);
/// prints the state changes and each call's timeline.
struct CalleeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "callee", abstract: "Wait for 1v1 calls and accept (or reject) them; print the state changes and each call's timeline.")

    @Option(help: "The uid to be called at.")
    var uid: UInt32

    @Flag(help: "Reject every call (accepted by default).")
    var reject = false

    @OptionGroup var options: CallEndpointOptions

    func run() async throws {
        let (engine, calls) = try await options.start(uid: uid)
        try await calls.prepareForCall(PrepareConfig())
        let reject = self.reject
        let uid = self.uid
        let printer = Task {
            for await event in calls.events {
                emit(CallEndpointOptions.line(for: event, uid: uid))
                switch event {
                case .stateChanged(.calling, _, _, let info?) where info.callee == uid:
                    if reject {
                        try? await calls.reject(remoteUserId: info.caller, reason: "busy with the show")
                    } else {
                        try? await calls.accept(remoteUserId: info.caller)
                    }
                case .stateChanged(.prepared, _, _, _):
                    emit(CallEndpointOptions.timeline(calls))
                default: break
                }
            }
        }
        if options.seconds > 0 {
            try await Task.sleep(for: .milliseconds(Int(options.seconds * 1000)))
        } else {
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
        }
        await calls.logout()
        await calls.close()
        await engine.shutdown()
        printer.cancel()
    }
}

/// `showroomctl presence UID…`: who is online, in a call or offline.
struct PresenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presence", abstract: "Print whether users are logged in to signaling, in a call or offline.")

    @Argument(help: "The uids (at most 100).")
    var uids: [UInt32]

    @Option(name: .customLong("seed"), help: "A cluster member to find the call-signal nodes through (repeatable).")
    var seeds: [String] = []

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed") }
        guard (1...100).contains(uids.count) else { throw ValidationError("name 1–100 uids") }
    }

    func run() async throws {
        let seeds = try await ClientSeeds.resolve(self.seeds)
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        let calls = CallClient(uid: 1, engine: engine, seeds: seeds)
        let states: [UInt32: PresenceState]
        do {
            states = try await calls.presence(of: uids)
        } catch {
            await calls.close()
            await engine.shutdown()
            throw error
        }
        for uid in uids {
            let state = states[uid] ?? .offline
            print("presence uid=\(uid) state=\(state == .inCall ? "in_call" : state == .online ? "online" : "offline")")
        }
        await calls.close()
        await engine.shutdown()
    }
}
