/// A track within one channel: publisher uid and kind.
struct TrackKey: Hashable, Sendable, Comparable {
    var uid: UInt32
    var kind: TrackKind

    static func < (lhs: TrackKey, rhs: TrackKey) -> Bool {
        (lhs.uid, lhs.kind) < (rhs.uid, rhs.kind)
    }

    func id(in channel: String) -> TrackID {
        TrackID(channel: channel, uid: uid, kind: kind)
    }
}
