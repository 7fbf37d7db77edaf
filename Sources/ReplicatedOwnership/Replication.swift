import Routing

/// Who holds which key among the alive members of one role, and which writes still wait for their
/// replicas: the bookkeeping of replicated ownership as a pure value type.
///
/// A key (a room id, a channel name, a uid) is owned by the first alive member in rendezvous
/// order; with ``Scope/ownerAndSuccessor`` the second holds a replica, with ``Scope/everyMember``
/// every member does (cluster-wide tables such as placements and bans). The owner makes a write,
/// sends it to the other holders and acknowledges it once each of them has answered
/// (``beginWrite(key:)``, ``replicaAnswered(write:by:held:)``): a client told "done" can lose the
/// owner without losing the write. When the members change, every member hands each key's new
/// holders what it holds of that key (``membersChanged(to:holding:)``); receivers keep the higher
/// version. A restarted member reloads what it persisted and is handed the rest when the others
/// see it join again, which is also how it catches up on writes it missed.
///
/// The records themselves live in the caller's state machines (rooms, placements …) or in a
/// ``ReplicatedStore``; this type never sees them, so every kind of record shares one set of rules.
public struct Replication: Sendable, Equatable {
    /// How many members hold each key.
    public enum Scope: Sendable, Equatable {
        /// The owner and its successor (rooms, channel event numbers, calls, presence).
        case ownerAndSuccessor
        /// Every alive member of the role (placements, bans).
        case everyMember
    }

    /// A write waiting for its replicas.
    public struct PendingWrite: Sendable, Equatable {
        /// The key written.
        public var key: String
        /// The replicas that have not answered yet.
        public var waitingFor: Set<String>
        /// Whether every replica that answered holds the write (false once one refused or failed).
        public var fullyReplicated: Bool
    }

    /// A write that may be acknowledged now.
    public struct Acknowledged: Sendable, Equatable {
        /// The write's id (from ``WriteTicket/id``).
        public var write: UInt64
        /// The key written.
        public var key: String
        /// Every replica holds it; false when one failed or left before answering (the write is
        /// then held by fewer members than the scope asks for, until the next hand-over).
        public var fullyReplicated: Bool

        /// An acknowledgement of write `write` of `key`.
        public init(write: UInt64, key: String, fullyReplicated: Bool) {
            self.write = write
            self.key = key
            self.fullyReplicated = fullyReplicated
        }
    }

    /// What a write must do before it is acknowledged.
    public struct WriteTicket: Sendable, Equatable {
        /// Names the write in ``Replication/replicaAnswered(write:by:held:)``.
        public var id: UInt64
        /// The members to send the write to; empty: acknowledge at once (no replica alive).
        public var replicas: [String]
    }

    /// What a change of members asks of this member.
    public struct HandOver: Sendable, Equatable {
        /// For each member, the keys it holds now and did not hold before: send it what this
        /// member holds of them.
        public var send: [String: [String]]
        /// Keys this member held and holds no longer (its copy may be dropped once handed over).
        public var released: [String]
        /// Writes whose remaining replicas left: acknowledge them now.
        public var acknowledged: [Acknowledged]
    }

    /// This member's id.
    public let selfID: String
    /// How many members hold a key.
    public let scope: Scope
    /// Keys every alive member holds whatever the scope (a coordinator's cluster-wide tables,
    /// beside its rooms held by owner and successor), so one set of writes, repairs and
    /// hand-overs serves both.
    public let everyMemberKeys: Set<String>
    /// The alive members of the role, this one included.
    public private(set) var ring: OwnerRing
    private var pending: [UInt64: PendingWrite] = [:]
    private var nextWrite: UInt64 = 1

    /// Bookkeeping for member `selfID` of `role`, whose alive members are `members`.
    public init(selfID: String, role: NodeRole, scope: Scope, everyMemberKeys: Set<String> = [],
                members: some Sequence<String> = []) {
        self.selfID = selfID
        self.scope = scope
        self.everyMemberKeys = everyMemberKeys
        ring = OwnerRing(role, memberIDs: Set(members).union([selfID]))
    }

    // MARK: - Who holds what

