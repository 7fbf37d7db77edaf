/// A client's request to an edge, decoded from the wire (``EdgeCodec/request(from:)``) with the
/// defaults of `session.proto` applied. Tokens are still raw here: the shell verifies them (see
/// `ChannelPlane.handle(_:from:requestID:now:verifyToken:)`).
public enum EdgeRequest: Sendable, Hashable {
    /// `EDGE_OPEN_SESSION`.
    case openSession(clientID: String, sdkVersion: String)
    /// `EDGE_CLOSE_SESSION`.
    case closeSession
    /// `EDGE_HEARTBEAT`, with the client's clock to echo.
    case heartbeat(clientTime: UInt64)
    /// `JOIN_CHANNEL`, role and options resolved (unset options take the role's defaults).
    case join(channel: String, uid: UInt32, token: String, role: ClientRole, options: MediaOptions)
    /// `LEAVE_CHANNEL`.
    case leave(channel: String)
    /// `UPDATE_CHANNEL_OPTIONS`.
    case updateOptions(channel: String, update: MediaOptionsUpdate)
    /// `SET_CLIENT_ROLE`.
    case setRole(channel: String, role: ClientRole)
    /// `RENEW_CHANNEL_TOKEN`.
    case renewToken(channel: String, token: String)
    /// `SUBSCRIBE_TRACK`.
    case subscribe(TrackID)
    /// `UNSUBSCRIBE_TRACK`.
    case unsubscribe(TrackID)
    /// `MUTE_REMOTE_TRACK`.
    case muteRemote(TrackID, muted: Bool)
    /// `ENABLE_VOLUME_INDICATION`; `nil` disables.
    case enableVolumeIndication(VolumeIndicationConfig?)
    /// `SEND_STREAM_MESSAGE`.
    case sendStreamMessage(channel: String, streamID: UInt32, data: [UInt8])
    /// `PRELOAD_CHANNEL`: check the token now, for a join soon.
    case preload(channel: String, uid: UInt32, token: String)

    /// The request's kind.
    public var kind: EdgeRequestKind {
        switch self {
        case .openSession: .openSession
        case .closeSession: .closeSession
        case .heartbeat: .heartbeat
        case .join: .join
        case .leave: .leave
        case .updateOptions: .updateOptions
        case .setRole: .setRole
        case .renewToken: .renewToken
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .muteRemote: .muteRemote
        case .enableVolumeIndication: .enableVolumeIndication
        case .preload: .preload
        case .sendStreamMessage: .sendStreamMessage
        }
    }
}
