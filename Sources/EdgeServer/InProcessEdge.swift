import Edge
import Logging
import NodeRuntime
import ShowroomWire
import ZeroMQ

/// An edge in a single-threaded harness: its shell, its link to the room-coordinators through an
/// in-process node (any ``NodeServices``), and clients in the same process that exchange the
/// client protocol's messages with it as opaque bytes. Everything runs on the caller's thread:
/// a client's message is handled when it is sent, the shell's timers run on the node's timer and
/// its time is the node's clock, so a test (or a simulation) that moves the clock by hand drives
/// the edge too.
///
/// What crosses sockets in the edge's process (framing, CURVE, the zero-copy fan-out, ZeroMQ's
/// heartbeats) is not here. Links to other edges (forwards, relays) are client connections of
/// the other edge, found through an ``InProcessEdgeFabric``; without one they are refused
/// `UNAVAILABLE`.
public final class InProcessEdge {
    let face: InProcessClientFace
    let shell: EdgeShell<InProcessClientFace>
    let link: CoordinatorLink

    /// Starts an edge on `node`: its shell and its link to the room-coordinators.
    ///
    /// - Parameters:
    ///   - configuration: The edge's settings (the client binding ones are not used).
    ///   - node: The edge's node: its membership, requests, timers and clock.
    ///   - random: Every random number the edge draws (default: the system's); a simulation
    ///     gives one drawn from its seed.
    ///   - fabric: Where the edge is found by other edges, and finds them, for edge-to-edge
    ///     links; nil: it has no such links.
    ///   - endpoint: The edge's client endpoint, as its member metadata advertises it (what
    ///     coordinators name in relay and forward answers); registered in `fabric`.
    ///   - logger: Where the edge logs.
    public init(configuration: EdgeServerConfiguration, node: any NodeServices,
                random: @escaping () -> UInt64 = { .random(in: 0 ... .max) },
                fabric: InProcessEdgeFabric? = nil, endpoint: String = "", logger: Logger) {
        face = InProcessClientFace(node: node, fabric: fabric, endpoint: endpoint)
        shell = EdgeShell(configuration: configuration, face: face, clock: node.clock, random: random, logger: logger)
        link = CoordinatorLink.start(node: node, edge: SameThreadEdge(shell), run: "\(node.nodeID)-\(node.clock.nowMs())",
                                     logger: logger)
        shell.coordinatorReports = .direct(to: link)
        fabric?.register(self, endpoint: endpoint)
    }

    /// A new client connection.
    public func connect() -> InProcessEdgeClient { face.connect() }

    /// Drains the edge as SIGTERM does; `done` runs once every client moved or `within` passed.
    public func drain(nodeID: String, within: Duration, _ done: @escaping () -> Void) {
        shell.beginDraining(nodeID: nodeID, within: within, done)
    }

    /// A hosted channel, or `nil` if nobody is connected to it.
    public func channel(_ name: String) -> ChannelSnapshot? { shell.plane.channel(name) }
    /// The hosted channels, sorted by name.
    public var channelNames: [String] { shell.plane.channelNames }
    /// The bans the edge enforces now.
    public var activeBans: [ChannelBan] { shell.plane.activeBans }
    /// The stages the edge enforces now.
    public var activeStages: [ChannelStage] { shell.plane.activeStages }
    /// The plane's counters.
    public var statistics: EdgeStatistics { shell.plane.statistics }
    /// Every hosted channel in brief, as reported to the room-coordinators.
    public var channelSummaries: [ChannelSummary] { shell.reportedSummaries() }
    /// The channels hosted as relays, with their local viewers.
    public var relayedChannels: [String: Int] {
        Dictionary(uniqueKeysWithValues: shell.relays.channels.map { ($0, shell.relays.viewers(of: $0)) })
    }
    /// Channel activities the room-coordinators have not taken yet.
    public var pendingActivities: Int { link.pendingActivities }
}

