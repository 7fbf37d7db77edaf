@testable import Membership
import ShowroomWire

/// A deterministic simulation of a cluster: N ``Membership`` values, a fake clock, and a network
/// that delivers their `.send` directives with configurable latency and loss. Members can crash
/// (nothing reaches or leaves them), be cut off for a while, be slow (everything they send is
/// delayed) or be partitioned. Every live member is ticked every `tickInterval` of fake time, as
/// the real shell does. A value type: a converged cluster can be copied and reused.
struct SimulatedNetwork: Sendable {
    struct Node: Sendable {
        var membership: Membership
        let id: MemberID
        let endpoint: String
        /// Stopped: receives nothing, sends nothing, is not ticked (SIGKILL).
        var crashed = false
        /// Unreachable both ways but still running (a network cut).
        var isolated = false
        /// Added to the latency of everything it sends (a slow process or link).
        var outgoingDelay: Duration = .zero
        /// Messages only flow within one partition.
        var partition = 0
        var messagesSent = 0
        var bytesSent = 0
        /// When it last started joining.
        var joinedAt: Duration?
    }

    /// A member change reported by `observer`.
    struct Change: Sendable {
        let observer: Int
        let change: MemberChange
        let at: Duration
    }

    private(set) var nodes: [Node] = []
    private(set) var now: Duration = .zero
    private(set) var changes: [Change] = []
    let settings: MembershipSettings
    var tickInterval = Duration.milliseconds(10)
    /// Base one-way latency, plus a uniform jitter in `0..<jitter`.
    var latency = Duration.microseconds(500)
    var jitter = Duration.milliseconds(1)
    /// Probability that a message is lost.
    var lossRate = 0.0
    /// Encode every message with ``GossipCodec`` to count bytes (and check the round trip).
    var measureBytes = false
    private var queue = DeliveryQueue()
    private var rng: SeededRandom
    private var nextTickAt: Duration = .zero
    private var indexByEndpoint: [String: Int] = [:]
    private var nodeSeeds: SeededRandom

    init(settings: MembershipSettings = .lan, seed: UInt64) {
        self.settings = settings
        self.rng = SeededRandom(seed: seed)
        self.nodeSeeds = SeededRandom(seed: seed ^ 0x5EED)
    }

    // MARK: - Building

    static func roleFor(_ index: Int) -> String {
        ["edge", "coordinator", "callsignal"][index % 3]
    }

    /// Adds a member (not joined yet) and returns its index.
    @discardableResult
    mutating func addNode() -> Int {
        let index = nodes.count
        let number = String(index)
        let id = MemberID("node-" + String(repeating: "0", count: max(0, 3 - number.count)) + number)
        let endpoint = "tcp://10.0.\(index / 200).\(index % 200 + 10):7100"
        let metadata = MemberMetadata(
            role: Self.roleFor(index), clusterEndpoint: endpoint,
            clientEndpoint: Self.roleFor(index) == "edge" ? "tcp://10.0.0.\(index % 200 + 10):7200" : "",
            adminEndpoint: "http://10.0.\(index / 200).\(index % 200 + 10):8100", version: "0.1.0")
        let membership = Membership(id: id, metadata: metadata, settings: settings, now: now, randomSeed: nodeSeeds.next())
        nodes.append(Node(membership: membership, id: id, endpoint: endpoint))
        indexByEndpoint[endpoint] = index
        return index
    }

    /// Starts `index` joining through the members at `seeds`.
    mutating func join(_ index: Int, through seeds: [Int]) {
        nodes[index].joinedAt = now
        let directives = nodes[index].membership.join(seeds: seeds.map { nodes[$0].endpoint }, now: now)
        perform(directives, from: index)
    }

    /// A cluster of `count` members joining through member 0, one every `stagger`, run until
    /// everyone sees everyone alive. Returns the network and the time convergence took after the
    /// last join (nil if it did not converge within `limit`).
    static func converged(
        count: Int, settings: MembershipSettings = .lan, seed: UInt64,
        stagger: Duration = .milliseconds(10), limit: Duration = .seconds(30)
    ) -> (network: SimulatedNetwork, convergedAfter: Duration?) {
        var network = SimulatedNetwork(settings: settings, seed: seed)
        network.addNode()
        for index in 1..<count {
            network.addNode()
            network.join(index, through: [0])
            network.run(for: stagger)
        }
        let lastJoin = network.now
        let done = network.run(until: limit) { $0.isConverged }
        return (network, done.map { $0 - lastJoin })
    }

    // MARK: - Failures

    mutating func crash(_ index: Int) {
        nodes[index].crashed = true
    }

    /// A fresh process with the same id and endpoint: a new ``Membership`` at incarnation 0.
    mutating func restart(_ index: Int, joiningThrough seeds: [Int]) {
        let old = nodes[index]
        let metadata = old.membership.localMember.metadata
        nodes[index].membership = Membership(
            id: old.id, metadata: metadata, settings: settings, now: now, randomSeed: nodeSeeds.next())
        nodes[index].crashed = false
        nodes[index].isolated = false
        join(index, through: seeds)
    }

