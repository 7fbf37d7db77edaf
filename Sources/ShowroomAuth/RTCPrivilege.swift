/// What an RTC (service type 1) token lets its holder do in a channel, with AccessToken2's
/// numbering.
///
/// Each privilege in a token has its own expiry, in seconds after the token's issue time; 0 means
/// "as long as the token itself" (see ``TokenGrant/expiresAt(_:)``).
public enum RTCPrivilege: UInt16, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Join the channel (and subscribe). Every RTC token needs it.
    case joinChannel = 1
    /// Publish an audio track.
    case publishAudioStream = 2
    /// Publish a video track.
    case publishVideoStream = 3
    /// Send data-stream messages.
    case publishDataStream = 4

    /// The privilege's name as in the reference builders, e.g. "joinChannel".
    public var description: String {
        switch self {
        case .joinChannel: return "joinChannel"
        case .publishAudioStream: return "publishAudioStream"
        case .publishVideoStream: return "publishVideoStream"
        case .publishDataStream: return "publishDataStream"
        }
    }
}
