import Membership
import NodeRuntime
import Routing
import ShowroomWire
import SwiftProtobuf

/// The cluster's network and membership as a run sees them: every message between nodes crosses a
/// directed path with its own delay (minimum plus an exponential wait), loss, duplication,
/// reordering and bounded queue; partitions block paths (both ways, or one way); processes die
/// and come back with a new incarnation; each node's view of the members follows the truth after
/// a detection delay, as the membership protocol's would. Every draw comes from the run's network
/// generator and every event goes into the run's log.
public final class SimulatedNetwork {
    /// A member as one node sees it.
    struct View: Equatable {
        var alive: Bool
        var incarnation: UInt64
    }

    /// A request on its way: answered once, by its answer or its timeout.
    final class Pending {
        var done = false
        let completion: (Result<WireEnvelope, ShowroomError>) -> Void
        init(_ completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) { self.completion = completion }
    }

    let scheduler: SimulationScheduler
    var log: SimulationEventLog
    private var rng: SimulationRNG
    /// The run's knobs; the liveness phase clears the network's faults.
    var knobs: SimulationKnobs
    /// The current incarnation of each node (alive or dead), by id.
    private(set) var nodes: [String: SimulatedNode] = [:]
    /// Node ids in the order they were added: every iteration goes in this order.
    private(set) var order: [String] = []
    private var roles: [String: NodeRole] = [:]
    private var skews: [String: Int64] = [:]
    /// Directed paths ("from>to") a partition blocks.
    private var blocked: Set<String> = []
    private var lastArrival: [String: Int64] = [:]
    private var inFlight: [String: Int] = [:]
    private var views: [String: [String: View]] = [:]
    private var generations: [String: UInt64] = [:]
    private var requestIDs: UInt64 = 0

    init(scheduler: SimulationScheduler, log: SimulationEventLog, rng: SimulationRNG, knobs: SimulationKnobs) {
        self.scheduler = scheduler
        self.log = log
        self.rng = rng
        self.knobs = knobs
    }

    var now: Int64 { scheduler.now }

    func record(_ line: String) { log.record(now, line) }

    // MARK: Nodes

    /// Adds node `id` of `role`, alive, with a clock skew drawn from the knobs.
    @discardableResult
    func add(_ id: String, role: NodeRole) -> SimulatedNode {
        let skew = knobs.clockSkewMaxMs == 0 ? 0 : Int64(rng.int(in: -knobs.clockSkewMaxMs...knobs.clockSkewMaxMs))
        order.append(id)
        roles[id] = role
        skews[id] = skew
        let node = SimulatedNode(id: id, role: role, incarnation: 1, network: self, clock: clock(skew: skew))
        nodes[id] = node
        // A node added at the start is known to every node at once.
        for other in order {
            views[other, default: [:]][id] = View(alive: true, incarnation: 1)
            views[id, default: [:]][other] = View(alive: true, incarnation: nodes[other]!.incarnation)
            // Their views changed: what they derived from the members (rings) is derived again.
            if other != id { generations[other, default: 0] += 1 }
        }
        record("add \(id) role=\(role.rawValue) skew=\(skew)")
        return node
    }

    private func clock(skew: Int64) -> WallClock {
        let time = scheduler.time
        return WallClock { time.now + skew }
    }

    /// Whether `id`'s current incarnation runs.
    func isAlive(_ id: String) -> Bool { nodes[id]?.alive ?? false }

    /// Kills `id`: its memory, timers and pending requests are gone; messages to it go nowhere.
    func kill(_ id: String) {
        guard let node = nodes[id], node.alive else { return }
        node.alive = false
        record("kill \(id)#\(node.incarnation)")
        topologyChanged()
    }

    /// Starts a new incarnation of `id` (which must be dead): a node with nothing installed yet.
    func restart(_ id: String) -> SimulatedNode {
        let old = nodes[id]!
        precondition(!old.alive, "\(id) restarted while alive")
        let node = SimulatedNode(id: id, role: old.role, incarnation: old.incarnation + 1, network: self,
                                 clock: clock(skew: skews[id]!))
        nodes[id] = node
        // It knows the members as a joining node learns them from its seeds: the truth.
        views[id] = truth(seenBy: id)
        generations[id, default: 0] += 1
        record("restart \(id)#\(node.incarnation)")
        topologyChanged()
        return node
    }

    // MARK: Partitions

    /// Blocks the paths from every node of `from` to every node of `to`.
    func block(from: [String], to: [String]) {
        for a in from { for b in to where a != b { blocked.insert("\(a)>\(b)") } }
    }

