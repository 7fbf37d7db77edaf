import Calls
import Routing

extension Invariants {
    /// The rules the call checks break.
    static let callRules: Set<String> = [
        "call doubled", "call owner and successor differ", "party free at its owner while in a call",
        "party held in a call that is over", "acknowledged call lost", "party stuck in a call that is over",
    ]

    /// What the call-signal nodes hold once settled, reduced to what the call checks read: the
    /// calls each node holds and the call each user it owns is in, and the records replicas hold.
    struct CallHoldings {
        /// Per node: its calls by id.
        var calls: [String: [String: Call]] = [:]
        /// Per node: the call each user it owns is in.
        var callOf: [String: [UInt32: String]] = [:]
        /// Per node: the records it holds (as owner or replica), by uid.
        var records: [String: [UInt32: UserRecord]] = [:]

        /// What the cluster's call-signal nodes hold of `uids`.
        init(_ cluster: SimulatedCluster, uids: [UInt32]) {
            for id in cluster.callSignalIDs {
                guard let node = cluster.callSignal(id) else { continue }
                calls[id] = node.calls
                callOf[id] = node.callOfUsers.mapValues(\.callID)
                records[id] = Dictionary(uniqueKeysWithValues: uids.compactMap { uid in node.record(of: uid).map { (uid, $0) } })
            }
        }

        init() {}
    }

    /// What the clients of a call workload believe and were acknowledged.
    struct CallClientViews {
        /// Each user's current call and whether it believes that call goes on.
        var current: [UInt32: (callID: String, active: Bool)] = [:]
        /// Calls whose accept was acknowledged.
        var accepted: Set<String> = []
    }

    /// The call checks, once every fault healed and the cluster settled:
    /// - no call doubled: a user is in at most one active call across the calls' owners, and a
    ///   call is active at one node only;
    /// - a call's owner and its successor hold the same call (the callee's replicated record);
    /// - the owner of a user in an active call notes that call as the one the user is in (else the
    ///   user could dial or be rung into a second one), and notes no call that is over;
    /// - no client believes in a call its owner does not hold active (an acknowledged accept
    ///   lost, or an end never told).
    static func calls(_ holdings: CallHoldings, nodes: [String], uids: [UInt32], clients: CallClientViews) -> [Violation] {
        var violations: [Violation] = []
        let ring = OwnerRing(.callsignal, memberIDs: nodes)
        func owner(of uid: UInt32) -> String? { ring.owner(of: UserRecord.key(of: uid)) }
        var active: [String: Call] = [:]
        var heldAt: [String: [String]] = [:]
        var callsOf: [UInt32: Set<String>] = [:]
        for node in nodes {
            for (id, call) in (holdings.calls[node] ?? [:]).sorted(by: { $0.key < $1.key }) where call.isActive {
                heldAt[id, default: []].append(node)
                guard owner(of: call.callee) == node else { continue }
                active[id] = call
                callsOf[call.caller, default: []].insert(id)
                callsOf[call.callee, default: []].insert(id)
            }
        }
        for (id, at) in heldAt.sorted(by: { $0.key < $1.key }) where at.count > 1 {
            violations.append(Violation(rule: "call doubled", detail: "call \(id) is active at \(at.joined(separator: " and "))"))
        }
        for (uid, ids) in callsOf.sorted(by: { $0.key < $1.key }) where ids.count > 1 {
            violations.append(Violation(rule: "call doubled", detail: "uid \(uid) is in calls \(ids.sorted().joined(separator: ", "))"))
        }
        for uid in uids {
            let holders = ring.holders(of: UserRecord.key(of: uid), count: 2)
            guard let owner = holders.first else { continue }
            // The call the user owns as callee, and the one it is in, as the owner holds them now.
            let owned = active.values.first { $0.callee == uid }
            let noted = holdings.callOf[owner]?[uid]
            if holders.count > 1 {
                let replica = holdings.records[holders[1]]?[uid]
                let replicaOwned = replica?.ownedCall.flatMap { $0.isActive ? $0 : nil }
                if replicaOwned?.id != owned?.id || replicaOwned?.phase != owned?.phase || replica?.inCall?.callID != noted {
                    violations.append(Violation(rule: "call owner and successor differ", detail:
                        "uid \(uid): \(owner) holds call \(owned.map { "\($0.id) \($0.phase)" } ?? "none") and notes \(noted ?? "none"); "
                            + "\(holders[1]) holds \(replicaOwned.map { "\($0.id) \($0.phase)" } ?? "none") and notes \(replica?.inCall?.callID ?? "none")"))
                }
            }
            let inCall = callsOf[uid]?.sorted().first
            if let inCall, noted != inCall {
                violations.append(Violation(rule: "party free at its owner while in a call", detail:
                    "uid \(uid) is in call \(inCall), its owner \(owner) notes \(noted ?? "none")"))
            } else if inCall == nil, let noted {
                violations.append(Violation(rule: "party held in a call that is over", detail:
                    "uid \(uid)'s owner \(owner) notes call \(noted), which no owner holds active"))
            }
            if let current = clients.current[uid], current.active, active[current.callID] == nil {
                let rule = clients.accepted.contains(current.callID) ? "acknowledged call lost" : "party stuck in a call that is over"
                violations.append(Violation(rule: rule, detail: "uid \(uid) believes call \(current.callID) goes on; no owner holds it active"))
            }
        }
        return violations
    }
}
