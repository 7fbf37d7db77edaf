import Membership
import NodeRuntime
import Routing
import ShowroomWire
import Synchronization
import SwiftProtobuf
import ZeroMQ

/// A cluster of in-process nodes with a fake network and a clock moved by hand: a role's request
/// handling (a coordinator's, a call-signal node's) runs against it without processes, sockets or
/// threads, in the spirit of NIO's embedded channel. Everything happens on the caller's thread:
/// messages wait in a queue until ``run(maxSteps:)`` delivers them, timers fire when ``advance(by:)``
/// moves the clock past them, and members die, return and are held back only when the test says so.
///
/// Every node sees the same membership: the members added, each alive unless ``kill(_:)`` marked it
/// dead. A message to a dead member, or one that ``hold(_:)`` holds when it is released with
/// ``dropHeld(_:)``, fails as a timed-out request would (`deadlineExceeded`).
public final class InProcessNetwork {
    /// One node of the network: what a role's shell needs of its node.
    public final class Node: NodeServices {
        public let nodeID: String
        /// The node's role.
        public let role: NodeRole
        unowned let network: InProcessNetwork
        var handlers: [WireMessageKind: (WireEnvelope, NodeRuntime.Node.Responder) -> Void] = [:]
        var membershipObservers: [() -> Void] = []
        var timers: [(interval: Duration, due: Int64, action: () -> Void)] = []

        init(id: String, role: NodeRole, network: InProcessNetwork) {
            nodeID = id
            self.role = role
            self.network = network
        }

        /// Where the others reach this node.
        public var clusterEndpoint: String { "inproc://\(nodeID)" }

        public var membersOnLoop: [Member] { network.members }
        public var membershipGeneration: UInt64 { network.generation }
        public var clock: WallClock { network.clock }

        public func serve(_ kind: WireMessageKind, _ handler: @escaping (WireEnvelope, NodeRuntime.Node.Responder) -> Void) {
            handlers[kind] = handler
        }

        public func forward(_ request: WireEnvelope, to endpoint: String, timeout: Duration,
                            completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
            var passed = request
            passed.forwarded = true
            network.enqueue(passed, from: nodeID, to: endpoint, completion: completion)
        }

        public func send(_ kind: WireMessageKind, body: some SwiftProtobuf.Message, to endpoint: String,
                         timeout: Duration, completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
            do {
                let request = try WireEnvelope(request: kind, id: network.nextRequestID(), body: body, senderNode: nodeID)
                network.enqueue(request, from: nodeID, to: endpoint, completion: completion)
            } catch {
                completion(.failure(error))
            }
        }

        public func onMembershipChange(_ observer: @escaping () -> Void) {
            membershipObservers.append(observer)
        }

        public func connectionBroken(to endpoint: String) -> Bool {
            guard let id = network.nodes.first(where: { $0.value.clusterEndpoint == endpoint })?.key else { return true }
            return !network.isAlive(id)
        }

        public func scheduleRepeating(every interval: Duration, _ action: @escaping () -> Void) {
            timers.append((interval, network.now + Int64(interval.milliseconds), action))
        }

        /// Handles `request` as if a client had sent it to this node, and delivers every message
        /// that follows from it; returns the answer.
        public func request(_ request: WireEnvelope) throws -> WireEnvelope {
            var answer: Result<WireEnvelope, ShowroomError>?
            network.deliver(request, to: self) { answer = $0 }
            network.run()
            guard let answer else {
                throw ShowroomError.deadlineExceeded("node \(nodeID) did not answer \(request.kind) (a held message?)")
            }
            return try answer.get()
        }

        /// Sends `body` as a `kind` request to this node and returns the decoded answer, or throws
        /// the error it answered with.
        public func ask<Answer: SwiftProtobuf.Message>(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message,
                                                       as answer: Answer.Type = Answer.self) throws -> Answer {
            let envelope = try request(try WireEnvelope(request: kind, id: network.nextRequestID(), body: body))
            if let failure = envelope.failure { throw failure }
            return try envelope.decodeBody(Answer.self)
        }

