import Routing

/// One record of a ``ReplicatedStore``: a value with the version and writer that order it.
public struct ReplicatedEntry<Value: Sendable & Equatable>: Sendable, Equatable {
    /// The key the record is stored and routed under.
    public var key: String
    /// The value; nil for a deletion, kept (as a tombstone) so a late replica cannot revive it.
    public var value: Value?
    /// Grows with every write of the key.
    public var version: UInt64
    /// The member that wrote this version: breaks ties between two writers of one version (two
    /// members that both believed they owned the key while the membership settled).
    public var writer: String

    /// Creates an entry.
    public init(key: String, value: Value?, version: UInt64, writer: String) {
        self.key = key
        self.value = value
        self.version = version
        self.writer = writer
    }

    /// Whether this entry replaces `other` of the same key: the higher version wins, then the
    /// greater writer id, so every member keeps the same one whatever order they arrive in.
    public func supersedes(_ other: ReplicatedEntry) -> Bool {
        version != other.version ? version > other.version : writer > other.writer
    }
}

/// Where a ``ReplicatedStore`` keeps its records across restarts: SQLite for a coordinator's
/// rooms (`RoomStore`), memory for what only needs to outlive one process (calls, presence).
public protocol ReplicaPersistence<Record> {
    associatedtype Record: Sendable & Equatable
    /// Every stored record, at start-up.
    func loadRecords() throws -> [Record]
    /// Stores `records`, replacing what is stored of their keys.
    func save(_ records: [Record]) throws
    /// Forgets what is stored of `keys`.
    func delete(keys: [String]) throws
}

/// Keeps entries in memory: for data that only needs to outlive one process.
public final class MemoryPersistence<Value: Sendable & Equatable>: ReplicaPersistence {
    private(set) var entries: [String: ReplicatedEntry<Value>] = [:]

    /// An empty memory.
    public init() {}

    public func loadRecords() throws -> [ReplicatedEntry<Value>] { Array(entries.values) }
    public func save(_ entries: [ReplicatedEntry<Value>]) throws {
        for entry in entries { self.entries[entry.key] = entry }
    }
    public func delete(keys: [String]) throws {
        for key in keys { entries[key] = nil }
    }
}

/// The records a ``ReplicatedStore`` holds, and the rules that read them for the other holders:
/// versioned entries (``VersionedEntries``: call-signal's user records) or a coordinator's
/// rooms with their chat, channel event numbers, placements and bans, whose merges follow rules
/// of their own (a room's chat follows the record that wins, a later series of event numbers
/// wins).
public protocol ReplicaRecords: Sendable {
    /// What is sent to another holder.
    associatedtype Record: Sendable & Equatable
    /// Every key held here: what a change of members hands over.
    var heldKeys: [String] { get }
    /// What is held of `keys`, whole, as held now: what a repair or a hand-over sends.
    func records(of keys: [String]) -> [Record]
    /// Forgets what is held of `keys`, which this member holds no longer.
    mutating func release(_ keys: [String])
}

/// A keyed store replicated to each key's owner and successor among the alive members of a role
/// (and, for ``Replication/everyMemberKeys``, to every member), as a pure value type: the
/// records held here (``records``), replicated by a ``Replicator`` (writes return what to send to
/// whom, answers and membership changes return what may be acknowledged and handed over). The
/// shell carries the batches and persists what ``Effects/persist`` names.
///
/// Both roles that replicate use it. Call-signal's user records are versioned entries
/// (``VersionedStore``): a role whose records follow from its own state (a user's session and
/// call) marks keys changed as it goes (``markChanged(_:)``) and writes them all at once on a
/// flush (``flush(current:)``), in one batch per member; deletions stay as tombstones until
/// ``dropTombstones(olderThanMs:nowMs:)`` finds them old enough that no late copy is on its way.
/// A coordinator changes its rooms through ``records`` and writes what changed
/// (``write(_:sends:isLatest:)``).
public struct ReplicatedStore<Records: ReplicaRecords>: Sendable {
    /// What is sent to another holder.
    public typealias Record = Records.Record
    /// Records for one member, and the writes they carry.
    public typealias Batch = Replicator<Record>.Batch

