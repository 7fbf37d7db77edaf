/// What ``ForwardBook`` asks its shell to do.
public enum ForwardDirective: Sendable, Hashable {
    /// Ask a coordinator where `destination` is hosted (`CHANNEL_PLACE` with the token), avoiding
    /// `unreachableEdge`; answer with ``ForwardBook/placed(_:destination:attempt:_:now:)``.
    case place(ForwardKey, destination: String, token: String, attempt: UInt64, unreachableEdge: String?)
    /// Join `destination` on `edge` through the forward's link to it (opened if needed), as the
    /// forwarded uid, broadcaster; answer with ``ForwardBook/joined(_:destination:attempt:_:now:)``.
    case join(ForwardKey, destination: String, token: String, on: ForwardEdge, attempt: UInt64)
    /// Leave `destination` on `edge` (and close the link once it holds no channel).
    case leave(ForwardKey, destination: String, on: ForwardEdge)
    /// Tell the source session that a destination changed state (`FORWARD_STATE_CHANGED`).
    case notify(SessionID, ForwardStateChange)
    /// Ask the source publisher for a keyframe of its video.
    case requestKeyframe(TrackID, from: SessionID)
}