    mutating func setIsolated(_ index: Int, _ isolated: Bool) {
        nodes[index].isolated = isolated
    }

    mutating func setOutgoingDelay(_ index: Int, _ delay: Duration) {
        nodes[index].outgoingDelay = delay
    }

    mutating func setPartition(_ index: Int, _ partition: Int) {
        nodes[index].partition = partition
    }

    mutating func leave(_ index: Int) {
        perform(nodes[index].membership.leave(now: now), from: index)
    }

    mutating func updateMetadata(_ index: Int, _ change: (inout MemberMetadata) -> Void) {
        var metadata = nodes[index].membership.localMember.metadata
        change(&metadata)
        perform(nodes[index].membership.updateMetadata(metadata, now: now), from: index)
    }

    /// Delivers `message` to `index` now, as if it came from the network (e.g. a stale update).
    mutating func inject(_ message: GossipMessage, to index: Int) {
        perform(nodes[index].membership.receive(message, now: now), from: index)
    }

    mutating func resetCounters() {
        for index in nodes.indices {
            nodes[index].messagesSent = 0
            nodes[index].bytesSent = 0
        }
    }

    mutating func clearChanges() {
        changes.removeAll(keepingCapacity: true)
    }

    // MARK: - Running

    /// Advances the fake clock by `duration`, delivering messages and ticking members.
    mutating func run(for duration: Duration) {
        let end = now + duration
        while true {
            if let delivery = queue.earliest, delivery <= nextTickAt, delivery <= end {
                deliverNext()
            } else if nextTickAt <= end {
                now = nextTickAt
                nextTickAt += tickInterval
                tickAll()
            } else {
                now = end
                return
            }
        }
    }

    /// Runs until `condition` holds (checked every `step`) or `limit` passes; returns the time
    /// at which it held, or nil.
    @discardableResult
    mutating func run(
        until limit: Duration, step: Duration = .milliseconds(50), _ condition: (SimulatedNetwork) -> Bool
    ) -> Duration? {
        let end = now + limit
        while now < end {
            if condition(self) { return now }
            run(for: step)
        }
        return condition(self) ? now : nil
    }

    private mutating func tickAll() {
        for index in nodes.indices where !nodes[index].crashed {
            let directives = nodes[index].membership.tick(now: now)
            if !directives.isEmpty { perform(directives, from: index) }
        }
    }

    private mutating func deliverNext() {
        guard let delivery = queue.pop() else { return }
        now = delivery.time
        let target = nodes[delivery.to]
        guard !target.crashed, !target.isolated, !nodes[delivery.from].crashed else { return }
        perform(nodes[delivery.to].membership.receive(delivery.message, now: now), from: delivery.to)
    }

    private mutating func perform(_ directives: [MembershipDirective], from index: Int) {
        for directive in directives {
            switch directive {
            case .memberChanged(let change):
                changes.append(Change(observer: index, change: change, at: now))
            case .send(let message, let endpoint):
                nodes[index].messagesSent += 1
                if measureBytes {
                    let bytes = try! GossipCodec.encode(message)
                    nodes[index].bytesSent += bytes.count
                    precondition(try! GossipCodec.decode(bytes) == message, "codec round trip changed a \(message.kind)")
                }
                guard let to = indexByEndpoint[endpoint] else { continue }
                let sender = nodes[index]
                guard !sender.crashed, !sender.isolated, sender.partition == nodes[to].partition else { continue }
                if lossRate > 0, Double.random(in: 0..<1, using: &rng) < lossRate { continue }
                let delay = latency + jitter * Double.random(in: 0..<1, using: &rng) + sender.outgoingDelay
                queue.push(time: now + delay, from: index, to: to, message: message)
            }
        }
    }

    // MARK: - Observing

    /// Indices of members that run (not crashed, not left).
    var liveIndices: [Int] {
        nodes.indices.filter { !nodes[$0].crashed && nodes[$0].membership.localMember.state != .left }
    }

    /// How `observer` sees member `index`.
    func view(of observer: Int, about index: Int) -> Member? {
        nodes[observer].membership.member(nodes[index].id)
    }

    /// Every live member sees every live member alive at that member's own incarnation.
    var isConverged: Bool {
        let live = liveIndices
        let truth = live.map { nodes[$0].membership.localMember.incarnation }
        for observer in live {
            for (position, subject) in live.enumerated() {
                guard let seen = view(of: observer, about: subject),
                      seen.state == .alive, seen.incarnation == truth[position]
                else { return false }
            }
        }
        return true
    }

    /// Every live member other than `index` sees it in `state`.
    func allSee(_ index: Int, as state: MemberState) -> Bool {
        liveIndices.allSatisfy { $0 == index || view(of: $0, about: index)?.state == state }
    }

    /// Changes about member `index` into `state`, in order.
    func changes(about index: Int, to state: MemberState) -> [Change] {
        changes.filter { $0.change.member.id == nodes[index].id && $0.change.member.state == state }
    }
}
