import Routing

/// Replication for any kind of record, as a pure value type: it turns writes, answers, failures
/// and changes of members into batches — what to send to which member, and which writes each
/// batch carries — and tells which writes may be acknowledged. It is the engine of
/// ``ReplicatedStore``, which both roles that replicate use (call-signal's user records,
/// the coordinator's rooms with their chat, channel event numbers, placements and bans).
///
/// - A write of a key goes to the key's replicas, and is acknowledged once each holds it
///   (``write(_:sends:)``, ``batchAnswered(_:held:)``).
/// - A batch that did not arrive leaves its keys owed to the member; ``repairs(records:)`` sends
///   the latest records of what is owed, one batch in flight per member.
/// - When the members change, each key's new holders are sent what is held of it
///   (``membersChanged(to:holding:records:)``).
///
/// The caller says how records are read (`records` closures: the latest of some keys) and
/// carries the batches; this type never sends or stores anything itself.
public struct Replicator<Record: Sendable & Equatable>: Sendable {
    /// Records for one member, and the writes their arrival answers.
    public struct Batch: Sendable, Equatable {
        /// The member to send them to.
        public var member: String
        /// The keys whose records the batch carries (owed to the member again if it fails).
        public var keys: [String]
        /// The records.
        public var records: [Record]
        /// The writes the member's answer acknowledges (none for a hand-over or repair: those
        /// answer the writes of their keys up to ``through``).
        public var writes: [UInt64]
        /// The last write begun when the batch was made.
        public var through: UInt64
        /// Whether the records are the whole of their keys as held when the batch was made (a
        /// repair, a hand-over, a store's write of a whole entry), so that once held they answer
        /// every write of their keys up to ``through`` and settle what was owed. A write that
        /// carries only what changed (a chat message) does not: an earlier change the member
        /// missed is still owed.
        public var isLatest: Bool

        /// A batch of `records` (of `keys`) for `member`, carrying `writes`, made when `through`
        /// was the last write.
        public init(member: String, keys: [String], records: [Record], writes: [UInt64] = [], through: UInt64 = 0,
                    isLatest: Bool = true) {
            self.member = member
            self.keys = keys
            self.records = records
            self.writes = writes
            self.through = through
            self.isLatest = isLatest
        }

        /// Takes `other`'s records and writes into this batch (both for the same member, made
        /// in the same call, both whole or both changes, so this batch's answer answers both).
        public mutating func absorb(_ other: Batch) {
            precondition(isLatest == other.isLatest, "a whole batch and a batch of changes are answered differently")
            keys += other.keys
            records += other.records
            writes += other.writes
            through = max(through, other.through)
        }
    }

    /// What the caller must do after a call.
    public struct Effects: Sendable, Equatable {
        /// Batches to send, in member order; answer each with ``Replicator/batchAnswered(_:held:)``.
        public var batches: [Batch] = []
        /// Writes that may be answered now.
        public var acknowledged: [Replication.Acknowledged] = []
        /// Keys this member holds no longer (after a change of members): its copies may go, once
        /// the hand-over batches are made.
        public var released: [String] = []

        /// No effects.
        public init() {}

        /// Adds `other`'s effects to these.
        public mutating func merge(_ other: Effects) {
            batches += other.batches
            acknowledged += other.acknowledged
            released += other.released
        }
    }

    /// Who holds which key, the writes waiting and what is owed.
    public private(set) var replication: Replication
    /// A hand-over or repair sends at most this many keys in one batch; the rest follow.
    public var maxKeysPerBatch: Int

    /// Replication for member `selfID` of `role`.
    public init(selfID: String, role: NodeRole, scope: Replication.Scope = .ownerAndSuccessor,
                everyMemberKeys: Set<String> = [], members: some Sequence<String> = [], maxKeysPerBatch: Int = 200) {
        replication = Replication(selfID: selfID, role: role, scope: scope, everyMemberKeys: everyMemberKeys, members: members)
        self.maxKeysPerBatch = max(1, maxKeysPerBatch)
    }