    /// What the shell must do after a call.
    public struct Effects: Sendable, Equatable {
        /// Records to persist (new or replaced).
        public var persist: [Record] = []
        /// Batches to send, in member order; answer each with ``ReplicatedStore/batchAnswered(_:held:)``.
        public var batches: [Batch] = []
        /// Writes that may be answered now.
        public var acknowledged: [Replication.Acknowledged] = []
        /// Keys to delete from persistence (no longer held here).
        public var forget: [String] = []

        /// No effects.
        public init() {}

        /// Every record to send, by member.
        public var send: [String: [Record]] {
            batches.reduce(into: [:]) { $0[$1.member, default: []] += $1.records }
        }

        /// Adds `other`'s effects to these (one batch per member, in member order).
        public mutating func merge(_ other: Effects) {
            persist += other.persist
            add(other.batches)
            acknowledged += other.acknowledged
            forget += other.forget
        }

        mutating func merge(_ other: Replicator<Record>.Effects) {
            add(other.batches)
            acknowledged += other.acknowledged
        }

        /// Adds `more` to the batches, into the batch of the same member where there is one.
        private mutating func add(_ more: [Batch]) {
            for batch in more {
                if let index = batches.firstIndex(where: { $0.member == batch.member && $0.isLatest == batch.isLatest }) {
                    batches[index].absorb(batch)
                } else {
                    batches.append(batch)
                    batches.sort { $0.member < $1.member }
                }
            }
        }
    }

    /// Who holds which key, and the batches that replicate it.
    public private(set) var replicator: Replicator<Record>
    /// Who holds which key.
    public var replication: Replication { replicator.replication }
    /// The records held here (owned or replicated). The owner changes them here, then writes
    /// what changed.
    public var records: Records

    /// A store of `records` for member `selfID` of `role` (owner and successor per key by
    /// default; every member for `everyMemberKeys`).
    public init(_ records: Records, selfID: String, role: NodeRole, scope: Replication.Scope = .ownerAndSuccessor,
                everyMemberKeys: Set<String> = [], members: some Sequence<String> = []) {
        replicator = Replicator(selfID: selfID, role: role, scope: scope, everyMemberKeys: everyMemberKeys, members: members)
        self.records = records
    }

    /// A write of `key` made here, as its owner, of records already changed in ``records``:
    /// `sends` names what each member gets (the key's replicas, and members holding other keys
    /// the same change touched), whole records of their keys or only what changed (`isLatest`,
    /// see ``Replicator/Batch/isLatest``). Answer the client once ``Effects/acknowledged`` (here
    /// or from ``batchAnswered(_:held:)``) names the returned write id.
    public mutating func write(_ key: String, sends: [String: (keys: [String], records: [Record])],
                               isLatest: Bool) -> (write: UInt64, effects: Effects) {
        let (write, replicated) = replicator.write(key, sends: sends, isLatest: isLatest)
        var effects = Effects()
        effects.merge(replicated)
        return (write, effects)
    }

    /// A member answered a batch (`held`: it stored every record): the writes it carried are
    /// answered by that member. A batch that failed leaves its keys owed to the member, sent again
    /// by ``repairs()`` until it holds them or leaves.
    public mutating func batchAnswered(_ batch: Batch, held: Bool) -> Effects {
        var effects = Effects()
        effects.acknowledged = replicator.batchAnswered(batch, held: held)
        return effects
    }

    /// What is owed to members whose write or hand-over failed: the latest records of each key,
    /// one batch per member (none to a member whose last repair is unanswered). Answer each with
    /// ``batchAnswered(_:held:)``.
    public mutating func repairs() -> Effects {
        var effects = Effects()
        let records = records
        effects.merge(replicator.repairs { records.records(of: $0) })
        return effects
    }

