import Ownership
import ShowroomKit
import ShowroomWire

/// One app's SDK engine in a run: the SDK's connection logic (``HostedEngine`` over the SDK's
/// `EngineState`) with the run's clock and timers, links to the edges' processes
/// (``SimulatedClientLink``) and the cluster's placement asked of the coordinators as the SDK's
/// coordinator placement asks them (`CHANNEL_PLACE` to the channel's owner, the next one on
/// `UNAVAILABLE` or no answer). Every event the engine gives its app is a line of the log.
final class SimulatedEngine: EngineHost {
    let id: String
    let uid: UInt32
    private unowned let cluster: SimulatedCluster
    private let links: SimulatedClientLinks
    private var network: SimulatedNetwork { cluster.network }
    private(set) var engine: HostedEngine!
    /// Where the run's time starts on the engines' monotonic clock; only differences are used.
    static let base = ContinuousClock.now
    static let placementTimeoutMs: Int64 = 3_000

    init(id: String, uid: UInt32, cluster: SimulatedCluster, links: SimulatedClientLinks) {
        self.id = id
        self.uid = uid
        self.cluster = cluster
        self.links = links
        engine = HostedEngine(clientID: id, host: self)
        engine.onEvent = { [unowned self] event in network.record("engine \(id) \(event)") }
    }

    /// Simulated milliseconds since the run started, of an instant of the engines' clock.
    static func runMs(_ instant: ContinuousClock.Instant) -> Int64 {
        let elapsed = base.duration(to: instant).components
        return Simulation.startMs + elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    }

    // MARK: EngineHost

    var now: ContinuousClock.Instant { Self.base + .milliseconds(network.now - Simulation.startMs) }

    var microseconds: UInt64 { UInt64(network.now - Simulation.startMs) * 1000 }

    func after(_ delay: Duration, _ action: @escaping () -> Void) {
        network.scheduler.after(delay.wholeMilliseconds, action)
    }

    func connect(to edge: EdgeAddress, receive: @escaping ([[UInt8]]) -> Void, broke: @escaping () -> Void) -> (any EngineLink)? {
        guard let node = network.nodes[edge.id] else { return nil }
        network.record("engine \(id) connect \(edge.id)#\(node.incarnation)")
        return links.connect(edgeID: edge.id, node: node, edge: node.alive ? cluster.edges[edge.id] : nil,
                             receive: receive, broke: { [unowned self] in
                                 network.record("engine \(id) link to \(edge.id) broke")
                                 broke()
                             })
    }

    func place(_ channel: String, credentials: PlacementCredentials, avoiding: EdgeAddress?,
               _ done: @escaping (Result<EdgeAddress, ShowroomError>) -> Void) {
        // The coordinators a cluster status lists, the channel's owner first.
        let alive = cluster.coordinatorIDs.filter { network.isAlive($0) }
        let order = OwnerRing(.coordinator, memberIDs: alive).holders(of: channel, count: alive.count)
        let request = RoomPlaceChannelRequest.with {
            $0.channel = channel
            $0.unreachableEdge = avoiding?.id ?? ""
            $0.uid = credentials.uid
            $0.token = credentials.token
            $0.audience = credentials.audience
            $0.preferredEdges = Array(credentials.preferredEdges.prefix(4))
        }
        ask(order, 0, request, done)
    }

    private func ask(_ order: [String], _ index: Int, _ request: RoomPlaceChannelRequest,
                     _ done: @escaping (Result<EdgeAddress, ShowroomError>) -> Void) {
        guard index < order.count else {
            return done(.failure(.unavailable("no coordinator placed '\(request.channel)'")))
        }
        guard let envelope = try? WireEnvelope(request: .channelPlace, id: network.nextRequestID(), body: request) else {
            preconditionFailure("a placement request does not encode")
        }
        network.send(envelope, from: nil, to: order[index], timeoutMs: Self.placementTimeoutMs) { [unowned self] result in
            switch result {
            case .success(let answer):
                if let failure = answer.failure {
                    guard [.unavailable, .deadlineExceeded, .noCoordinator].contains(failure.code) else { return done(.failure(failure)) }
                    ask(order, index + 1, request, done)
                } else if let placed = try? answer.decodeBody(RoomPlaceChannelResponse.self), !placed.edgeID.isEmpty {
                    done(.success(EdgeAddress(id: placed.edgeID, endpoint: placed.clientEndpoint,
                                              curvePublicKey: placed.clientCurvePublicKey)))
                } else {
                    done(.failure(.malformed("a placement answer without an edge")))
                }
            case .failure:
                ask(order, index + 1, request, done)
            }
        }
    }
}