/// A client connection of an ``InProcessEdge``: it sends the client protocol's messages
/// (`[envelope]`, or `[envelope][payload]` for a media frame) and receives the edge's, as bytes.
public final class InProcessEdgeClient {
    /// The connection's routing id, as a ROUTER would give it.
    public let routingID: [UInt8]
    /// The edge's session id for this connection.
    public let session: SessionID
    unowned let face: InProcessClientFace
    /// Whether the connection is up: a closed one receives nothing and is unreachable to the edge.
    public private(set) var isConnected = true
    /// What the edge sent, oldest first: each message's frames after the routing id.
    public private(set) var received: [[[UInt8]]] = []
    /// Called with each message the edge sends instead of keeping it in ``received`` (a
    /// simulated link carries it on); it must not send to the edge from inside the call.
    public var onReceive: (([[UInt8]]) -> Void)?

    init(routingID: [UInt8], face: InProcessClientFace) {
        self.routingID = routingID
        session = SessionID(routingID: routingID)!
        self.face = face
    }

    /// Sends a message to the edge, handled at once.
    public func send(_ frames: [[UInt8]]) {
        guard isConnected else { return }
        face.receive(Multipart([routingID] + frames))
    }

    /// Takes what was received.
    public func takeReceived() -> [[[UInt8]]] {
        defer { received = [] }
        return received
    }

    /// Closes the connection: the edge finds the client gone at its next send.
    public func disconnect() { isConnected = false }

    func deliver(_ frames: [[UInt8]]) {
        if let onReceive { onReceive(frames) } else { received.append(frames) }
    }
}

/// The client face of an ``InProcessEdge``: messages to and from ``InProcessEdgeClient``s as
/// bytes, the timer on the node's, links to other edges through the fabric.
final class InProcessClientFace: ClientFace {
    private let node: any NodeServices
    private let fabric: InProcessEdgeFabric?
    /// This edge's client endpoint in the fabric.
    private let endpoint: String
    private var clients: [SessionID: InProcessEdgeClient] = [:]
    private var handler: (Multipart) -> Bool = { _ in false }
    private var lastClient: UInt32 = 0

    init(node: any NodeServices, fabric: InProcessEdgeFabric?, endpoint: String) {
        self.node = node
        self.fabric = fabric
        self.endpoint = endpoint
    }

    func connect() -> InProcessEdgeClient {
        lastClient += 1
        // A ROUTER's own routing ids: a zero byte and a 32-bit number.
        let id = [0] + withUnsafeBytes(of: lastClient.bigEndian, Array.init)
        let client = InProcessEdgeClient(routingID: id, face: self)
        clients[client.session] = client
        return client
    }

    func receive(_ message: Multipart) { _ = handler(message) }

    func start(receive: @escaping (Multipart) -> Bool, tick: @escaping () -> Void, every interval: Duration) {
        handler = receive
        node.scheduleRepeating(every: interval, tick)
    }

    private func client(_ session: SessionID) -> InProcessEdgeClient? {
        guard let client = clients[session], client.isConnected else { return nil }
        return client
    }

    func sendFrame(_ frame: Multipart, to session: SessionID) -> DeliveryOutcome {
        guard let client = client(session) else { return .unreachable }
        client.deliver((1..<frame.count).map { frame.bytes(of: $0) })
        return .sent
    }

    func sendControl(_ bytes: [UInt8], to session: SessionID) -> Bool {
        guard let client = client(session) else { return false }
        client.deliver([bytes])
        return true
    }

    func sendRaw(_ bytes: [UInt8], to routingID: [UInt8]) {
        clients.values.first { $0.routingID == routingID && $0.isConnected }?.deliver([bytes])
    }

    func flush() -> [SessionID] { [] }
    func sessionClosed(_ session: SessionID) {}
    func sessionOpened(_ session: SessionID, by message: Multipart) -> String? { nil }
    func closeUnopened() {}