    /// Partitions: `side` cannot reach the others and the others cannot reach it, or (when
    /// `asymmetric`) only `side`'s messages out are lost.
    func partition(_ side: [String], asymmetric: Bool) {
        let others = order.filter { !side.contains($0) }
        block(from: side, to: others)
        if !asymmetric { block(from: others, to: side) }
        record("partition \(side.joined(separator: ",")) | \(others.joined(separator: ",")) \(asymmetric ? "one-way" : "both-ways")")
        topologyChanged()
    }

    /// Heals every partition.
    func heal() {
        guard !blocked.isEmpty else { return }
        blocked.removeAll()
        record("heal")
        topologyChanged()
    }

    /// Whether any partition holds.
    var partitioned: Bool { !blocked.isEmpty }

    // MARK: Membership

    /// What `observer` would see with a perfect failure detector.
    private func truth(seenBy observer: String) -> [String: View] {
        var view: [String: View] = [:]
        for id in order {
            let reachable = id == observer
                || (isAlive(id) && !blocked.contains("\(observer)>\(id)") && !blocked.contains("\(id)>\(observer)"))
            view[id] = View(alive: reachable, incarnation: nodes[id]!.incarnation)
        }
        return view
    }

    /// Each alive node notices what changed after its own detection delay.
    private func topologyChanged() {
        for id in order where isAlive(id) {
            let node = nodes[id]!
            let delay = Int64(rng.int(in: knobs.detectionMinMs...max(knobs.detectionMinMs, knobs.detectionMaxMs)))
            scheduler.after(delay) { [unowned self] in refreshView(of: node) }
        }
    }

    private func refreshView(of node: SimulatedNode) {
        guard node.isCurrent else { return }
        let id = node.nodeID
        let seen = truth(seenBy: id)
        guard seen != views[id] else { return }
        views[id] = seen
        generations[id, default: 0] += 1
        let alive = order.filter { seen[$0]!.alive }
        record("view \(id) alive=\(alive.joined(separator: ","))")
        for observer in node.membershipObservers {
            guard node.isCurrent else { return }
            observer()
        }
    }

    /// The members as `id` sees them, in the order they were added.
    func members(seenBy id: String) -> [Member] {
        let view = views[id] ?? [:]
        return order.map { member in
            let seen = view[member] ?? View(alive: false, incarnation: 0)
            let metadata = MemberMetadata(role: roles[member]!.rawValue, clusterEndpoint: Self.endpoint(member),
                                          clientEndpoint: "sim://\(member)/client")
            return Member(id: MemberID(member), metadata: metadata, state: seen.alive ? .alive : .dead,
                          incarnation: seen.incarnation, lastHeard: nil, stateChangedAt: .zero)
        }
    }

    func generation(of id: String) -> UInt64 { generations[id, default: 0] }

    /// Whether `id` sees `other` alive.
    func sees(_ id: String, alive other: String) -> Bool { views[id]?[other]?.alive ?? false }

    static func endpoint(_ id: String) -> String { "sim://\(id)" }

    static func nodeID(of endpoint: String) -> String {
        endpoint.hasPrefix("sim://") ? String(endpoint.dropFirst("sim://".count)) : endpoint
    }

    func nextRequestID() -> UInt64 {
        requestIDs &+= 1
        return requestIDs
    }

    // MARK: Messages

    /// Carries one message from `from` to `to` through the path's faults; `arrive` runs when (and
    /// each time) it gets there. Client links (`clean`) only delay.
    private func transmit(from: String, to: String, what: String, clean: Bool = false, _ arrive: @escaping () -> Void) {
        let path = "\(from)>\(to)"
        if !clean, inFlight[path, default: 0] >= knobs.pathCapacity {
            record("overflow \(path) \(what)")
            return
        }
        var at = now + Int64(knobs.delayMinMs) + rng.exponential(meanMs: knobs.delayMeanMs)
        if clean || !rng.chance(perMille: knobs.reorderPerMille) {
            at = max(at, lastArrival[path] ?? 0)
            lastArrival[path] = at
        }
        let copies = !clean && rng.chance(perMille: knobs.duplicatePerMille) ? 2 : 1
        inFlight[path, default: 0] += 1
        for copy in 0..<copies {
            let arrival = copy == 0 ? at : at + Int64(knobs.delayMinMs) + rng.exponential(meanMs: knobs.delayMeanMs)
            scheduler.schedule(at: arrival) { [unowned self] in
                if copy == 0 { inFlight[path, default: 1] -= 1 }
                if !clean, blocked.contains(path) {
                    record("cut \(path) \(what)")
                } else if !clean, rng.chance(perMille: knobs.lossPerMille) {
                    record("lost \(path) \(what)")
                } else {
                    record("deliver \(path) \(what)\(copy > 0 ? " again" : "")")
                    arrive()
                }
            }
        }
    }

