/// The kind of a media track. A publisher has at most one track of each kind per channel.
public enum TrackKind: Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Opus audio: frames decode on their own, no GOP cache.
    case audio
    /// VP8/VP9 video: frames depend on the last keyframe, so the edge keeps a GOP cache.
    case video

    /// `audio` or `video`.
    public var description: String {
        switch self {
        case .audio: "audio"
        case .video: "video"
        }
    }
}
