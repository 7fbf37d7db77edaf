/// The state of one channel connection's link to its edge (`connectionStateChanged` in the seeds).
public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Not connected: before joining, after leaving, after the edge closed the connection.
    case disconnected
    /// Joining: opening the edge session, sending the join.
    case connecting
    /// Joined; the edge answers.
    case connected
    /// The edge has not been heard from for several heartbeat intervals (still waiting), or it
    /// failed and the engine is rejoining the channel on another edge.
    case reconnecting
    /// The connection is gone for good (join refused, no edge took the rejoin within
    /// ``EngineConfiguration/rejoinWindow``).
    case failed

    /// The state's name.
    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .connecting: "connecting"
        case .connected: "connected"
        case .reconnecting: "reconnecting"
        case .failed: "failed"
        }
    }
}

/// Why a connection's state changed.
public enum ConnectionStateReason: Sendable, Hashable {
    /// The app called join.
    case joining
    /// The edge accepted the join.
    case joinSucceeded
    /// The edge refused the join, or it could not be reached; the error says which.
    case joinFailed(ShowroomError)
    /// The edge went silent for several heartbeat intervals.
    case interrupted
    /// The edge is heard from again after an interruption.
    case recovered
    /// The edge failed this connection: the connection to it broke (a killed edge), nothing was
    /// heard from it for its heartbeat timeout, or it closed the session to go away (draining).
    /// With ``ConnectionState/reconnecting`` the engine is rejoining elsewhere; with
    /// ``ConnectionState/failed`` it gave up after ``EngineConfiguration/rejoinWindow``.
    case edgeLost
    /// The connection was rejoined on another edge after its edge failed.
    case rejoinSucceeded
    /// The edge closed the connection or the session (uid replaced, join privilege expired,
    /// session replaced or timed out, edge shutting down).
    case closedByEdge(ShowroomError)
    /// The app left the channel or shut the engine down.
    case left
}

/// Everything an engine reports, in the order it happened, on ``ShowroomEngine/events``.
/// The seeds' delegate callbacks, one case each.
public enum EngineEvent: Sendable, Hashable {
    /// A join succeeded (`didJoinChannel`): `elapsed` since the join call.
    case joined(ChannelConnection, elapsed: Duration)
    /// A broadcaster is in the channel (`didJoinedOfUid`; also for those already there on join).
    case userJoined(ChannelConnection, uid: UInt32)
    /// A broadcaster left (`didOfflineOfUid`).
    case userOffline(ChannelConnection, uid: UInt32, reason: UserOfflineReason)
    /// A remote track can be subscribed to.
    case remoteTrackPublished(ChannelConnection, uid: UInt32, track: TrackKind)
    /// A remote track stopped being published.
    case remoteTrackUnpublished(ChannelConnection, uid: UInt32, track: TrackKind)
    /// The first frame of a remote user's video decoded (`firstRemoteVideoFrameOfUid`), with the
    /// time since the join call (or since the track was set up, when later). After an automatic
    /// rejoin it is reported again for every remote user, with the time since the edge was lost.
    case firstRemoteVideoFrameDecoded(ChannelConnection, uid: UInt32, width: Int, height: Int, elapsedSinceJoin: Duration)
    /// The connection sent its first frame of `track` to its edge (`firstLocalVideoFramePublished`,
    /// `firstLocalAudioFramePublished`), with the time since the join call. Once per join.
    case firstLocalFramePublished(ChannelConnection, track: TrackKind, elapsedSinceJoin: Duration)
    /// The delivery state of a remote video track changed (`remoteVideoStateChangedOfUid`).
    case remoteVideoStateChanged(ChannelConnection, uid: UInt32, state: RemoteVideoState, reason: RemoteVideoStateReason)
    /// The loudest speakers of a channel (`reportAudioVolumeIndicationOfSpeakers`).
    case volumeIndication(ChannelConnection, speakers: [SpeakerVolume])
    /// A stream message from another user (`receiveStreamMessageFromUid`).
    case streamMessage(ChannelConnection, uid: UInt32, streamID: UInt32, sequence: UInt32, data: [UInt8])
    /// The token runs out in `expiresIn` (`tokenPrivilegeWillExpire`): call
    /// ``ShowroomEngine/renewToken(_:connection:)``.
    case tokenWillExpire(ChannelConnection, expiresIn: Duration)
    /// A privilege of the token ran out: its track stopped, or (join) the connection closes.
    case privilegeExpired(ChannelConnection, privilege: Privilege)
    /// The edge ended the connection; the engine no longer holds it.
    case connectionClosed(ChannelConnection, error: ShowroomError)
    /// A connection was rejoined on another edge after its edge failed
    /// (`onRejoinChannelSuccess`): `elapsed` since the failure was noticed. Subscriptions, remote
    /// mutes, sinks and local publishing are as they were; remote users are announced again
    /// (``userJoined(_:uid:)``) as the new edge reports them.
    case rejoinedChannel(ChannelConnection, elapsed: Duration)
    /// A subscriber needs a keyframe (a new viewer, one recovering from a gap, a rejoin) while the
    /// app pushes encoded video: push one soon. The engine's own encoder handles this itself.
    case keyframeRequested
    /// A connection's link state changed (`connectionChangedToState`).
    case connectionStateChanged(ChannelConnection, state: ConnectionState, reason: ConnectionStateReason)
    /// The edge refused something sent one-way (a media frame, a stream message), at most once a
    /// second per kind: e.g. `ROLE_FORBIDS_PUBLISH` (E3001) for an audience member's frames; or
    /// an attempt of an automatic rejoin failed (the connection stays reconnecting and the engine
    /// tries again after its backoff).
    case error(ChannelConnection?, ShowroomError)
    /// A destination of this connection's forward changed state
    /// (``ShowroomEngine/startForwardStream(to:connection:)``; Agora's
    /// `channelMediaRelayStateDidChange`, Volcengine's `onForwardStreamStateChanged`): one event
    /// per destination state change, with the destination channel, state, reason and error.
    case forwardStateChanged(ChannelConnection, destination: ForwardDestinationStatus)
}

extension EngineEvent {
    /// The connection the event is about, if it is about one.
    public var connection: ChannelConnection? {
        switch self {
        case .joined(let connection, _), .userJoined(let connection, _), .userOffline(let connection, _, _),
             .remoteTrackPublished(let connection, _, _), .remoteTrackUnpublished(let connection, _, _),
             .firstRemoteVideoFrameDecoded(let connection, _, _, _, _), .firstLocalFramePublished(let connection, _, _),
             .remoteVideoStateChanged(let connection, _, _, _),
             .volumeIndication(let connection, _), .streamMessage(let connection, _, _, _, _),
             .tokenWillExpire(let connection, _), .privilegeExpired(let connection, _), .connectionClosed(let connection, _),
             .rejoinedChannel(let connection, _), .connectionStateChanged(let connection, _, _),
             .forwardStateChanged(let connection, _):
            connection
        case .error(let connection, _): connection
        case .keyframeRequested: nil
        }
    }
}
