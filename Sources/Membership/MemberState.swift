/// A member's state as one member sees it (SWIM plus an explicit "left" for graceful leaves).
public enum MemberState: String, Sendable, CaseIterable {
    /// Answers its probes (or has refuted every suspicion so far).
    case alive
    /// Missed a probe; declared ``dead`` unless it refutes before the suspicion timeout.
    case suspect
    /// The suspicion timed out. Kept as a tombstone for the retention period.
    case dead
    /// Left gracefully. Kept as a tombstone for the retention period; never reported as dead.
    case left

    /// Dead or left: a tombstone that only a higher incarnation brings back.
    var isTombstone: Bool { self == .dead || self == .left }

    /// Precedence at equal incarnations: alive < suspect < dead < left.
    var precedence: Int {
        switch self {
        case .alive: 0
        case .suspect: 1
        case .dead: 2
        case .left: 3
        }
    }
}
