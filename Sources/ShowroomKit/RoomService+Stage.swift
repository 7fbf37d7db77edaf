// The room layer doing for the app what the seeds' apps do by hand: going on and off the stage
// with a co-host seat, and following a PK's peer host when the room's PK media is "subscribe".

extension RoomService {
    /// Keeps `connection` on the room's stage while its uid holds a co-host seat: when seated it
    /// becomes a broadcaster publishing camera and microphone; when the seat ends (stopped, or the
    /// co-host left) it becomes audience again. The edges enforce the seat whatever the client
    /// does; this keeps the engine's role in step. Cancel the task to stop following.
    ///
    /// - Parameters:
    ///   - roomID: The room (whose channel `connection` is in).
    ///   - engine: The engine holding `connection`.
    ///   - connection: The user's connection to the room's channel.
    ///   - onChange: Told `true` once on stage, `false` once off it, with the seat.
    ///   - onRefused: Told why the edge refused to let the seated user broadcast, once it gave up
    ///     (the seat reaches the edges from the room's coordinator, and may come after the room's
    ///     event: `NOT_ON_STAGE` is tried again for a few seconds first).
    public func followSeat(roomID: String, engine: ShowroomEngine, connection: ChannelConnection,
                           onChange: (@Sendable (_ onStage: Bool, _ seat: CoHostSeat) -> Void)? = nil,
                           onRefused: (@Sendable (_ seat: CoHostSeat, _ error: ShowroomError) -> Void)? = nil) -> Task<Void, Never> {
        Task {
            var seated: CoHostSeat?
            for await event in events(for: roomID) {
                let room: Room
                switch event {
                case .snapshot(let current): room = current
                case .interaction(let step) where step.kind == .coHostStarted || step.kind == .coHostStopped: room = step.room
                default: continue
                }
                let seat: CoHostSeat? = if case .coHosting(let seats) = room.interaction {
                    seats.first { $0.uid == connection.uid }
                } else {
                    nil
                }
                if let seat, seated?.id != seat.id {
                    var onStage = ChannelMediaOptions.broadcaster
                    onStage.publishAudio = true
                    onStage.publishVideo = true
                    if let refusal = await Self.goOnStage(engine: engine, options: onStage, connection: connection) {
                        onRefused?(seat, refusal)
                    } else {
                        seated = seat
                        onChange?(true, seat)
                    }
                } else if seat == nil, let old = seated {
                    try? await engine.setClientRole(.audience, connection: connection)
                    seated = nil
                    onChange?(false, old)
                }
            }
        }
    }

    /// Joins a PK peer's channel as audience; a refusal another attempt may lift (the peer's
    /// channel being placed or moved, an edge going away) is tried again with backoff for up to
    /// 3 s, so the audience is not left without the peer for the whole PK.
    private static func joinPeer(engine: ShowroomEngine, token: String, connection: ChannelConnection) async -> Bool {
        let refusal = await retrying(for: .seconds(3), from: .milliseconds(100), upTo: .milliseconds(800),
                                     while: { !EngineState.refusalIsFinal($0) && $0.code != .alreadyJoined }) { () throws(ShowroomError) in
            _ = try await engine.joinChannelEx(token: token, connection: connection, options: .audience)
        }
        return refusal == nil
    }

    /// Switches the connection to broadcaster; a `NOT_ON_STAGE` refusal is tried again with backoff
    /// for up to 5 s, since the edge hears of the seat from the coordinator, not from this event.
    ///
    /// - Returns: The refusal it gave up on, or nil once on stage.
    private static func goOnStage(engine: ShowroomEngine, options: ChannelMediaOptions, connection: ChannelConnection) async -> ShowroomError? {
        await retrying(for: .seconds(5), from: .milliseconds(50), upTo: .milliseconds(500), while: { $0.code == .notOnStage }) { () throws(ShowroomError) in
            try await engine.updateChannelEx(options: options, connection: connection)
        }
    }

    /// Runs `attempt` until it succeeds, its refusal is not one `retryable` names, or `window`
    /// has passed, sleeping between tries from `first` doubling up to `longest`.
    ///
    /// - Returns: The refusal it gave up on, or nil once `attempt` succeeded.
    private static func retrying(for window: Duration, from first: Duration, upTo longest: Duration,
                                 while retryable: (ShowroomError) -> Bool,
                                 _ attempt: () async throws(ShowroomError) -> Void) async -> ShowroomError? {
        let deadline = ContinuousClock.now + window
        var delay = first
        while true {
            do throws(ShowroomError) {
                try await attempt()
                return nil
            } catch {
                guard retryable(error), ContinuousClock.now + delay < deadline, !Task.isCancelled else { return error }
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, longest)
        }
    }

    /// Follows the room's PKs whose media mode is ``PK/MediaMode/subscribe``: when one starts, the
    /// engine joins the peer room's channel as audience (as `uid`, with the token `token` gives
    /// for that channel), so the peer host's tracks arrive there; when it ends, it leaves that
    /// channel. In forward mode nothing is needed (the peer host comes into the room's own channel).
    /// Cancel the task to stop following.
    ///
    /// - Parameter onJoined: Told each peer connection once joined (to set its sinks first,
    ///   call ``ShowroomEngine/setupRemoteVideo(uid:connection:sink:)`` before; the connection is
    ///   `ChannelConnection(channel: pk.peerChannel, uid: uid)`).
    public func followPK(roomID: String, engine: ShowroomEngine, uid: UInt32,
                         token: @escaping @Sendable (_ channel: String) async throws -> String,
                         onJoined: (@Sendable (PK, ChannelConnection) -> Void)? = nil) -> Task<Void, Never> {
        Task {
            var joined: (pk: PK, connection: ChannelConnection)?
            for await event in events(for: roomID) {
                let room: Room
                switch event {
                case .snapshot(let current): room = current
                case .interaction(let step) where step.kind == .pkStarted || step.kind == .pkEnded: room = step.room
                default: continue
                }
                let pk: PK? = if case .pk(let current) = room.interaction, current.mediaMode == .subscribe { current } else { nil }
                if let old = joined, old.pk.id != pk?.id {
                    try? await engine.leaveChannelEx(old.connection)
                    joined = nil
                }
                if let pk, joined == nil, let token = try? await token(pk.peerChannel) {
                    let connection = ChannelConnection(channel: pk.peerChannel, uid: uid)
                    if await Self.joinPeer(engine: engine, token: token, connection: connection) {
                        joined = (pk, connection)
                        onJoined?(pk, connection)
                    }
                }
            }
            if let old = joined { try? await engine.leaveChannelEx(old.connection) }
        }
    }
}
