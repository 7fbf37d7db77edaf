/// A published track: a publisher's audio or video in one channel.
public struct TrackID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The channel.
    public var channel: String
    /// The publisher's uid.
    public var uid: UInt32
    /// Audio or video.
    public var kind: TrackKind

    /// Creates a track id.
    ///
    /// - Parameters:
    ///   - channel: The channel.
    ///   - uid: The publisher's uid.
    ///   - kind: Audio or video.
    public init(channel: String, uid: UInt32, kind: TrackKind) {
        self.channel = channel
        self.uid = uid
        self.kind = kind
    }

    /// Orders by channel, uid, kind.
    public static func < (lhs: TrackID, rhs: TrackID) -> Bool {
        (lhs.channel, lhs.uid, lhs.kind) < (rhs.channel, rhs.uid, rhs.kind)
    }

    /// `channel/uid/kind`.
    public var description: String { "\(channel)/\(uid)/\(kind)" }
}