    /// Gives up the writes of `key` still waiting for replicas (its record here was replaced by
    /// another member's, which does not hold them): they are never acknowledged. Returns their ids.
    public mutating func abandonWrites(of key: String) -> [UInt64] { replicator.abandonWrites(of: key) }

    /// The alive members changed: hand each key's new holders what is held of it, forget keys held
    /// no longer (``Effects/forget`` names them), acknowledge writes whose replicas left.
    public mutating func membersChanged(to members: some Sequence<String>) -> Effects {
        let records = records
        let handOver = replicator.membersChanged(to: members, holding: records.heldKeys) { records.records(of: $0) }
        var effects = Effects()
        effects.merge(handOver)
        self.records.release(handOver.released)
        effects.forget = handOver.released
        return effects
    }
}

/// Versioned entries by key, as call-signal holds its user records: a copy from another member
/// replaces the one held when it ``ReplicatedStore/prevails(_:over:)`` (a precedence of the
/// values first, then the higher version, then the greater writer); deletions are kept as
/// tombstones until old enough.
public struct VersionedEntries<Value: Sendable & Equatable>: ReplicaRecords {
    /// Decides between two live values of a key before their versions do: true when the first
    /// must replace the second, false when it must not, nil to let the versions decide.
    public typealias Precedence = @Sendable (_ value: Value, _ over: Value) -> Bool?

    /// The entries held here (owned or replicated), tombstones included.
    public fileprivate(set) var entries: [String: ReplicatedEntry<Value>] = [:]
    /// Keys marked changed since the last flush.
    public fileprivate(set) var changed: Set<String> = []
    /// When each tombstone held here was first seen by a drop (nil until then).
    fileprivate var tombstoneSeen: [String: Int64?] = [:]
    /// What decides between two live values before their versions (nil: the versions alone).
    fileprivate let precedence: Precedence?

    /// No entries; with `precedence`, what two values say may decide a merge whatever their
    /// versions.
    public init(precedence: Precedence? = nil) {
        self.precedence = precedence
    }

    public var heldKeys: [String] { Array(entries.keys) }

    public func records(of keys: [String]) -> [ReplicatedEntry<Value>] { keys.compactMap { entries[$0] } }

    public mutating func release(_ keys: [String]) {
        for key in keys {
            entries[key] = nil
            tombstoneSeen[key] = nil
        }
    }

    /// Keeps `entry` over what is held of its key, noting whether it is a tombstone.
    public mutating func keep(_ entry: ReplicatedEntry<Value>) {
        entries[entry.key] = entry
        if entry.value == nil {
            if tombstoneSeen[entry.key] == nil { tombstoneSeen[entry.key] = .some(nil) }
        } else {
            tombstoneSeen[entry.key] = nil
        }
    }
}

/// A store of versioned entries (call-signal's user records).
public typealias VersionedStore<Value: Sendable & Equatable> = ReplicatedStore<VersionedEntries<Value>>

/// What only a store of versioned entries does: writes of whole values, flushes of what changed,
/// merges by version, tombstones.
public protocol VersionedRecords: ReplicaRecords where Record == ReplicatedEntry<Value> {
    /// The values' type.
    associatedtype Value: Sendable & Equatable
    /// No entries; with `precedence`, what two values say may decide a merge whatever their
    /// versions.
    init(precedence: (@Sendable (_ value: Value, _ over: Value) -> Bool?)?)
    /// The entries held here, tombstones included.
    var entries: [String: ReplicatedEntry<Value>] { get }
    /// Keys marked changed since the last flush.
    var changed: Set<String> { get }
    /// How many deletions are held as tombstones.
    var tombstoneCount: Int { get }
    /// Whether `entry` replaces `held` of the same key.
    func prevails(_ entry: ReplicatedEntry<Value>, over held: ReplicatedEntry<Value>) -> Bool
    /// Keeps `entry` over what is held of its key.
    mutating func keep(_ entry: ReplicatedEntry<Value>)
    /// Marks `key` changed, for the next flush.
    mutating func markChanged(_ key: String)
    /// Takes the keys marked changed, sorted.
    mutating func takeChanged() -> [String]
    /// Forgets tombstones held at least `lifetimeMs`; returns their keys.
    mutating func dropTombstones(olderThanMs lifetimeMs: Int64, nowMs: Int64) -> [String]
    /// Drops the tombstone of `key`; a live value is kept.
    mutating func dropTombstone(_ key: String)
}

