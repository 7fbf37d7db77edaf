#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One member's suspicion timer with Lifeguard's dynamic timeout.
///
/// The timeout starts at `maxTimeout` and shrinks logarithmically toward `minTimeout` as
/// independent confirmations (suspect messages from other members) arrive:
/// `timeout = max(min, max − (max − min) · log(c + 1) / log(k + 1))` for `c` of the `k` expected
/// confirmations, always measured from when the suspicion started. A real failure is seen by
/// every prober and confirmed quickly; a lone suspicion from a member with a bad link or a stalled
/// scheduler waits long enough for the suspect to hear of it and refute.
struct Suspicion: Sendable {
    /// When the local member started suspecting.
    let startedAt: Duration
    /// Lower bound, reached with `expectedConfirmations` confirmations.
    let minTimeout: Duration
    /// The timeout without any confirmation.
    let maxTimeout: Duration
    /// Confirmations needed to reach the minimum (Lifeguard's k); 0 means start at the minimum.
    let expectedConfirmations: Int
    /// Members that suspected it, the first one included; only distinct ones count.
    private(set) var suspectors: [MemberID]
    /// When the member is declared dead unless it refutes first.
    private(set) var deadline: Duration

    /// Starts a suspicion raised by `from`.
    init(from: MemberID, startedAt: Duration, minTimeout: Duration, maxTimeout: Duration, expectedConfirmations: Int) {
        self.startedAt = startedAt
        self.minTimeout = minTimeout
        self.maxTimeout = Swift.max(minTimeout, maxTimeout)
        self.expectedConfirmations = Swift.max(0, expectedConfirmations)
        self.suspectors = [from]
        self.deadline = startedAt
        self.deadline = startedAt + timeout
    }

    /// Independent confirmations so far (suspectors other than the first).
    var confirmations: Int { suspectors.count - 1 }

    /// The current total timeout from ``startedAt``.
    var timeout: Duration {
        let k = expectedConfirmations
        guard k > 0 else { return minTimeout }
        let c = Swift.min(confirmations, k)
        let fraction = log(Double(c) + 1) / log(Double(k) + 1)
        let raw = maxTimeout - (maxTimeout - minTimeout) * fraction
        return Swift.max(minTimeout, raw)
    }

    /// Records that `from` also suspects the member.
    ///
    /// - Returns: True if `from` is a new suspector (the caller re-broadcasts its suspicion so
    ///   others can count it too); false if it was already counted or enough have been counted.
    mutating func confirm(from: MemberID) -> Bool {
        guard confirmations < expectedConfirmations, !suspectors.contains(from) else { return false }
        suspectors.append(from)
        deadline = startedAt + timeout
        return true
    }
}
