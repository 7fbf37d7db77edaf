import DequeModule
import Edge
import ZeroMQ

/// The edge-to-edge connections of ``InProcessEdge``s in one process: an edge's link to another
/// edge (a relay pulling from its origin, a forward publishing into another edge's channel) is a
/// client connection of that edge, found here by its client endpoint, so relays and forwards run
/// without sockets. Messages cross as bytes through `carry`, which the harness gives: a
/// simulation delays them on its clock, a test queues them and runs ``run()``. A message is never
/// handled inside the call that sent it, so no edge runs inside another's.
///
/// Counts what each edge sent over links (its egress to other edges), and breaks the connections
/// of an edge that dies (``kill(_:)``), as a killed process's TCP connections break.
public final class InProcessEdgeFabric {
    /// What crossed the links from one edge to the edges linked to it.
    public struct Egress: Sendable, Equatable {
        /// Media frames sent.
        public var frames = 0
        /// Their payload bytes.
        public var bytes = 0
        /// Every message sent (frames, replies, events).
        public var messages = 0

        /// Nothing sent.
        public init() {}
    }

    private let carryAction: ((@escaping () -> Void) -> Void)?
    private var queued: Deque<() -> Void> = []
    private var edges: [String: InProcessEdge] = [:]
    private var dead: Set<String> = []
    private var links: [ObjectIdentifier: InProcessEdgeLink] = [:]
    private var egress: [String: Egress] = [:]

    /// Creates a fabric.
    ///
    /// - Parameter carry: Runs each message's arrival later (in the order given, for messages of
    ///   one direction of one link); nil queues them for ``run()``.
    public init(carry: ((@escaping () -> Void) -> Void)? = nil) {
        carryAction = carry
    }

    /// Adds `edge`, reachable at its client endpoint `endpoint` (alive until ``kill(_:)``).
    public func register(_ edge: InProcessEdge, endpoint: String) {
        edges[endpoint] = edge
        dead.remove(endpoint)
    }

    /// Whether an edge is registered at `endpoint` and alive.
    public func isAlive(_ endpoint: String) -> Bool { edges[endpoint] != nil && !dead.contains(endpoint) }

    /// The edge at `endpoint`: its links break for the edges linked to it (as a socket monitor
    /// reports a dropped TCP connection), its own links' sessions on other edges become
    /// unreachable, and nothing sent to or from it arrives any more.
    public func kill(_ endpoint: String) {
        guard edges[endpoint] != nil, dead.insert(endpoint).inserted else { return }
        for id in links.keys.sorted(by: { links[$0]!.serial < links[$1]!.serial }) {
            guard let link = links[id] else { continue }
            if link.holder == endpoint {
                links[id] = nil
                link.remote.disconnect()
                link.isBroken = true
            } else if link.destination == endpoint {
                link.isBroken = true
                carry { [weak link] in link?.onBroke?() }
            }
        }
    }

    /// Delivers every queued message, and what they lead to, until none is left (only without a
    /// `carry` of the harness's). At most `maxSteps` messages.
    public func run(maxSteps: Int = 1_000_000) {
        var steps = 0
        while steps < maxSteps, let next = queued.popFirst() {
            steps += 1
            next()
        }
    }

    /// Whether no message waits for ``run()``.
    public var isIdle: Bool { queued.isEmpty }

    /// What `endpoint`'s edge sent over links so far.
    public func egress(of endpoint: String) -> Egress { egress[endpoint] ?? Egress() }

    /// Links open now (each a client session on its destination edge).
    public var linkCount: Int { links.count }

    // MARK: - Links

    private var serials = 0

    /// A connection from the edge at `holder` to the edge at `destination`, or nil when no edge
    /// is known there. To a dead edge it breaks once the harness carries messages, as a socket's
    /// connection attempt is refused after it was made.
    func connect(from holder: String, to destination: String) -> InProcessEdgeLink? {
        guard isAlive(holder), let edge = edges[destination] else { return nil }
        serials += 1
        let link = InProcessEdgeLink(fabric: self, holder: holder, destination: destination,
                                     remote: edge.connect(), serial: serials)
        guard isAlive(destination) else {
            link.remote.disconnect()
            link.isBroken = true
            return link
        }
        links[ObjectIdentifier(link)] = link
        link.remote.onReceive = { [weak self, weak link] frames in
            guard let self, let link else { return }
            // The destination edge sent it: its egress.
            egress[destination, default: Egress()].messages += 1
            if frames.count == 2 {
                egress[destination, default: Egress()].frames += 1
                egress[destination, default: Egress()].bytes += frames[1].count
            }
            carry { [weak self, weak link] in
                guard let self, let link, !link.isClosed, isAlive(holder), isAlive(destination) else { return }
                link.arrive(frames)
            }
        }
        return link
    }

    /// Carries `frames` from a link's holder to its destination edge.
    func send(_ frames: [[UInt8]], on link: InProcessEdgeLink) -> Bool {
        guard !link.isBroken, !link.isClosed, isAlive(link.holder) else { return false }
        egress[link.holder, default: Egress()].messages += 1
        if frames.count == 2 {
            egress[link.holder, default: Egress()].frames += 1
            egress[link.holder, default: Egress()].bytes += frames[1].count
        }
        carry { [weak self, weak link] in
            guard let self, let link, !link.isClosed, isAlive(link.holder), isAlive(link.destination) else { return }
            link.remote.send(frames)
        }
        return true
    }

    func closed(_ link: InProcessEdgeLink) {
        links[ObjectIdentifier(link)] = nil
    }

    /// Runs `action` as the harness carries messages.
    func carry(_ action: @escaping () -> Void) {
        if let carryAction { carryAction(action) } else { queued.append(action) }
    }
}

/// One edge-to-edge connection in process, the holder's end: what the destination edge sent
/// waits here until the holder's shell reads it, as it would in a DEALER's queue.
final class InProcessEdgeLink {
    unowned let fabric: InProcessEdgeFabric
    /// The holder's and the destination's client endpoints.
    let holder: String
    let destination: String
    /// The connection on the destination edge.
    let remote: InProcessEdgeClient
    /// Creation order, so that a kill breaks links in a fixed order.
    let serial: Int
    private var inbox: Deque<[[UInt8]]> = []
    /// The destination died.
    var isBroken = false
    private(set) var isClosed = false
    /// Messages wait (the shell reads them with ``receive(into:)``).
    var onReadable: (() -> Void)?
    /// The connection broke.
    var onBroke: (() -> Void)?

    init(fabric: InProcessEdgeFabric, holder: String, destination: String, remote: InProcessEdgeClient, serial: Int) {
        self.fabric = fabric
        self.holder = holder
        self.destination = destination
        self.remote = remote
        self.serial = serial
    }

    /// Sends one message (its frames after the routing id).
    func send(_ frames: [[UInt8]]) -> Bool { fabric.send(frames, on: self) }

    func arrive(_ frames: [[UInt8]]) {
        inbox.append(frames)
        onReadable?()
    }

    /// Moves the next waiting message into `buffer`.
    func receive(into buffer: Multipart) -> Bool {
        guard let frames = inbox.popFirst() else { return false }
        buffer.removeAll()
        for frame in frames { buffer.append(frame) }
        return true
    }

    /// Closes the connection: the destination edge finds its client gone at its next send.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        inbox.removeAll()
        onReadable = nil
        onBroke = nil
        remote.disconnect()
        fabric.closed(self)
    }
}