    /// The holders of `key`, owner first.
    public func holders(of key: String) -> [String] {
        holders(of: key, in: ring)
    }

    /// The owner of `key` (this member when it is alone).
    public func owner(of key: String) -> String {
        ring.owner(of: key) ?? selfID
    }

    /// Whether this member owns `key`.
    public func owns(_ key: String) -> Bool { owner(of: key) == selfID }

    /// Whether this member holds `key` (as owner or replica).
    public func holds(_ key: String) -> Bool { holders(of: key).contains(selfID) }

    /// The other members holding `key`.
    public func replicas(of key: String) -> [String] { holders(of: key).filter { $0 != selfID } }

    /// The other alive members.
    public var others: [String] { ring.members.filter { $0 != selfID } }

    /// Writes waiting for replicas, by id.
    public var pendingWrites: [UInt64: PendingWrite] { pending }

    private func holders(of key: String, in ring: OwnerRing) -> [String] {
        switch everyMemberKeys.contains(key) ? .everyMember : scope {
        case .ownerAndSuccessor: ring.holders(of: key, count: 2)
        case .everyMember: ring.holders(of: key, count: ring.members.count)
        }
    }

    // MARK: - Writes

    /// Starts a write of `key` made here: the ticket names the replicas to send it to. With no
    /// replica the write is acknowledged at once (nothing is kept pending).
    public mutating func beginWrite(key: String) -> WriteTicket {
        let id = nextWrite
        nextWrite &+= 1
        let replicas = replicas(of: key)
        if !replicas.isEmpty {
            pending[id] = PendingWrite(key: key, waitingFor: Set(replicas), fullyReplicated: true)
        }
        return WriteTicket(id: id, replicas: replicas)
    }

    /// A replica's answer to a write (`held`: it stored it; false: it refused, failed or timed
    /// out). Returns the acknowledgement once the last replica holds it, else nil. A replica that
    /// failed while still a member is owed the key (``owed``): the write waits until a repair
    /// reaches it (``repaired(_:by:held:)``) or it leaves the membership, so a client told "done"
    /// never depends on one lost message. Answers for unknown writes (acknowledged already) are
    /// ignored.
    public mutating func replicaAnswered(write id: UInt64, by member: String, held: Bool) -> Acknowledged? {
        guard let write = pending[id], write.waitingFor.contains(member) else { return nil }
        guard held || !holders(of: write.key).contains(member) else {
            owe([write.key], to: member)
            return nil
        }
        return release(id, from: member, held: held)
    }

    /// Takes `member` off write `id`'s wait; the acknowledgement when nobody is left.
    private mutating func release(_ id: UInt64, from member: String, held: Bool) -> Acknowledged? {
        guard var write = pending[id], write.waitingFor.remove(member) != nil else { return nil }
        if !held { write.fullyReplicated = false }
        guard write.waitingFor.isEmpty else {
            pending[id] = write
            return nil
        }
        pending[id] = nil
        return Acknowledged(write: id, key: write.key, fullyReplicated: write.fullyReplicated)
    }

    /// Gives up the writes of `key` still waiting for replicas (the key's record here was
    /// replaced by another coordinator's, which does not hold them): they are never acknowledged.
    /// Returns their ids.
    public mutating func abandonWrites(of key: String) -> [UInt64] {
        let ids = pending.filter { $0.value.key == key }.map(\.key).sorted()
        for id in ids { pending[id] = nil }
        return ids
    }

    // MARK: - Repairs

    /// Keys each member holds whose last write or hand-over did not reach it, by member: send it
    /// what is held of them now, and report the answer with ``repaired(_:by:held:)``.
    public private(set) var owed: [String: Set<String>] = [:]

    /// Notes that `member` missed what was sent of `keys` (a failed hand-over or write).
    public mutating func owe(_ keys: some Sequence<String>, to member: String) {
        guard member != selfID, ring.members.contains(member) else { return }
        let held = keys.filter { holders(of: $0).contains(member) }
        guard !held.isEmpty else { return }
        owed[member, default: []].formUnion(held)
    }

    /// Members a repair was sent to and has not been answered yet.
    private var repairing: Set<String> = []

