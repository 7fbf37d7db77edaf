/// The kind of a media track. A user publishes at most one track of each kind per channel.
public enum TrackKind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Opus audio.
    case audio
    /// VP8 video.
    case video

    /// `audio` or `video`.
    public var description: String {
        switch self {
        case .audio: "audio"
        case .video: "video"
        }
    }
}
