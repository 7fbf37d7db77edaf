import OperatorTools
import ArgumentParser
import Edge
import Foundation
import MediaCodecs
import ShowroomAuth
import ShowroomKit
import ShowroomWire

/// `showroomctl client`: a synthetic client process. As host it publishes a moving test pattern
/// (VP8) and a tone (Opus); as audience it decodes what it receives. It prints what happens as
/// `key=value` lines on standard output (for people, launchers and tests) until `--seconds` have
/// passed or it is stopped.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "A synthetic client: host (publishes a test pattern and a tone) or audience (decodes), printing its events.")

    @Option(name: .customLong("seed"), help: "A cluster member to find the edges through (repeatable).")
    var seeds: [String] = []

    @Option(help: "The channel to join.")
    var channel: String

    @Option(help: "The uid to join as.")
    var uid: UInt32

    @Option(help: "broadcaster (host) or audience.")
    var role: String = "audience"

    @Option(help: "Seconds to stay before leaving; 0 stays until the process is stopped.")
    var seconds: Double = 0

    @Option(help: "Video width (host).")
    var width = 320

    @Option(help: "Video height (host).")
    var height = 240

    @Option(help: "Frames per second (host).")
    var fps = 15

    @Option(name: .customLong("bitrate-kbps"), help: "Video bitrate in kbit/s (host).")
    var bitrateKbps = 300

    @Option(name: .customLong("gop-ms"), help: "Keyframe interval in milliseconds (host).")
    var gopMs = 2000

    @Option(help: "A room to join as one of its audience (counted in its audience) once in the channel.")
    var room: String?

    @Option(name: .customLong("host-uid"),
            help: "A broadcaster to decode from the very first frame (its sinks are set before joining, so the edge's cached GOP is decoded at once; others' are set when they are announced).")
    var hostUID: UInt32?

    @Flag(name: .customLong("accept-calls"),
          help: "Log in to signaling as this uid and accept every 1v1 call, pausing the live connection's publishing while in a call (show → 1v1).")
    var acceptCalls = false

    @Flag(name: .customLong("cohost"),
          help: "With --room: apply for a co-host seat, go on stage (publish a camera) when seated, step down when the seat ends.")
    var coHost = false

    @OptionGroup var app: AppCredentials

    func validate() throws {
        guard !seeds.isEmpty else { throw ValidationError("give at least one --seed") }
        guard ["broadcaster", "audience"].contains(role) else { throw ValidationError("--role is broadcaster or audience") }
        guard seconds >= 0, seconds <= 86_400 else { throw ValidationError("--seconds must be 0–86400") }
        // Without a room there is no seat to apply for: --cohost would do nothing.
        guard !coHost || room != nil else { throw ValidationError("--cohost applies for a seat in --room: give --room") }
    }

    func run() async throws {
        let host = role == "broadcaster"
        let seeds = try await ClientSeeds.resolve(self.seeds)
        var configuration = EngineConfiguration(entry: .seeds(seeds))
        configuration.media = LocalMediaConfiguration(videoBitrateKbps: bitrateKbps, keyframeInterval: .milliseconds(gopMs))
        let loop = try EngineLoop(name: "showroomctl-client")
        let engine = try await ShowroomEngine(configuration: configuration, loop: loop)
        if host || coHost {
            await engine.setLocalVideoSource(TestPatternCamera(width: width, height: height, framesPerSecond: fps))
            await engine.setLocalAudioSource(ToneMicrophone())
        }
        var reporter: Task<Void, Never>?
        if let hostUID {
            let connection = ChannelConnection(channel: channel, uid: uid)
            let hostSink = DecodingVideoSink()
            try await engine.setupRemoteVideo(uid: hostUID, connection: connection, sink: hostSink)
            try await engine.setupRemoteAudio(uid: hostUID, connection: connection, sink: DecodingAudioSink())
            // What the viewer sees, twice a second: whoever watches can tell a show that goes on
            // from one that stopped, whatever the events said.
            let channel = self.channel
            reporter = Task {
                while !Task.isCancelled {
                    emit("decoded channel=\(channel) uid=\(hostUID) frames=\(hostSink.statistics.framesDecoded)")
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
        }
        let preset: Set<String> = hostUID.map { ["\(channel)/\($0)"] } ?? []
        let printer = Task {
            // Sinks are set once per broadcaster: a rejoin announces the broadcasters again, and a
            // new sink then would time the next first frame from the announcement instead of
            // from the moment the edge was lost.
            var sinksSet = preset
            for await event in engine.events {
                if case .userJoined(let connection, let remote) = event,
                   sinksSet.insert("\(connection.channel)/\(remote)").inserted {
                    try? await engine.setupRemoteVideo(uid: remote, connection: connection, sink: DecodingVideoSink())
                    try? await engine.setupRemoteAudio(uid: remote, connection: connection, sink: DecodingAudioSink())
                }
                if let line = Self.line(for: event) { emit(line) }
            }
        }
        let token = try app.token(channel: channel, uid: uid, role: host ? .publisher : .subscriber)
        do {
            try await engine.joinChannel(
                token: token, channel: channel, uid: uid, options: host ? .broadcaster : .audience)
        } catch {
            emit("join_failed channel=\(channel) uid=\(uid) code=E\(error.code.rawValue) message=\"\(error.message)\"")
            await engine.shutdown()
            throw ExitCode(1)
        }
        var calls: CallClient?
        if acceptCalls {
            do {
                calls = try await answerCalls(engine: engine, seeds: seeds)
            } catch {
                emit("calls_failed uid=\(uid) message=\"\(error)\"")
            }
        }
        let rooms = room.map { _ in RoomService(seeds: seeds, loop: loop) }
        if let room, let rooms {
            do {
                let joined = try await rooms.joinRoom(room, uid: uid)
                emit("room_joined room=\(room) uid=\(uid) audience=\(joined.audienceCount)")
            } catch {
                emit("room_join_failed room=\(room) uid=\(uid) code=E\(error.code.rawValue) message=\"\(error.message)\"")
            }
            if coHost { try await goOnStage(room: room, rooms: rooms, engine: engine) }
        }
        if seconds > 0 {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        } else {
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
        }
        let statistics = await engine.statistics()
        emit("stats video_sent=\(statistics.videoFramesSent) audio_sent=\(statistics.audioFramesSent) video_received=\(statistics.videoFramesReceived) audio_received=\(statistics.audioFramesReceived)")
        if let room, let rooms {
            _ = try? await rooms.leaveRoom(room, uid: uid)
            await rooms.shutdown()
        }
        if let calls {
            await calls.logout()
            await calls.close()
        }
        try? await engine.leaveChannel()
        await engine.shutdown()
        await loop.shutdown()
        printer.cancel()
        reporter?.cancel()
    }

    /// Applies for a seat in `room`; once seated, publishes on the room's channel (`on_stage`),
    /// and when the seat ends becomes audience again (`off_stage`) — the room layer does both.
    private func goOnStage(room: String, rooms: RoomService, engine: ShowroomEngine) async throws {
        let uid = self.uid
        _ = rooms.followSeat(roomID: room, engine: engine, connection: ChannelConnection(channel: channel, uid: uid)) { onStage, seat in
            emit(onStage ? "on_stage room=\(room) uid=\(uid) seat=\(seat.id)" : "off_stage room=\(room) uid=\(uid) seat=\(seat.id)")
        } onRefused: { seat, error in
            emit("on_stage_failed room=\(room) uid=\(uid) seat=\(seat.id) code=E\(error.code.rawValue) message=\"\(error.message)\"")
        }
        let token = try app.token(channel: channel, uid: uid, role: .subscriber)
        do throws(ShowroomError) {
            let application = try await rooms.applyForCoHosting(roomID: room, uid: uid, token: token, userName: "viewer-\(uid)")
            emit("cohost_applied room=\(room) uid=\(uid) request=\(application.id)")
        } catch {
            emit("cohost_apply_failed room=\(room) uid=\(uid) code=E\(error.code.rawValue) message=\"\(error.message)\"")
        }
    }

    /// Logs in to signaling and accepts every call, the live connection paused while in one.
    private func answerCalls(engine: ShowroomEngine, seeds: [String]) async throws -> CallClient {
        let calls = CallClient(uid: uid, engine: engine, seeds: seeds)
        try await calls.login(token: app.resolved().loginToken(uid: uid, expire: 86_400))
        try await calls.prepareForCall(PrepareConfig(pausesConnection: ChannelConnection(channel: channel, uid: uid)))
        let uid = self.uid
        Task {
            for await event in calls.events {
                emit(CallEndpointOptions.line(for: event, uid: uid))
                if case .stateChanged(.calling, _, _, let info?) = event, info.callee == uid {
                    try? await calls.accept(remoteUserId: info.caller)
                }
            }
        }
        emit("calls_accepted uid=\(uid)")
        return calls
    }

    /// One line per event worth a line; media counters are in the final `stats` line.
    private static func line(for event: EngineEvent) -> String? {
        switch event {
        case .joined(let c, let elapsed):
            "joined channel=\(c.channel) uid=\(c.uid) elapsed_ms=\(elapsed.milliseconds)"
        case .userJoined(let c, let uid):
            "user_joined channel=\(c.channel) uid=\(uid)"
        case .userOffline(let c, let uid, let reason):
            "user_offline channel=\(c.channel) uid=\(uid) reason=\(reason)"
        case .firstRemoteVideoFrameDecoded(let c, let uid, let width, let height, let elapsed):
            "first_frame channel=\(c.channel) uid=\(uid) size=\(width)x\(height) elapsed_ms=\(elapsed.milliseconds)"
        case .firstLocalFramePublished(let c, let track, let elapsed):
            "first_local_frame channel=\(c.channel) track=\(track) elapsed_ms=\(elapsed.milliseconds)"
        case .remoteVideoStateChanged(let c, let uid, let state, let reason):
            "video_state channel=\(c.channel) uid=\(uid) state=\(state) reason=\(reason)"
        case .connectionClosed(let c, let error):
            "connection_closed channel=\(c.channel) code=E\(error.code.rawValue) message=\"\(error.message)\""
        case .connectionStateChanged(let c, let state, let reason):
            "connection_state channel=\(c.channel) state=\(state) reason=\(reason)"
        case .error(let c, let error):
            "error channel=\(c?.channel ?? "") code=E\(error.code.rawValue) message=\"\(error.message)\""
        case .rejoinedChannel(let c, let elapsed):
            "rejoined channel=\(c.channel) uid=\(c.uid) elapsed_ms=\(elapsed.milliseconds)"
        case .tokenWillExpire(let c, let left):
            "token_will_expire channel=\(c.channel) expires_in_ms=\(left.milliseconds)"
        default:
            nil
        }
    }
}

/// Writes a line to standard output at once (a pipe would otherwise hold it back).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