extension VersionedEntries: VersionedRecords {
    public var tombstoneCount: Int { tombstoneSeen.count }

    public func prevails(_ entry: ReplicatedEntry<Value>, over held: ReplicatedEntry<Value>) -> Bool {
        if let precedence, let value = entry.value, let other = held.value, let decided = precedence(value, other) {
            return decided
        }
        return entry.supersedes(held)
    }

    public mutating func markChanged(_ key: String) { changed.insert(key) }

    public mutating func takeChanged() -> [String] {
        defer { changed = [] }
        return changed.sorted()
    }

    public mutating func dropTombstones(olderThanMs lifetimeMs: Int64, nowMs: Int64) -> [String] {
        var dropped: [String] = []
        for key in tombstoneSeen.keys.sorted() {
            guard let seen = tombstoneSeen[key] ?? nil else {
                tombstoneSeen[key] = nowMs
                continue
            }
            if nowMs - seen >= lifetimeMs {
                dropTombstone(key)
                dropped.append(key)
            }
        }
        return dropped
    }

    public mutating func dropTombstone(_ key: String) {
        if let entry = entries[key], entry.value == nil {
            entries[key] = nil
            tombstoneSeen[key] = nil
        }
    }
}

extension ReplicatedStore where Records: VersionedRecords {
    /// The values' type.
    public typealias Value = Records.Value

    /// An empty store for member `selfID` of `role` (owner and successor per key by default).
    /// With `precedence`, what two values say may decide a merge whatever their versions (a
    /// record kept by a member cut off from the owner may know something the owner's newer one
    /// does not).
    public init(selfID: String, role: NodeRole, scope: Replication.Scope = .ownerAndSuccessor,
                members: some Sequence<String> = [], precedence: (@Sendable (_ value: Value, _ over: Value) -> Bool?)? = nil) {
        self.init(Records(precedence: precedence), selfID: selfID, role: role, scope: scope, members: members)
    }

    /// The entries held here (owned or replicated), tombstones included.
    public var entries: [String: ReplicatedEntry<Value>] { records.entries }
    /// Keys marked changed since the last flush.
    public var changed: Set<String> { records.changed }
    /// How many deletions are held as tombstones.
    public var tombstoneCount: Int { records.tombstoneCount }

    /// Whether `entry` replaces `held` of the same key: the precedence of their values first,
    /// then ``ReplicatedEntry/supersedes(_:)``.
    public func prevails(_ entry: ReplicatedEntry<Value>, over held: ReplicatedEntry<Value>) -> Bool {
        records.prevails(entry, over: held)
    }

    /// The live value of `key`, if any.
    public subscript(key: String) -> Value? { records.entries[key]?.value }

    /// Writes `value` (nil deletes) under `key` here, as its owner: the write is stored, and the
    /// effects name the replicas to send it to. Answer the client once ``Effects/acknowledged``
    /// (here or from ``batchAnswered(_:held:)``) names the returned write id.
    public mutating func write(_ value: Value?, for key: String) -> (write: UInt64, effects: Effects) {
        let version = (records.entries[key]?.version ?? 0) &+ 1
        let entry = ReplicatedEntry(key: key, value: value, version: version, writer: replication.selfID)
        records.keep(entry)
        let replicas = replication.replicas(of: key)
        var (write, effects) = write(key, sends: Dictionary(uniqueKeysWithValues: replicas.map { ($0, (keys: [key], records: [entry])) }),
                                     isLatest: true)
        effects.persist = [entry]
        return (write, effects)
    }

