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
    /// Every member known, alive or dead (not those that left): where keys live when all are up.
    private var known: OwnerRing?
    /// The members that sent everything this round.
    private var answeredAll: Set<String> = []
    /// How many members hold each key (owner and successor).
    public static let holdersPerKey = 2

    /// A catch-up with nothing to wait for yet.
    public init() {}

    /// Whether every other alive member has answered this round.
    public var isCaughtUp: Bool { waiting.isEmpty }

    /// Whether a write of `key` must wait: this member owns `key` now but did not before the
    /// change (or just started), and either the catch-up is not over or nobody that held `key`
    /// has answered. Who held it: the holders in the members before the change, or, for a member
    /// that just started (its own copy may be old), the other holders among every member known.
    /// A key whose holders are all out of reach (a partition left them on the other side) waits
    /// until one is back: its latest writes may be there.
    public func mustWait(_ key: String, selfID: String) -> Bool {
        guard tookOver(key, selfID: selfID) else { return false }
        guard isCaughtUp else { return true }
        if let previous {
            let holders = previous.holders(of: key, count: Self.holdersPerKey)
            return !holders.contains(selfID) && answeredAll.isDisjoint(with: holders)
        }
        guard let known else { return false }
        let holders = known.holders(of: key, count: Self.holdersPerKey).filter { $0 != selfID }
        return !holders.isEmpty && answeredAll.isDisjoint(with: holders)
    }

    /// Whether this member owns `key` now and did not before the last change (or just started).
    public func tookOver(_ key: String, selfID: String) -> Bool {
        guard let current, current.owner(of: key) == selfID else { return false }
        return previous?.owner(of: key) != selfID
    }

    /// The alive members of the role changed from `before` (nil at start) to `now` (`known`: every
    /// member known, dead ones included): a new round asks every other member of `now` for its
    /// first page. `asIfStarted`: whatever was owned before counts for nothing (the member comes
    /// back from a view cut off from most of the cluster), every key owned now is taken over.
    public mutating func membersChanged(from before: OwnerRing?, to now: OwnerRing, known: OwnerRing? = nil,
                                        selfID: String, asIfStarted: Bool = false) -> [Ask] {
        round &+= 1
        // Keys taken over in an unfinished round stay taken over: compare with what was owned
        // before that round began. A round that nobody answered (a member that started before it
        // saw the others) settles nothing either: its keys were never checked against anyone.
        if asIfStarted {
            previous = nil
        } else if current == nil || (isCaughtUp && (!answeredAll.isEmpty || known?.members == [selfID])) {
            previous = before
        }
        self.known = known
        answeredAll = []
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
        answeredAll.insert(ask.member)
        return []
    }
}
