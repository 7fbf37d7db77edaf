internal import EdgeProtocol

/// One edge session of the engine, by the order it was opened: a session closing and a new one
/// to the same edge are told apart, and a timer or answer of a closed one finds nothing.
struct SessionSerial: Hashable, Comparable, CustomStringConvertible {
    let value: UInt64
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    var description: String { "session#\(value)" }
}

/// An app call the shell waits on; ``EngineDirective/complete(_:_:)`` ends it.
struct EngineTicket: Hashable {
    let value: UInt64
}

/// A join the engine sends: the app's first join of a connection, a rejoin after its edge
/// failed, or a move off a draining edge. Each names what it is for, so an answer that comes
/// after the attempt was given up finds it not current.
enum JoinAttempt: Hashable {
    case first(record: UInt64, ticket: EngineTicket, redirected: Bool)
    case rejoin(attempt: UInt64, redirected: Bool)
    case move(attempt: UInt64)
}

/// What a request the state sends is for; the shell hands its answer back with it
/// (``EngineState/answered(_:on:_:now:)``).
enum EngineRequestPurpose: Hashable {
    case openSession
    case join(channel: String, JoinAttempt)
    /// The app left: `ticket` ends when the edge answers.
    case leave(channel: String, ticket: EngineTicket)
    /// Leaving a channel on an edge that no longer serves the connection (a move, a late join).
    case leaveQuietly(channel: String)
    case closeSession
    case preload(ticket: EngineTicket)
    /// Restoring a subscription or remote mute on a new edge: a refusal is reported as an error.
    case restore(ChannelConnection)
    /// Nobody waits for the answer (volume indication on a new session).
    case none
}

/// A timer the state asks for; when it fires the shell hands it back (``EngineState/fired(_:now:)``).
enum EngineTimer: Hashable {
    /// Send a heartbeat and judge the edge by its silence.
    case heartbeat(SessionSerial)
    /// A warm session's idle time is over, if nothing used it since (its idle generation).
    case idle(SessionSerial, generation: UInt64)
    /// The backoff before the next rejoin attempt is over.
    case rejoinRetry(channel: String, attempt: UInt64)
    /// A viewer's move waited long enough for the new edge's first keyframe.
    case moveSwitch(channel: String, attempt: UInt64)
}

/// Why the state asks where a channel is (``EngineDirective/place(channel:_:avoiding:for:)``).
enum PlacementPurpose: Hashable {
    case rejoin(attempt: UInt64)
    case move(attempt: UInt64)
}

/// What ``EngineState`` asks its shell to do, in order.
enum EngineDirective {
    /// Open a socket to `edge` for the session (the open request follows as its own directive);
    /// if it cannot be opened, hand back ``EngineState/sessionFailed(_:_:now:)``.
    case openSession(SessionSerial, EdgeAddress)
    /// Send a request on the session and hand back its answer, the timeout (`timeout`, or the
    /// configured one) or why it could not be sent, exactly once.
    case request(EdgeRequest, on: SessionSerial, for: EngineRequestPurpose, timeout: Duration? = nil)
    /// Send a heartbeat (its answer is only heard, not awaited).
    case heartbeat(SessionSerial)
    /// Send `EDGE_MOVED_OUT`: a draining edge need not wait for this session.
    case movedOut(SessionSerial)
    /// Close the session's socket and fail its requests still waiting with `because`.
    case closeSession(SessionSerial, because: ShowroomError)
    case emit(EngineEvent)
    /// End an app call: the connection for a join, nil for the others.
    case complete(EngineTicket, Result<ChannelConnection?, ShowroomError>)
    /// Ask the placement (off the loop) for an edge for the channel other than `avoiding`, and
    /// hand back ``EngineState/placed(channel:_:_:now:)``.
    case place(channel: String, PlacementCredentials, avoiding: EdgeAddress?, for: PlacementPurpose)
    case schedule(EngineTimer, after: Duration)
    /// Drop the sinks and kept frames of a channel the engine no longer holds.
    case forgetMedia(channel: String)
    /// Drop the frames kept for a remote video track that went away.
    case forgetPendingVideo(channel: String, uid: UInt32)
    /// What the connections publish may have changed: start or stop capture.
    case refreshPublishing
    /// A new edge has no GOP of this engine's video: the next frame is a keyframe.
    case wantKeyframe
}

/// What to do with a media frame that arrived (``EngineState/mediaArrived(channel:from:isKeyframe:now:)``).
enum MediaVerdict {
    case drop
    /// Hand it to the connection's sinks; first frames count from `joinStarted`.
    case accept(ChannelConnection, joinStarted: ContinuousClock.Instant)
    /// Accept it: it switched a moving connection over to its new edge, which needs these done.
    case acceptAfterSwitch([EngineDirective], ChannelConnection, joinStarted: ContinuousClock.Instant)
}
