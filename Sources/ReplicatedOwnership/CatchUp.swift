import Routing

/// A member's catch-up after its set of alive members changed (or it started), as a pure value
/// type: it asks every other alive member for what it now holds, page by page, and takes over no
/// key until each has answered or left.
///
/// Why: a member that becomes a key's owner (a member came back, a partition healed, a restart
/// faster than the failure detector) must not answer a write of that key from the copy it had
/// before the others' newer writes reach it: a chat message would get a number already given,
/// an event number would be reused. Writes of keys it owned before the change go on; only keys
/// it took over (``tookOver(_:)``) wait.
public struct CatchUp: Sendable, Equatable {
    /// One page to ask a member for.
    public struct Ask: Sendable, Equatable {
        /// The member to ask.
        public var member: String
        /// The catch-up round the answer belongs to (answers of an earlier round are ignored).
        public var round: UInt64
        /// The last key of the previous page ("" for the first page).
        public var after: String

        /// An ask of `member` for the page after `after` in round `round`.
        public init(member: String, round: UInt64, after: String) {
            self.member = member
            self.round = round
            self.after = after
        }
    }

    /// Each time the members change, a new round begins.
    public private(set) var round: UInt64 = 0
    /// The members still to answer, with the last key they sent so far.
    public private(set) var waiting: [String: String] = [:]
    /// The asks in flight, by member.
    private var asked: Set<String> = []
    /// The members before this round (nil: none known, this member just started).
    private var previous: OwnerRing?
    /// The members now.
    private var current: OwnerRing?

    /// A catch-up with nothing to wait for yet.
    public init() {}

    /// Whether every other alive member has answered this round.
    public var isCaughtUp: Bool { waiting.isEmpty }

    /// Whether a write of `key` must wait: the catch-up is not over and this member owns `key`
    /// now but did not before the change (or just started).
    public func mustWait(_ key: String, selfID: String) -> Bool {
        !isCaughtUp && tookOver(key, selfID: selfID)
    }

    /// Whether this member owns `key` now and did not before the last change (or just started).
    public func tookOver(_ key: String, selfID: String) -> Bool {
        guard let current, current.owner(of: key) == selfID else { return false }
        return previous?.owner(of: key) != selfID
    }

    /// The alive members of the role changed from `before` (nil at start) to `now`: a new round
    /// asks every other member of `now` for its first page.
    public mutating func membersChanged(from before: OwnerRing?, to now: OwnerRing, selfID: String) -> [Ask] {
        round &+= 1
        // Keys taken over in an unfinished round stay taken over: compare with what was owned
        // before that round began.
        if isCaughtUp || current == nil { previous = before }
        current = now
        waiting = Dictionary(uniqueKeysWithValues: now.members.filter { $0 != selfID }.map { ($0, "") })
        asked = []
        return takeAsks()
    }

    /// The asks to send now: a page for every member waited for with none in flight (after a
    /// failure, the tick asks again).
    public mutating func takeAsks() -> [Ask] {
        let due = waiting.keys.sorted().filter { !asked.contains($0) }
        asked.formUnion(due)
        return due.map { Ask(member: $0, round: round, after: waiting[$0]!) }
    }

    /// `ask` was answered: with `more`, the next page (after `last`) is asked for; else the member
    /// is done. A failed ask (`answered: false`) is asked again by the next ``takeAsks()``.
    public mutating func answered(_ ask: Ask, answered: Bool, more: Bool, last: String) -> [Ask] {
        guard ask.round == round, waiting[ask.member] != nil else { return [] }
        asked.remove(ask.member)
        guard answered else { return [] }
        if more, !last.isEmpty, last > ask.after {
            waiting[ask.member] = last
            return takeAsks()
        }
        waiting[ask.member] = nil
        return []
    }
}