    /// The repairs due now, one list of keys per member (at most `maxKeys`; the rest follow the
    /// answer), in member then key order, with the write they carry up to (``lastWrite``): a
    /// member with a repair unanswered gets none until the answer
    /// (``repaired(_:by:held:through:)``), so a member that stopped answering is not flooded.
    public mutating func takeRepairs(maxKeys: Int = .max) -> [(member: String, keys: [String], through: UInt64)] {
        let due = owed.keys.sorted().filter { !repairing.contains($0) }
        repairing.formUnion(due)
        return due.map { ($0, Array(owed[$0]!.sorted().prefix(max(1, maxKeys))), lastWrite) }
    }

    /// The id of the last write begun here (0: none): a repair sent now carries every write up
    /// to it.
    public var lastWrite: UInt64 { nextWrite &- 1 }

    /// `member` answered a repair of `keys` sent when ``lastWrite`` was `through`: once it holds
    /// them, they are no longer owed and every write of them up to `through` waiting for it is
    /// answered (what was sent was the latest of each key then, which includes every earlier
    /// write). Returns the writes that may be acknowledged now.
    public mutating func repaired(_ keys: [String], by member: String, held: Bool, through: UInt64) -> [Acknowledged] {
        repairing.remove(member)
        guard held else {
            owe(keys, to: member)
            return []
        }
        // A key with a later write still waiting for the member stays owed (that write may have
        // failed since the repair was sent).
        let later = Set(pending.filter { $0.key > through && $0.value.waitingFor.contains(member) }.map(\.value.key))
        let repaired = Set(keys)
        owed[member]?.subtract(repaired.subtracting(later))
        if owed[member]?.isEmpty == true { owed[member] = nil }
        var done: [Acknowledged] = []
        for id in pending.keys.sorted() {
            guard id <= through, let write = pending[id], repaired.contains(write.key), write.waitingFor.contains(member) else { continue }
            if let acknowledged = release(id, from: member, held: true) { done.append(acknowledged) }
        }
        return done
    }

    // MARK: - Membership

    /// The alive members changed to `members` (this member is always counted in). `holding` is
    /// every key this member holds records of. Returns what to hand to whom, which keys this member
    /// no longer holds, and the writes no longer waiting for anyone.
    public mutating func membersChanged(to members: some Sequence<String>, holding keys: some Sequence<String>) -> HandOver {
        let old = ring
        ring = OwnerRing(ring.role, memberIDs: Set(members).union([selfID]))
        var handOver = HandOver(send: [:], released: [], acknowledged: [])
        guard ring != old else { return handOver }
        for key in keys {
            let before = Set(holders(of: key, in: old))
            let now = holders(of: key, in: ring)
            // New holders include members that just came back: they may have missed writes while
            // they were away, even of keys they held before they left.
            for member in now where member != selfID && !before.contains(member) {
                handOver.send[member, default: []].append(key)
            }
            if before.contains(selfID), !now.contains(selfID) { handOver.released.append(key) }
        }
        let alive = Set(ring.members)
        // What is owed to a member that left, or of a key it no longer holds, is handed over anew.
        for member in owed.keys.sorted() {
            let keys: Set<String> = alive.contains(member) ? owed[member]!.filter { holders(of: $0, in: ring).contains(member) } : []
            owed[member] = keys.isEmpty ? nil : keys
        }
        repairing.formIntersection(alive)
        for (id, var write) in pending {
            // A replica that left, or holds the key no longer (it reaches its new holders by the
            // hand-over), is waited for no more.
            let holdersNow = Set(holders(of: write.key, in: ring))
            let gone = write.waitingFor.filter { !alive.contains($0) || !holdersNow.contains($0) }
            guard !gone.isEmpty else { continue }
            write.waitingFor.subtract(gone)
            write.fullyReplicated = false
            if write.waitingFor.isEmpty {
                pending[id] = nil
                handOver.acknowledged.append(Acknowledged(write: id, key: write.key, fullyReplicated: false))
            } else {
                pending[id] = write
            }
        }
        handOver.acknowledged.sort { $0.write < $1.write }
        return handOver
    }
}
