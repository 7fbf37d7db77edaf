/// The requests a client sends an edge; a reply names its request's kind so the shell can build
/// the response envelope (``EdgeCodec/messageKind(of:)``).
public enum EdgeRequestKind: Sendable, Hashable, CaseIterable {
    /// `ChannelPlane.openSession(_:requestID:clientID:sdkVersion:now:)`
    case openSession
    /// `ChannelPlane.closeSession(_:requestID:now:)`
    case closeSession
    /// `ChannelPlane.heartbeat(_:requestID:clientTime:now:)`
    case heartbeat
    /// `ChannelPlane.join(_:requestID:channel:uid:role:options:grant:now:)`
    case join
    /// `ChannelPlane.leave(_:requestID:channel:now:)`
    case leave
    /// `ChannelPlane.updateOptions(_:requestID:channel:update:now:)`
    case updateOptions
    /// `ChannelPlane.setRole(_:requestID:channel:role:now:)`
    case setRole
    /// `ChannelPlane.renewToken(_:requestID:channel:grant:now:)`
    case renewToken
    /// `ChannelPlane.subscribe(_:requestID:track:now:)`
    case subscribe
    /// `ChannelPlane.unsubscribe(_:requestID:track:now:)`
    case unsubscribe
    /// `ChannelPlane.muteRemote(_:requestID:track:muted:now:)`
    case muteRemote
    /// `ChannelPlane.enableVolumeIndication(_:requestID:config:now:)`
    case enableVolumeIndication
    /// `ChannelPlane.sendStreamMessage(_:requestID:channel:streamID:data:now:)`
    case sendStreamMessage
    /// `ChannelPlane.preload(_:requestID:channel:uid:grant:now:)`
    case preload
}
