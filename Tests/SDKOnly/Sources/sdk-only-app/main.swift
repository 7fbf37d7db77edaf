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

// The README's SDK examples, as an app writes them (compiled, not run). What the README leaves to
// the app (its cells, its report, the user's touch) is stubbed here.
final class Cell { let sink = DecodingVideoSink() }
struct FeedRoom { let channel: String; let ownerUid: UInt32; let token: String }
func cellView(for anchor: AnchorInfo) -> Cell { Cell() }
func report(_ channel: String, _ actual: Duration, _ perceived: Duration) { print("\(channel): \(actual), \(perceived)") }

func instantSwitch(engine: ShowroomEngine, me: UInt32, rooms: [FeedRoom], index: Int, card: AnchorInfo, fingerStillOnCard: Bool) async {
    let loader = VideoLoader(engine: engine, localUID: me) { anchor in cellView(for: anchor).sink }
    // The feed scrolled to `index` (settled: heard as well as seen).
    loader.swipe(to: index, in: rooms.map { AnchorInfo(channel: $0.channel, uid: $0.ownerUid, token: $0.token) })
    // A card in the room list is touched: its video starts before the finger lifts.
    loader.touchDown(card)
    loader.touchUp(card, inside: fingerStillOnCard)   // inside: open the room; outside: let it go
    for await case .firstFrame(let channel, _, let actual, let perceived) in loader.events { report(channel, actual, perceived) }
    loader.cleanCache()   // leaving the feed
}

func pkAndCoHosting(
    engine: ShowroomEngine, seeds: [String], mine: String, theirs: String, me: UInt32, myToken: String,
    room: String, connection: ChannelConnection
) async throws {
    let rooms = RoomService(seeds: seeds, loop: engine.loop)
    let invitation = try await rooms.invitePK(roomID: mine, uid: me, token: myToken, peerRoomID: theirs)
    print("invited: \(invitation.id)")
    for await case .interaction(let step) in rooms.events(for: mine) where step.kind == .pkEnded { print(step) }
    // A viewer going on stage: apply, and let the room layer switch role when seated.
    let staging = rooms.followSeat(roomID: room, engine: engine, connection: connection)
    _ = try await rooms.applyForCoHosting(roomID: room, uid: me, token: myToken)
    staging.cancel()
}

// A 1v1 call with CallAPI's names and numbers, and the error codes an app decides on.
func call(engine: ShowroomEngine, seeds: [String], rtmToken: String, liveConnection: ChannelConnection) async {
    let calls = CallClient(uid: 2001, engine: engine, seeds: seeds)
    do {
        try await calls.login(token: rtmToken)
        try await calls.prepareForCall(PrepareConfig(pausesConnection: liveConnection))
        try await calls.call(remoteUserId: 1001, callType: CallType.video)
    } catch where error.code == .calleeOffline || error.code == ShowroomError.Code.callerInCall {
        print("not now: \(error.message) (E\(error.code.rawValue) \(error.code.summary))")
    } catch {
        print("failed: \(error)")
    }
    for await event in calls.events {
        if case .stateChanged(let state, let reason, let event, _) = event, state == CallState.connected {
            print("connected: \(reason.rawValue) \(event.rawValue)")
        }
    }
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
