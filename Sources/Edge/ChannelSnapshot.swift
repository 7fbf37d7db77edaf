/// A channel, as ``ChannelPlane/channel(_:)`` reports it (for the status tool and tests).
public struct ChannelSnapshot: Sendable, Hashable {
    /// The channel name.
    public var name: String
    /// When its first connection joined.
    public var createdAt: Duration
    /// Its connections, in join order.
    public var connections: [ConnectionSnapshot]
    /// Its published tracks, by uid and kind.
    public var tracks: [TrackSnapshot]

    /// The broadcasters' uids, in join order (the visible users).
    public var broadcasters: [UInt32] {
        connections.filter { $0.role == .broadcaster }.map(\.uid)
    }

    /// The audience members' uids, in join order.
    public var audience: [UInt32] {
        connections.filter { $0.role == .audience }.map(\.uid)
    }

    /// A published track.
    ///
    /// - Parameters:
    ///   - uid: The publisher.
    ///   - kind: Audio or video.
    /// - Returns: The track, or `nil` if not published.
    public func track(uid: UInt32, kind: TrackKind) -> TrackSnapshot? {
        tracks.first { $0.track.uid == uid && $0.track.kind == kind }
    }
}
