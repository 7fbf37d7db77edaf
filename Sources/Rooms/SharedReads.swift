/// Reads that ask other nodes (a channel's users, from its edges), shared between the callers
/// asking the same thing at once. Pure: the shell asks when told to and hands the answer out.
///
/// A read that arrives while the same question is out waits for the next asking, which starts as
/// soon as the one out is answered: every caller gets an answer asked after it arrived (never an
/// older one), and a popular question costs one round to the edges per round trip, however many
/// callers ask it.
public struct SharedReads<Question: Hashable, Caller> {
    private struct Rounds {
        /// The callers of the round that is out.
        var out: [Caller]
        /// The callers that arrived after it went out, for the next round.
        var next: [Caller] = []
    }

    private var rounds: [Question: Rounds] = [:]

    /// Creates an empty set.
    public init() {}

    /// Questions with a round out.
    public var questionsOut: Int { rounds.count }

    /// A caller asks `question`.
    ///
    /// - Returns: True if the shell asks now (no round of it is out); false if the caller waits
    ///   for the next round.
    public mutating func ask(_ question: Question, for caller: Caller) -> Bool {
        guard rounds[question] != nil else {
            rounds[question] = Rounds(out: [caller])
            return true
        }
        rounds[question]!.next.append(caller)
        return false
    }

    /// The round out for `question` was answered.
    ///
    /// - Returns: The callers to hand that answer to, and whether the shell asks again now (for
    ///   the callers that arrived meanwhile).
    public mutating func answered(_ question: Question) -> (callers: [Caller], askAgain: Bool) {
        guard let round = rounds.removeValue(forKey: question) else { return ([], false) }
        guard !round.next.isEmpty else { return (round.out, false) }
        rounds[question] = Rounds(out: round.next)
        return (round.out, true)
    }
}
