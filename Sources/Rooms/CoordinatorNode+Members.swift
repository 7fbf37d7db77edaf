// Pure: no I/O, no clock, no randomness of its own.
import ReplicatedOwnership
import Routing
import ShowroomWire

extension CoordinatorNode {
    /// One member as this coordinator's membership sees it now, with what ownership and the
    /// edges' runs hang on.
    public struct MemberLook: Sendable, Equatable, RoutableMember {
        /// A member's state in the membership.
        public enum State: Sendable, Equatable {
            /// Answering.
            case alive
            /// Suspected of having failed; owns nothing meanwhile.
            case suspect
            /// Declared failed (counted until its tombstone expires).
            case dead
            /// Left the cluster on purpose; not counted.
            case left
        }

        /// The member's node id.
        public var nodeID: String
        /// The role it announces, or nil for one this build does not know.
        public var nodeRole: NodeRole?
        /// Its state.
        public var state: State
        /// Whether this coordinator's connection to it broke (its process died, rather than
        /// being cut off by a partition).
        public var linkBroken: Bool

        /// Member `nodeID` of role `nodeRole` in `state`, its connection broken or not.
        public init(nodeID: String, nodeRole: NodeRole?, state: State, linkBroken: Bool = false) {
            self.nodeID = nodeID
            self.nodeRole = nodeRole
            self.state = state
            self.linkBroken = linkBroken
        }

        /// Whether the membership sees it alive.
        public var isAlive: Bool { state == .alive }
    }

    /// What a change of the members comes to, for the shell to carry out in this order.
    public struct MembersTaken: Sendable {
        /// The catch-up's first asks, or nil when the alive coordinators are the ones seen last
        /// (``TakeOver/membersChanged(to:known:nowMs:seesMostOfTheCluster:)``).
        public var asks: [CatchUp.Ask]?
        /// The placements of channels on edges that are gone, to delete from the store: the next
        /// placement request places them again.
        public var evicted: [RoomChannelPlacement] = []
        /// The hand-over to each key's new holders (``coordinatorsChanged(to:)``).
        public var handOver: ReplicatedStore<CoordinatorRecords>.Effects
    }

    /// Whether this coordinator sees most of the cluster in `members`
    /// (``seesMostOfTheCluster(alive:known:)``); members that left are not counted.
    public func seesMostOfTheCluster(in members: [MemberLook]) -> Bool {
        let known = members.filter { $0.state != .left }
        return seesMostOfTheCluster(alive: known.count { $0.state == .alive }, known: known.count)
    }

    /// The members are `members` now (this coordinator counts among the coordinators whatever
    /// its state there): the take-over of the keys it gained, the placements on edges that are
    /// gone, the edges that died, and the hand-over of what is held here to the keys' new holders.
    public mutating func membersChanged(_ members: [MemberLook], nowMs: Int64) -> MembersTaken {
        let selfID = takeOver.selfID
        let coordinators = OwnerRing(.coordinator, of: members).members
        let now = OwnerRing(.coordinator, memberIDs: Set(coordinators).union([selfID]))
        let known = OwnerRing(.coordinator, memberIDs: Set(members.filter {
            $0.state != .left && $0.nodeRole == .coordinator
        }.map(\.nodeID)).union([selfID]))
        let asks = takeOver.membersChanged(to: now, known: known, nowMs: nowMs, seesMostOfTheCluster: seesMostOfTheCluster(in: members))
        let evicted = records.directory.edgesChanged(alive: Set(members.filter { $0.isAlive(as: .edge) }.map(\.nodeID)))
        edgesDied(in: members)
        return MembersTaken(asks: asks, evicted: evicted, handOver: coordinatorsChanged(to: coordinators))
    }

    /// Notes the edges among `members` whose process died (dead, and this coordinator's
    /// connection broke) or that left: their runs are gone for good. One only cut off by a
    /// partition keeps its connections, and its run.
    public mutating func edgesDied(in members: [MemberLook]) {
        records.directory.edgesDied(Set(members.filter { member in
            member.nodeRole == .edge && (member.state == .left || (member.state == .dead && member.linkBroken))
        }.map(\.nodeID)))
    }
}
