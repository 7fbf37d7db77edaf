/// A change a subscriber went through while frames were being delivered, collected by
/// ``TrackForwarder`` for the plane to turn into events.
public struct SubscriberTransition: Sendable, Hashable {
    /// What happened.
    public enum Change: Sendable, Hashable {
        /// The video delivery state changed (decoding after a keyframe, frozen on congestion).
        case videoState(RemoteVideoState, RemoteVideoStateReason)
        /// The send callback reported the subscriber gone.
        case unreachable
    }

    /// The subscriber.
    public var session: SessionID
    /// What happened.
    public var change: Change

    /// Creates a transition.
    ///
    /// - Parameters:
    ///   - session: The subscriber.
    ///   - change: What happened.
    public init(session: SessionID, change: Change) {
        self.session = session
        self.change = change
    }
}