        /// Starts a request whose answer may wait for messages the test holds: `completion` gets
        /// it once the network delivers it.
        public func begin(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message,
                          completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) throws {
            network.deliver(try WireEnvelope(request: kind, id: network.nextRequestID(), body: body), to: self,
                            completion: completion)
        }
    }

    private struct Pending {
        let request: WireEnvelope
        let from: String
        let to: String
        let completion: (Result<WireEnvelope, ShowroomError>) -> Void
    }

    /// What travels: a request to a node's handler, or an answer back to the node that asked
    /// (dropped when that node died meanwhile).
    private enum Item {
        case request(Pending)
        case answer(to: String, deliver: () -> Void)
    }

    /// The hand-moved time every node's clock reads.
    private final class ManualTime: Sendable {
        let ms: Atomic<Int64>
        init(_ ms: Int64) { self.ms = Atomic(ms) }
    }

    private let time: ManualTime
    /// The clock every node reads.
    public let clock: WallClock
    /// The nodes, by id, in the order they were added.
    public private(set) var nodes: [String: Node] = [:]
    private var order: [String] = []
    private var dead: Set<String> = []
    private var held: Set<String> = []
    private var queue: [Item] = []
    private var heldMessages: [Pending] = []
    private var requestIDs: UInt64 = 0
    /// Every message delivered, as (from, to, kind), for tests that check who spoke to whom.
    public private(set) var delivered: [(from: String, to: String, kind: WireMessageKind)] = []

    /// A network whose clock starts at `startMs` (milliseconds since the Unix epoch; default: the
    /// system's time now, so that tokens minted for tests are valid on it) and then moves only
    /// through ``advance(by:)``.
    public init(startMs: Int64 = WallClock.system.nowMs()) {
        let time = ManualTime(startMs)
        self.time = time
        clock = WallClock { time.ms.load(ordering: .relaxed) }
    }

    /// The clock's time, in milliseconds since the Unix epoch.
    public var now: Int64 { time.ms.load(ordering: .relaxed) }

    /// Adds a node of `role` (alive); nothing runs on it until a shell is installed on it. The
    /// others learn of it when ``membershipChanged()`` is called.
    @discardableResult
    public func add(_ id: String, role: NodeRole) -> Node {
        let node = Node(id: id, role: role, network: self)
        nodes[id] = node
        if !order.contains(id) { order.append(id) }
        dead.remove(id)
        generation += 1
        return node
    }

    /// Marks `id` dead: messages to it fail, it receives nothing and its timers stop. Call
    /// ``membershipChanged()`` to tell the others.
    public func kill(_ id: String) {
        dead.insert(id)
        generation += 1
    }

    /// Whether `id` is alive.
    public func isAlive(_ id: String) -> Bool { nodes[id] != nil && !dead.contains(id) }

    /// Bumped whenever a node is added or killed: what ``Node/membershipGeneration`` reads.
    var generation: UInt64 = 0

    /// Every member as each node sees it.
    var members: [Member] {
        order.compactMap { id in
            guard let node = nodes[id] else { return nil }
            let metadata = MemberMetadata(role: node.role.rawValue, clusterEndpoint: node.clusterEndpoint,
                                          clientEndpoint: "inproc://\(id)/client")
            return Member(id: MemberID(id), metadata: metadata, state: dead.contains(id) ? .dead : .alive,
                          incarnation: 1, lastHeard: nil, stateChangedAt: .zero)
        }
    }

    /// Tells every alive node that the membership changed, and delivers what follows.
    public func membershipChanged() {
        for id in order where isAlive(id) {
            for observer in nodes[id]?.membershipObservers ?? [] { observer() }
        }
        run()
    }

    /// Holds every message to `id` until ``release(_:)`` or ``dropHeld(_:)``.
    public func hold(_ id: String) { held.insert(id) }

