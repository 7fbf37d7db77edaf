import ShowroomKit

// A host app as the seeds' apps are written: join a channel as broadcaster with the camera and
// microphone, follow the events, chat in the room, leave. Run against a cluster with
// `sdk-only-app SEED TOKEN`; without arguments it only checks that everything links.

func run(seed: String, token: String, channel: String) async throws {
    let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])))
    await engine.setLocalVideoSource(TestPatternCamera())
    await engine.setLocalAudioSource(ToneMicrophone())
    let options = ChannelMediaOptions(role: .broadcaster, publishData: true)
    let connection = try await engine.joinChannel(token: token, channel: channel, uid: 1, options: options)
    try await engine.enableAudioVolumeIndication(interval: .milliseconds(500))
    try await engine.setupRemoteVideo(uid: 2, connection: connection, sink: DecodingVideoSink())

    let rooms = RoomService(seeds: [seed], loop: engine.loop)
    let room: Room = try await rooms.createRoom(name: "SDK only", ownerUid: 1, channel: channel)
    let message: ChatMessage = try await rooms.sendMessage(room.roomID, uid: 1, text: "hello")
    print("room \(room.roomID) message \(message.sequence)")

    let watch = Task {
        for await event in engine.events {
            switch event {
            case .userJoined(_, let uid): print("joined: \(uid)")
            case .remoteTrackPublished(_, let uid, let track) where track == TrackKind.video: print("video from \(uid)")
            case .userOffline(_, let uid, let reason) where reason == UserOfflineReason.quit: print("left: \(uid)")
            case .volumeIndication(_, let speakers): print("speakers: \(speakers.map { ($0 as SpeakerVolume).uid })")
            case .privilegeExpired(_, let privilege) where privilege == Privilege.join: print("token expired")
            case .tokenWillExpire(let connection, _): try? await engine.renewToken(token, connection: connection)
            default: break
            }
        }
    }
    try await Task.sleep(for: .seconds(5))
    try await engine.setClientRole(.audience)
    try await engine.leaveChannel()
    _ = try await rooms.closeRoom(room.roomID, uid: 1)
    await rooms.shutdown()
    await engine.shutdown()
    watch.cancel()
}

let arguments = CommandLine.arguments
if arguments.count >= 3 {
    do {
        try await run(seed: arguments[1], token: arguments[2], channel: arguments.count > 3 ? arguments[3] : "sdk-only")
    } catch let error as ShowroomError {
        print("failed: \(error) (code \(error.code.rawValue), channel full: \(error.code == ShowroomError.Code.channelFull))")
    } catch {
        print("failed: \(error)")
    }
} else {
    print("usage: sdk-only-app SEED TOKEN [CHANNEL]")
}