    /// A write of `key` made here, as its owner: `sends` names what each member gets (the key's
    /// replicas, and other members holding other keys the same change touched), whole records of
    /// their keys or only what changed (`isLatest`, see ``Batch/isLatest``). A replica `sends`
    /// leaves out holds nothing new and counts as having answered. With no replica the write is
    /// acknowledged at once.
    public mutating func write(_ key: String, sends: [String: (keys: [String], records: [Record])],
                               isLatest: Bool) -> (write: UInt64, effects: Effects) {
        let ticket = replication.beginWrite(key: key)
        var effects = Effects()
        let replicas = Set(ticket.replicas)
        for member in sends.keys.sorted() {
            let send = sends[member]!
            effects.batches.append(Batch(member: member, keys: send.keys, records: send.records,
                                         writes: replicas.contains(member) ? [ticket.id] : [], through: ticket.id,
                                         isLatest: isLatest))
        }
        if ticket.replicas.isEmpty {
            effects.acknowledged.append(Replication.Acknowledged(write: ticket.id, key: key, fullyReplicated: true))
        }
        for replica in ticket.replicas.sorted() where sends[replica] == nil {
            if let done = replication.replicaAnswered(write: ticket.id, by: replica, held: true) { effects.acknowledged.append(done) }
        }
        return (ticket.id, effects)
    }

    /// A write of `key` sending `record`, the whole of it, to each of the key's replicas.
    public mutating func write(_ key: String, record: Record) -> (write: UInt64, effects: Effects) {
        let replicas = replication.replicas(of: key)
        return write(key, sends: Dictionary(uniqueKeysWithValues: replicas.map { ($0, (keys: [key], records: [record])) }),
                     isLatest: true)
    }

    /// A member answered a batch (`held`: it stored every record): the writes it carried are
    /// answered by that member, and, for whole records, every write of its keys up to
    /// ``Batch/through``. A batch that failed leaves its keys owed to the member, sent again by
    /// ``repairs(records:)`` until it holds them or leaves. Returns the writes that may be
    /// acknowledged now.
    public mutating func batchAnswered(_ batch: Batch, held: Bool) -> [Replication.Acknowledged] {
        var done: [Replication.Acknowledged] = []
        for write in batch.writes {
            if let acknowledged = replication.replicaAnswered(write: write, by: batch.member, held: held) { done.append(acknowledged) }
        }
        if batch.isLatest {
            // Also ends the member's repair in flight, held or not, so the next one can go.
            done += replication.repaired(batch.keys, by: batch.member, held: held, through: batch.through)
        } else if !held {
            replication.owe(batch.keys, to: batch.member)
        }
        return done
    }

    /// What is owed to members whose write or hand-over failed: the latest records of the keys
    /// owed (`records`), at most ``maxKeysPerBatch`` keys a batch, none to a member whose last
    /// repair is unanswered.
    public mutating func repairs(records: ([String]) -> [Record]) -> Effects {
        var effects = Effects()
        for repair in replication.takeRepairs(maxKeys: maxKeysPerBatch) {
            effects.batches.append(Batch(member: repair.member, keys: repair.keys, records: records(repair.keys),
                                         through: repair.through))
        }
        return effects
    }

    /// The alive members changed: each key's new holders get what is held here of it
    /// (`records`, read now, before the caller drops what it released), in batches of at most
    /// ``maxKeysPerBatch`` keys; writes whose replicas left may be acknowledged; released keys
    /// are named.
    public mutating func membersChanged(to members: some Sequence<String>, holding keys: some Sequence<String>,
                                        records: ([String]) -> [Record]) -> Effects {
        let handOver = replication.membersChanged(to: members, holding: keys)
        var effects = Effects()
        effects.acknowledged = handOver.acknowledged
        effects.released = handOver.released.sorted()
        for member in handOver.send.keys.sorted() {
            let keys = handOver.send[member]!.sorted()
            for start in stride(from: 0, to: keys.count, by: maxKeysPerBatch) {
                let slice = Array(keys[start..<min(start + maxKeysPerBatch, keys.count)])
                effects.batches.append(Batch(member: member, keys: slice, records: records(slice),
                                             through: replication.lastWrite))
            }
        }
        return effects
    }

    /// Gives up the writes of `key` still waiting (``Replication/abandonWrites(of:)``).
    public mutating func abandonWrites(of key: String) -> [UInt64] { replication.abandonWrites(of: key) }

    /// Notes that `member` missed what was sent of `keys` (``Replication/owe(_:to:)``).
    public mutating func owe(_ keys: some Sequence<String>, to member: String) { replication.owe(keys, to: member) }
}