    /// Sends `request` from node `from` (or a client, when nil) to node `to`; `completion` gets
    /// its answer, or `deadlineExceeded` after `timeoutMs`. Nothing runs for a sender that died.
    func send(_ request: WireEnvelope, from sender: SimulatedNode?, to: String, timeoutMs: Int64,
              completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        let from = sender?.nodeID ?? "client"
        let what = "\(request.kind) #\(request.requestID) \(request.body.count)B"
        let pending = Pending(completion)
        let answer: (Result<WireEnvelope, ShowroomError>) -> Void = { [unowned self] result in
            guard !pending.done else { return record("late \(to)>\(from) \(what)") }
            pending.done = true
            guard sender?.isCurrent ?? true else { return }
            pending.completion(result)
        }
        scheduler.after(timeoutMs) { [unowned self] in
            guard !pending.done else { return }
            record("timeout \(from)>\(to) \(what)")
            answer(.failure(.deadlineExceeded("\(request.kind) to \(to): no answer in \(timeoutMs) ms")))
        }
        transmit(from: from, to: to, what: what, clean: sender == nil) { [unowned self] in
            handle(request, at: to) { [unowned self] response in
                transmit(from: to, to: from, what: "answer \(what)", clean: sender == nil) { answer(.success(response)) }
            }
        }
    }

    /// Runs the handler node `id` serves `request`'s kind with (if it is alive); `respond` gets
    /// the answer envelope unless the node died before answering.
    private func handle(_ request: WireEnvelope, at id: String, respond: @escaping (WireEnvelope) -> Void) {
        guard let node = nodes[id], node.alive else { return record("nobody \(id) \(request.kind) #\(request.requestID)") }
        guard let handler = node.handlers[request.kind] else {
            return respond(WireEnvelope(responseTo: request, error: .unknownKind(
                "node \(id) does not handle \(request.kind) messages"), senderNode: id))
        }
        var answered = false
        handler(request, Node.Responder { outcome in
            precondition(!answered, "\(request.kind) answered twice by \(id)")
            answered = true
            guard node.isCurrent else { return }
            respond(Node.Responder.response(to: request, outcome, senderNode: id))
        })
    }
}

/// One node of a simulated cluster, one incarnation of it: what a role's shell needs of its
/// node, over the simulated network and clock. A restart makes a new one; the old one stays dead.
public final class SimulatedNode: NodeServices {
    public let nodeID: String
    /// The node's role.
    public let role: NodeRole
    /// Which run of the node this is, from 1.
    public let incarnation: UInt64
    public let clock: WallClock
    unowned let network: SimulatedNetwork
    var alive = true
    var handlers: [WireMessageKind: (WireEnvelope, Node.Responder) -> Void] = [:]
    var membershipObservers: [() -> Void] = []

    init(id: String, role: NodeRole, incarnation: UInt64, network: SimulatedNetwork, clock: WallClock) {
        nodeID = id
        self.role = role
        self.incarnation = incarnation
        self.network = network
        self.clock = clock
    }

    /// Whether this is the running incarnation of its node.
    var isCurrent: Bool { alive && network.nodes[nodeID] === self }

    public var membersOnLoop: [Member] { network.members(seenBy: nodeID) }
    public var membershipGeneration: UInt64 { network.generation(of: nodeID) }

    public func serve(_ kind: WireMessageKind, _ handler: @escaping (WireEnvelope, Node.Responder) -> Void) {
        handlers[kind] = handler
    }

    public func forward(_ request: WireEnvelope, to endpoint: String, timeout: Duration,
                        completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        var passed = request
        passed.forwarded = true
        network.send(passed, from: self, to: SimulatedNetwork.nodeID(of: endpoint),
                     timeoutMs: timeout.wholeMilliseconds, completion: completion)
    }

    public func send(_ kind: WireMessageKind, body: some SwiftProtobuf.Message, to endpoint: String, timeout: Duration,
                     completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        do {
            let request = try WireEnvelope(request: kind, id: network.nextRequestID(), body: body, senderNode: nodeID)
            network.send(request, from: self, to: SimulatedNetwork.nodeID(of: endpoint),
                         timeoutMs: timeout.wholeMilliseconds, completion: completion)
        } catch {
            completion(.failure(error))
        }
    }

    public func onMembershipChange(_ observer: @escaping () -> Void) {
        membershipObservers.append(observer)
    }

    public func scheduleRepeating(every interval: Duration, _ action: @escaping () -> Void) {
        let ms = max(interval.wholeMilliseconds, 1)
        network.scheduler.after(ms) { [weak self] in
            guard let self, isCurrent else { return }
            network.record("timer \(nodeID) every \(ms)ms")
            action()
            scheduleRepeating(every: interval, action)
        }
    }

    public func connectionBroken(to endpoint: String) -> Bool {
        !network.isAlive(SimulatedNetwork.nodeID(of: endpoint))
    }
}

extension Duration {
    /// The duration in whole milliseconds.
    var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