    /// Lets the messages held for `id` go, and delivers them.
    public func release(_ id: String) {
        held.remove(id)
        let released = heldMessages.filter { $0.to == id }
        heldMessages.removeAll { $0.to == id }
        queue.append(contentsOf: released.map(Item.request))
        run()
    }

    /// Loses the messages held for `id`: their senders see a timeout.
    public func dropHeld(_ id: String) {
        held.remove(id)
        let dropped = heldMessages.filter { $0.to == id }
        heldMessages.removeAll { $0.to == id }
        for message in dropped {
            message.completion(.failure(.deadlineExceeded("\(message.request.kind) to \(id) timed out")))
        }
        run()
    }

    /// How many messages wait for `id` because it is held.
    public func heldCount(for id: String) -> Int { heldMessages.filter { $0.to == id }.count }

    /// Moves the clock by `interval`, firing each alive node's timers as they fall due, and
    /// delivers what follows.
    public func advance(by interval: Duration) {
        let end = now + Int64(interval.milliseconds)
        while true {
            var next: (id: String, index: Int, due: Int64)?
            for id in order where isAlive(id) {
                for (index, timer) in (nodes[id]?.timers ?? []).enumerated() where timer.due <= end {
                    if next == nil || timer.due < next!.due { next = (id, index, timer.due) }
                }
            }
            guard let next, let node = nodes[next.id] else { break }
            time.ms.store(max(now, next.due), ordering: .relaxed)
            let timer = node.timers[next.index]
            node.timers[next.index].due = next.due + max(Int64(timer.interval.milliseconds), 1)
            timer.action()
            run()
        }
        time.ms.store(end, ordering: .relaxed)
        run()
    }

    /// Delivers queued messages and their answers until none is left (held ones stay), at most
    /// `maxSteps` of them: a test whose nodes keep talking forever fails instead of hanging.
    public func run(maxSteps: Int = 100_000) {
        var steps = 0
        while !queue.isEmpty {
            steps += 1
            precondition(steps <= maxSteps, "the in-process network did not settle after \(maxSteps) messages")
            switch queue.removeFirst() {
            case .answer(let to, let deliver):
                if isAlive(to) { deliver() }
            case .request(let message):
                if held.contains(message.to) {
                    heldMessages.append(message)
                    continue
                }
                guard let node = nodes[message.to], isAlive(message.to) else {
                    message.completion(.failure(.deadlineExceeded("\(message.request.kind) to \(message.to): no answer")))
                    continue
                }
                delivered.append((message.from, message.to, message.request.kind))
                deliver(message.request, to: node, completion: message.completion)
            }
        }
    }

    func nextRequestID() -> UInt64 {
        requestIDs &+= 1
        return requestIDs
    }

    fileprivate func enqueue(_ request: WireEnvelope, from: String, to endpoint: String,
                             completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        let target = endpoint.hasPrefix("inproc://") ? String(endpoint.dropFirst("inproc://".count)) : endpoint
        // The answer travels back through the queue too, so it arrives after what was sent before it.
        queue.append(.request(Pending(request: request, from: from, to: target) { [unowned self] result in
            queue.append(.answer(to: from) { completion(result) })
        }))
    }

    fileprivate func deliver(_ request: WireEnvelope, to node: Node,
                             completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void) {
        guard let handler = node.handlers[request.kind] else {
            completion(.success(WireEnvelope(responseTo: request, error: .unknownKind(
                "node \(node.nodeID) does not handle \(request.kind) messages"), senderNode: node.nodeID)))
            return
        }
        var answered = false
        handler(request, NodeRuntime.Node.Responder { outcome in
            precondition(!answered, "\(request.kind) answered twice by \(node.nodeID)")
            answered = true
            let response = NodeRuntime.Node.Responder.response(to: request, outcome, senderNode: node.nodeID)
            completion(.success(response))
        })
    }
}

