/// Incarnation arithmetic and plausibility, in one place: incarnations arrive from the network, so
/// nothing here can trap whatever a peer sends.
///
/// An honest member starts at 0 and adds one per refutation or metadata change, so its
/// incarnation moves by small steps and stays far below `UInt64.max` for the life of any cluster.
/// A value that jumps far above what is known of a member, or that no honest member could have
/// reached, is therefore forged (or a member's bug) and is refused (see ``Membership``).
enum Incarnation {
    /// The incarnation after `value`: one more, saturating at `UInt64.max` instead of trapping.
    /// Unreachable by honest members; the plausibility checks keep forged values far from it.
    static func successor(of value: UInt64) -> UInt64 {
        value == .max ? .max : value + 1
    }

    /// Whether `value` is at most `bound` above `known` (any value at or below `known` is).
    /// Never overflows.
    static func isWithinJump(_ value: UInt64, of known: UInt64, bound: UInt64) -> Bool {
        value <= known || value - known <= bound
    }
}