    func link(_ key: ForwardKey, to edge: ForwardEdge, now: Duration) throws(ShowroomError) -> ForwardLink {
        guard let fabric else {
            throw .unavailable("an in-process edge without a fabric has no links to other edges (edge \(edge.id))")
        }
        guard let connection = fabric.connect(from: endpoint, to: edge.endpoint) else {
            throw .unavailable("cannot connect a link to edge \(edge): not reachable in process")
        }
        return ForwardLink(key: key, edge: edge, inProcess: connection, now: now)
    }

    func attach(_ link: ForwardLink, receive: @escaping (ForwardLink) -> Void, broke: @escaping (ForwardLink) -> Void) {
        guard case .inProcess(let connection) = link.transport else { return }
        connection.onReadable = { [weak link] in if let link { receive(link) } }
        connection.onBroke = { [weak link] in if let link { broke(link) } }
        if connection.isBroken { fabric?.carry { [weak link] in if let link { broke(link) } } }
    }

    func detach(_ link: ForwardLink) {
        guard case .inProcess(let connection) = link.transport else { return }
        connection.onReadable = nil
        connection.onBroke = nil
    }
}

/// The shell as the coordinator link reaches it on the same thread.
private final class SameThreadEdge<Face: ClientFace>: CoordinatorLinkEdge {
    private let shell: EdgeShell<Face>

    init(_ shell: EdgeShell<Face>) { self.shell = shell }

    func claimAnswered(_ channel: String, _ outcome: ClaimOutcome) { shell.claimAnswered(channel, outcome) }

    func forwardPlaced(_ placement: ForwardPlacement, _ result: Result<ForwardEdge, ShowroomError>) {
        shell.forwardPlaced(placement, result)
    }

    func forwardCommand(_ command: EdgeForwardCommand, completion: @escaping (Result<[ForwardDestinationStatus], ShowroomError>) -> Void) {
        completion(Result { () throws(ShowroomError) in try shell.forwardCommand(command) })
    }

    func forwardedPublishers(_ completion: @escaping ([EdgeForwardedPublisher]) -> Void) { completion(shell.forwardedPublishers) }

    func applyBans(_ bans: [RoomBan], completion: @escaping (Result<Int, ShowroomError>) -> Void) {
        completion(Result { () throws(ShowroomError) in try shell.applyBans(bans) })
    }

    func applyRecordings(_ request: RoomEdgeRecordingsRequest, completion: @escaping (Result<Int, ShowroomError>) -> Void) {
        completion(Result { () throws(ShowroomError) in try shell.applyRecordings(request) })
    }

    func applyStages(_ stages: [RoomStage], completion: @escaping (Result<Int, ShowroomError>) -> Void) {
        completion(Result { () throws(ShowroomError) in try shell.applyStages(stages) })
    }

    func channelsElsewhere(_ channels: [RoomChannelElsewhere]) { shell.channelsElsewhere(channels) }

    func channelUsers(_ request: RoomChannelUsersRequest, completion: @escaping (Result<RoomChannelUsersResponse, ShowroomError>) -> Void) {
        completion(Result { () throws(ShowroomError) in try shell.channelUsers(request) })
    }

    func channelData(_ request: RoomChannelDataRequest, completion: @escaping (Result<RoomChannelDataResponse, ShowroomError>) -> Void) {
        completion(Result { () throws(ShowroomError) in try shell.channelData(request) })
    }
}

extension CoordinatorReports {
    /// Reports handed straight to `link`, on the one thread both run on.
    static func direct(to link: CoordinatorLink) -> CoordinatorReports {
        // One thread: nothing crosses to another.
        nonisolated(unsafe) let link = link
        return CoordinatorReports(
            activities: { link.add($0) }, summary: { link.setSummary($0) }, claim: { link.claim($0) },
            place: { link.place($0) }, draining: { link.announceDraining($0) })
    }
}
