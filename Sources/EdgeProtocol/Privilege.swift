/// The privileges of an RTC token (AccessToken2 numbers them 1–4 in this order).
public enum Privilege: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Join the channel (and stay in it).
    case join
    /// Publish an audio track.
    case publishAudio
    /// Publish a video track.
    case publishVideo
    /// Send stream messages.
    case publishData

    /// The publish privilege a track kind needs.
    ///
    /// - Parameter kind: A track kind.
    /// - Returns: ``publishAudio`` or ``publishVideo``.
    public static func publish(_ kind: TrackKind) -> Privilege {
        switch kind {
        case .audio: .publishAudio
        case .video: .publishVideo
        }
    }

    /// The privilege's name as in logs: `join`, `publish-audio`, …
    public var description: String {
        switch self {
        case .join: "join"
        case .publishAudio: "publish-audio"
        case .publishVideo: "publish-video"
        case .publishData: "publish-data"
        }
    }
}
