/// Where a subscriber of a track stands.
public enum SubscriberState: Sendable, Hashable {
    /// Frames are delivered as they come (always so for audio).
    case flowing
    /// Video only: deltas are skipped until a keyframe reaches the subscriber (from the GOP cache
    /// or live). The reason is the one reported when it starts decoding: why it was waiting
    /// (subscribed, unmuted, recovering from congestion…).
    case awaitingKeyframe(RemoteVideoStateReason)
}
