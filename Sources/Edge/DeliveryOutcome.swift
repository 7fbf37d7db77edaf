/// How one send to a subscriber went, as the shell reports it from its send callback (the
/// ZeroMQ wrapper's `SendOutcome`, with real errors folded into ``unreachable``).
public enum DeliveryOutcome: Sendable, Hashable {
    /// Queued whole.
    case sent
    /// The subscriber is at its high-water mark; nothing was queued. A video subscriber then
    /// skips frames until the next keyframe, and the publisher is asked for one.
    case wouldBlock
    /// The subscriber is gone (no such peer); its session is dropped.
    case unreachable
}
