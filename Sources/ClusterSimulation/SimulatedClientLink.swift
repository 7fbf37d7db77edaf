import EdgeServer
import ShowroomKit
import ShowroomWire

/// One SDK engine's link to one edge process, as a client's TCP connection to the edge's client
/// endpoint behaves: messages both ways in order, each after a delay drawn from the network's
/// knobs, none lost while the link stands (TCP retransmits); a partition inside the cluster does
/// not cut it (clients are outside). When the edge's process dies the link breaks and the engine
/// hears of it a delay later, as a socket monitor reports a closed connection. The edge's side is
/// an ``InProcessEdgeClient`` of that edge's current process.
final class SimulatedClientLink: EngineLink {
    let edgeID: String
    private let node: SimulatedNode
    private let client: InProcessEdgeClient?
    private unowned let links: SimulatedClientLinks
    private let receive: ([[UInt8]]) -> Void
    private let broke: () -> Void
    private(set) var isClosed = false
    private var isBroken = false
    /// When the last message each way arrives: a later one never overtakes it.
    private var lastToEdge: Int64 = 0
    private var lastToClient: Int64 = 0

    init(edgeID: String, node: SimulatedNode, edge: InProcessEdge?, links: SimulatedClientLinks,
         receive: @escaping ([[UInt8]]) -> Void, broke: @escaping () -> Void) {
        self.edgeID = edgeID
        self.node = node
        self.links = links
        self.receive = receive
        self.broke = broke
        client = edge?.connect()
        client?.onReceive = { [weak self] frames in self?.toClient(frames) }
    }

    func send(_ envelope: [UInt8]) throws(ShowroomError) -> Bool {
        guard !isClosed else { throw .unavailable("the link to edge \(edgeID) is closed") }
        return send([envelope])
    }

    func sendMedia(_ header: [UInt8], _ payload: [UInt8]) -> Bool {
        !isClosed && send([header, payload])
    }

    private func send(_ frames: [[UInt8]]) -> Bool {
        // A link to a process that is gone carries nothing (its connection never came up, or broke).
        guard !isBroken, node.isCurrent, let client else { return true }
        let at = max(links.now + links.delay(), lastToEdge)
        lastToEdge = at
        links.scheduler.schedule(at: at) { [node] in
            guard node.isCurrent else { return }
            client.send(frames)
        }
        return true
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        // What was sent still arrives; then the edge finds the client gone at its next send.
        guard let client else { return }
        links.scheduler.schedule(at: max(lastToEdge, links.now)) { client.disconnect() }
    }

    private func toClient(_ frames: [[UInt8]]) {
        guard !isClosed else { return }
        let at = max(links.now + links.delay(), lastToClient)
        lastToClient = at
        links.scheduler.schedule(at: at) { [weak self] in
            guard let self, !isClosed, !isBroken else { return }
            receive(frames)
        }
    }

    /// The edge's process died: the engine hears the link break after a delay.
    func edgeDied() {
        guard !isClosed, !isBroken else { return }
        isBroken = true
        client?.disconnect()
        links.scheduler.schedule(at: links.now + 1 + links.delay()) { [weak self] in
            guard let self, !isClosed else { return }
            broke()
        }
    }
}

/// Every client link of a run, by edge, with their own delay draws (a child generator, so that
/// client traffic shifts no draw of the cluster's network).
final class SimulatedClientLinks {
    unowned let scheduler: SimulationScheduler
    private var rng: SimulationRNG
    private let delayMinMs: Int
    private let delayMeanMs: Int
    private var byEdge: [String: [SimulatedClientLink]] = [:]

    init(scheduler: SimulationScheduler, rng: SimulationRNG, knobs: SimulationKnobs) {
        self.scheduler = scheduler
        self.rng = rng
        delayMinMs = knobs.delayMinMs
        // A client's path is no slower than the cluster's own.
        delayMeanMs = max(1, knobs.delayMeanMs / 2)
    }

    var now: Int64 { scheduler.now }

    func delay() -> Int64 { Int64(delayMinMs) + rng.exponential(meanMs: delayMeanMs) }

    /// A new link to `edge` (the process on `node`, nil when it is not running).
    func connect(edgeID: String, node: SimulatedNode, edge: InProcessEdge?,
                 receive: @escaping ([[UInt8]]) -> Void, broke: @escaping () -> Void) -> SimulatedClientLink {
        let link = SimulatedClientLink(edgeID: edgeID, node: node, edge: edge, links: self, receive: receive, broke: broke)
        byEdge[edgeID, default: []].removeAll { $0.isClosed }
        byEdge[edgeID, default: []].append(link)
        return link
    }

    /// Edge `id`'s process died: every link to it breaks.
    func edgeDied(_ id: String) {
        for link in byEdge.removeValue(forKey: id) ?? [] { link.edgeDied() }
    }
}
