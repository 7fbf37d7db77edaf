/// Reads that ask other nodes (a channel's users, from its edges), shared between the callers
/// asking the same thing at once, and their answers kept until the nodes say something changed.
/// Pure: the shell asks when told to, hands the answer out, and says what it heard.
///
/// - **Shared rounds.** A read that arrives while the same question is out waits for the next
///   asking, which starts as soon as the one out is answered: a popular question costs one round
///   to the nodes per round trip, however many callers ask it.
/// - **Kept answers.** A complete answer (every node asked answered) serves later callers at once
///   until one of the nodes it came from reports again, anything is heard about its topic (a
///   channel's activity), everything is forgotten (a kick or ban enforced), or ``keepMs`` pass.
///   Nodes report soon after every change (an edge within about 100 ms, and every second
///   regardless), so a kept answer is never older than the latest report of the nodes it came
///   from; an answer whose round a change overtook is handed to its callers but not kept.
public struct SharedReads<Question: Hashable, Caller, Answer> {
    /// What a caller's read does.
    public enum Read {
        /// A kept answer serves it now.
        case answered(Answer)
        /// The shell asks the nodes now (no round of the question is out).
        case askNow
        /// It waits for the round out (or the next) to be answered.
        case waits
    }

    private struct Round {
        /// What the question is about (a channel), for what is heard meanwhile.
        var topic: String
        /// The callers of the round that is out.
        var out: [Caller]
        /// The callers that arrived after it went out, for the next round.
        var next: [Caller] = []
        /// Something about the topic was heard while the round was out: its answer is not kept.
        var overtaken = false
    }

    private struct Kept {
        var answer: Answer
        var topic: String
        /// The nodes the answer came from.
        var sources: Set<String>
        var madeAtMs: Int64
    }

    /// Longest a kept answer serves without any report (a node's regular report period).
    public let keepMs: Int64
    /// Most answers kept; past it the oldest goes.
    public let maxKept: Int
    private var rounds: [Question: Round] = [:]
    private var kept: [Question: Kept] = [:]

    /// Creates an empty set.
    public init(keepMs: Int64 = 1000, maxKept: Int = 1024) {
        self.keepMs = max(0, keepMs)
        self.maxKept = max(0, maxKept)
    }

    /// Questions with a round out.
    public var questionsOut: Int { rounds.count }

    /// Answers kept now.
    public var keptCount: Int { kept.count }

    /// A caller asks `question`, about `topic`, at `nowMs`.
    public mutating func ask(_ question: Question, topic: String, for caller: Caller, nowMs: Int64) -> Read {
        if let answer = kept[question] {
            // A clock that went back counts as an old answer, not a fresh one.
            let age = nowMs.subtractingReportingOverflow(answer.madeAtMs)
            if !age.overflow, age.partialValue >= 0, age.partialValue < keepMs { return .answered(answer.answer) }
            kept[question] = nil
        }
        guard rounds[question] != nil else {
            rounds[question] = Round(topic: topic, out: [caller])
            return .askNow
        }
        rounds[question]!.next.append(caller)
        return .waits
    }

    /// The round out for `question` was answered with `answer` by `sources`; `complete` says
    /// whether every node asked answered (only such an answer is kept).
    ///
    /// - Returns: The callers to hand that answer to, and whether the shell asks again now (for
    ///   the callers that arrived meanwhile).
    public mutating func answered(_ question: Question, with answer: Answer, from sources: Set<String>, complete: Bool,
                                  nowMs: Int64) -> (callers: [Caller], askAgain: Bool) {
        guard let round = rounds.removeValue(forKey: question) else { return ([], false) }
        if complete, !round.overtaken, maxKept > 0 {
            if kept[question] == nil, kept.count >= maxKept, let oldest = kept.min(by: { $0.value.madeAtMs < $1.value.madeAtMs }) {
                kept[oldest.key] = nil
            }
            kept[question] = Kept(answer: answer, topic: round.topic, sources: sources, madeAtMs: nowMs)
        }
        guard !round.next.isEmpty else { return (round.out, false) }
        rounds[question] = Round(topic: round.topic, out: round.next)
        return (round.out, true)
    }

    /// Node `source` reported (its whole state: every answer it contributed to may be stale), or
    /// nil for a report of `topics` alone (a channel's activity): the answers it touches are
    /// dropped and the rounds out about `topics` are not kept.
    public mutating func heard(from source: String?, about topics: Set<String>) {
        // Most reports find nothing kept and nothing out: no table is rebuilt for them.
        guard !topics.isEmpty || source != nil, !kept.isEmpty || !rounds.isEmpty else { return }
        kept = kept.filter { _, answer in
            !topics.contains(answer.topic) && !(source.map(answer.sources.contains) ?? false)
        }
        for (question, round) in rounds where source != nil || topics.contains(round.topic) {
            // A round out may have asked the source before its change: its answer is handed out
            // (it was asked after its callers arrived) but not kept.
            rounds[question]!.overtaken = true
        }
    }

    /// Everything changed (a ban enforced on every node): no answer is kept, none out is kept.
    public mutating func forgetAll() {
        kept.removeAll()
        for question in rounds.keys { rounds[question]!.overtaken = true }
    }
}
