import ShowroomWire

/// A one-way message from the edge to a client (`EdgeDirective.send(_:to:)`); each case is one
/// message kind of `proto/showroom/edge/session.proto` (``EdgeCodec/envelope(event:)``).
public enum EdgeEvent: Sendable, Hashable {
    /// A broadcaster is in the channel: it joined or became broadcaster, or it was there when the
    /// receiver joined. Never sent about audience members.
    case userJoined(channel: String, uid: UInt32)
    /// A broadcaster left the channel's visible users.
    case userOffline(channel: String, uid: UInt32, reason: UserOfflineReason)
    /// A remote track can be subscribed to.
    case remoteTrackPublished(TrackID)
    /// A remote track is no longer published (not sent when its publisher goes offline).
    case remoteTrackUnpublished(TrackID)
    /// The delivery state of a subscribed remote video track changed.
    case remoteVideoStateChanged(TrackID, state: RemoteVideoState, reason: RemoteVideoStateReason)
    /// The loudest speakers of a channel, loudest first.
    case volumeIndication(channel: String, speakers: [SpeakerVolume])
    /// A stream message from another user of the channel.
    case streamMessage(channel: String, uid: UInt32, streamID: UInt32, sequence: UInt32, data: [UInt8])
    /// The first privilege in use expires in `expiresIn`: renew the token.
    case tokenWillExpire(channel: String, expiresIn: Duration)
    /// A privilege ran out: its track stopped, or (join) the connection closes.
    case privilegeExpired(channel: String, privilege: Privilege)
    /// The edge ended this channel connection.
    case connectionClosed(channel: String, reason: ShowroomError)
    /// The edge ended the session.
    case sessionClosed(reason: ShowroomError)
    /// The edge is draining (shutting down): it takes no new joins and closes the session within
    /// `within`, serving it until then, so the client moves its connections first (make before
    /// break: join through the cluster elsewhere, then leave here).
    case draining(within: Duration)
    /// A one-way message (a media frame, a stream message, a request without request id) was
    /// refused.
    case error(ShowroomError, channel: String, track: TrackKind?)
    /// A destination of a forward of this client's tracks changed state.
    case forwardStateChanged(ForwardStateChange)
}