    // MARK: - Changes written on a flush

    /// Notes that the value of `key` may have changed: the next ``flush(current:)`` writes it
    /// when this member owns it and the value differs from the one held.
    public mutating func markChanged(_ key: String) { records.markChanged(key) }

    /// Whether a flush has keys to look at or repairs to send.
    public var isFlushDue: Bool { !records.changed.isEmpty || !replication.owed.isEmpty }

    /// Writes the changed keys this member owns whose value (`current`, nil for none) differs from
    /// the one held, in key order: the effects hold one batch per replica with every entry and
    /// write for it.
    public mutating func flush(current: (String) -> Value?) -> Effects {
        var effects = Effects()
        for key in records.takeChanged() where replication.owns(key) {
            let value = current(key)
            guard value != self[key] else { continue }
            effects.merge(write(value, for: key).effects)
        }
        effects.merge(repairs())
        return effects
    }

    /// Forgets tombstones held for at least `lifetimeMs` (a tombstone's time starts at the first
    /// call that sees it), so a store of short-lived records does not grow without end. Returns
    /// the keys to forget in persistence.
    public mutating func dropTombstones(olderThanMs lifetimeMs: Int64, nowMs: Int64) -> Effects {
        var effects = Effects()
        effects.forget = records.dropTombstones(olderThanMs: lifetimeMs, nowMs: nowMs)
        return effects
    }

    /// Entries from another member (a replica of a write, or a hand-over): each is kept when it
    /// prevails over what is held. Returns what to persist.
    public mutating func receive(_ incoming: [ReplicatedEntry<Value>]) -> Effects {
        var effects = Effects()
        for entry in incoming {
            if let held = records.entries[entry.key], !prevails(entry, over: held) { continue }
            records.keep(entry)
            effects.persist.append(entry)
        }
        return effects
    }

    /// The entries held here that `incoming` (just received) did not replace although they differ:
    /// what a replica answers a writer that is behind, so the writer learns them and writes past
    /// them (``receiveKeptOver(_:)``) instead of having its writes ignored for good. Among them
    /// are ties: the same version and writer with another value, as when the writer restarted
    /// with nothing and wrote the key anew from version 1.
    public func keptOver(_ incoming: [ReplicatedEntry<Value>]) -> [ReplicatedEntry<Value>] {
        var kept: [String: ReplicatedEntry<Value>] = [:]
        for entry in incoming {
            guard let held = records.entries[entry.key], held != entry, !prevails(entry, over: held) else { continue }
            kept[entry.key] = held
        }
        return kept.keys.sorted().map { kept[$0]! }
    }

    /// Entries a replica kept over this member's writes (``keptOver(_:)``): each is kept here
    /// unless what is held supersedes it, a tie included, so the next write of its key (a flush
    /// that finds the value changed) goes past it. Returns what to persist.
    public mutating func receiveKeptOver(_ incoming: [ReplicatedEntry<Value>]) -> Effects {
        var effects = Effects()
        for entry in incoming {
            if let held = records.entries[entry.key], held == entry || prevails(held, over: entry) { continue }
            records.keep(entry)
            effects.persist.append(entry)
        }
        return effects
    }

    /// Entries loaded from persistence at start-up (kept when they prevail over what is held).
    public mutating func load(_ stored: [ReplicatedEntry<Value>]) {
        _ = receive(stored)
    }

    /// Drops the tombstone of `key` (a deletion old enough that no late copy of the record can
    /// still be on its way), so a store of short-lived records does not grow without end. A live
    /// value is kept.
    public mutating func dropTombstone(_ key: String) { records.dropTombstone(key) }
}
