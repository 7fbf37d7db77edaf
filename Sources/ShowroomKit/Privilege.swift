/// The privileges of an RTC token (AccessToken2 numbers them 1–4 in this order), as
/// ``EngineEvent/privilegeExpired(_:privilege:)`` names them.
public enum Privilege: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Join the channel (and stay in it).
    case join
    /// Publish an audio track.
    case publishAudio
    /// Publish a video track.
    case publishVideo
    /// Send stream messages.
    case publishData

    /// The privilege's name: `join`, `publish-audio`, …
    public var description: String {
        switch self {
        case .join: "join"
        case .publishAudio: "publish-audio"
        case .publishVideo: "publish-video"
        case .publishData: "publish-data"
        }
    }
}
