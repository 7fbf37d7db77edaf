import Routing

/// What a member decides about the keys it takes over from others, as a pure value type: the
/// catch-up that must be over before it writes them (``CatchUp``), and the new term each one
/// begins with its first write (a room's version raised, a channel's numbers in a new series),
/// so that what it writes wins over what an earlier owner that has not noticed yet writes
/// meanwhile. The shell reports each change of the alive members and asks before each write.
public struct TakeOver: Sendable, Equatable {
    /// What begins anew with a key's first write after a take-over.
    public enum Term: Sendable, Hashable {
        /// A room's version is raised (the room registry's `raiseVersion(of:termMs:)`).
        case roomVersion
        /// A channel's events are numbered in a new series.
        case channelSeries
    }

    /// This member's id.
    public let selfID: String
    /// The pull of what this member holds from the others.
    public private(set) var catchUp = CatchUp()
    /// The alive members as last seen (nil before the first look).
    public private(set) var ring: OwnerRing?
    /// When the members were last seen to change (ms since the Unix epoch): what the terms this
    /// member begins are dated by (a room's raised version, a channel's new series). Not the time
    /// of the first write: an earlier owner on the other side of a partition that has not noticed
    /// it yet still writes with the older view it has, so its terms always date from before the
    /// partition, and the new owner's from after. Dated by the write, that earlier owner's first
    /// write after the new owner's would win once the partition healed, though nobody
    /// acknowledged it.
    public private(set) var termMs: Int64 = 0
    /// Keys whose new term began, by term.
    private var begun: [Term: Set<String>] = [:]
    /// Requests held until their key's catch-up is over, by id: the key and the deadline.
    private var held: [UInt64: HeldRequest] = [:]
    private struct HeldRequest: Sendable, Equatable {
        var key: String
        var deadlineMs: Int64
    }
    private var lastHeld: UInt64 = 0

    /// Nothing taken over yet, for member `selfID`.
    public init(selfID: String) {
        self.selfID = selfID
    }

    /// The alive members are `now` (`known`: every member known, dead ones included) since
    /// `nowMs`, and this member sees most of the cluster or not (`seesMostOfTheCluster`, all
    /// roles counted). Returns the catch-up's first asks, or nil when the members are the ones
    /// seen last. What this member owned before and owns still keeps its term; what it lost
    /// begins a new one if it takes it over again.
    ///
    /// A view in which this member saw less than most of the cluster counts for nothing: it
    /// wrote nothing there, while the others took its keys over (cut off alone, it owned every
    /// key in its own view). Back from it, this member takes every key it owns over as if it had
    /// just started: it catches up before writing and begins new terms, so it never goes on from
    /// another owner's series while that owner, not yet aware of it, still writes.
    public mutating func membersChanged(to now: OwnerRing, known: OwnerRing, nowMs: Int64,
                                        seesMostOfTheCluster: Bool = true) -> [CatchUp.Ask]? {
        defer { if !seesMostOfTheCluster { cutOff = true } }
        guard now != ring else { return nil }
        termMs = nowMs
        let before = cutOff ? nil : ring
        cutOff = false
        let kept: (String) -> Bool = { [selfID] key in now.owner(of: key) == selfID && before?.owner(of: key) == selfID }
        begun = begun.mapValues { $0.filter(kept) }
        ring = now
        return catchUp.membersChanged(from: before, to: now, known: known, selfID: selfID, asIfStarted: before == nil)
    }

    /// Whether this member saw less than most of the cluster since its alive members last changed.
    private var cutOff = false

    /// Whether a write of `key` must wait for the catch-up (``CatchUp/mustWait(_:selfID:)``).
    public func mustWait(_ key: String) -> Bool { catchUp.mustWait(key, selfID: selfID) }

    /// Whether this member took `key` over (``CatchUp/tookOver(_:selfID:)``).
    public func tookOver(_ key: String) -> Bool { catchUp.tookOver(key, selfID: selfID) }

    /// Whether `key`'s `term` begins with the write about to be made (it was taken over and has
    /// not begun since). Call ``began(_:of:)`` once it did.
    public func beginsTerm(_ term: Term, of key: String) -> Bool {
        tookOver(key) && begun[term]?.contains(key) != true
    }

    /// `key`'s `term` began.
    public mutating func began(_ term: Term, of key: String) {
        begun[term, default: []].insert(key)
    }

    /// Holds a request of `key` until its catch-up is over or `deadlineMs` passes. Returns the
    /// request's id (``release(nowMs:)`` names it).
    public mutating func hold(_ key: String, deadlineMs: Int64) -> UInt64 {
        lastHeld &+= 1
        held[lastHeld] = HeldRequest(key: key, deadlineMs: deadlineMs)
        return lastHeld
    }

    /// The held requests to serve now (their key need wait no more) and those to refuse (their
    /// deadline passed first), each in the order they were held; both are forgotten.
    public mutating func release(nowMs: Int64) -> (serve: [UInt64], refuse: [UInt64]) {
        var serve: [UInt64] = []
        var refuse: [UInt64] = []
        for id in held.keys.sorted() {
            let request = held[id]!
            if !mustWait(request.key) {
                serve.append(id)
            } else if request.deadlineMs <= nowMs {
                refuse.append(id)
            } else {
                continue
            }
            held[id] = nil
        }
        return (serve, refuse)
    }

    /// The catch-up's asks due now (``CatchUp/takeAsks()``).
    public mutating func takeAsks() -> [CatchUp.Ask] { catchUp.takeAsks() }

    /// A catch-up ask was answered (``CatchUp/answered(_:answered:more:last:)``).
    public mutating func answered(_ ask: CatchUp.Ask, answered: Bool, more: Bool, last: String) -> [CatchUp.Ask] {
        catchUp.answered(ask, answered: answered, more: more, last: last)
    }
}
