import Routing
import ShowroomKit
import ShowroomWire
import Synchronization
import XCTest
import ZeroMQ

/// A stand-in room coordinator on loopback, on its own event loop: a ROUTER that answers
/// `CLUSTER_STATUS` with ``status`` and every other request with ``handler``, and an XPUB events
/// endpoint that records subscriptions and publishes what the test asks.
final class FakeCoordinator: Sendable {
    /// Answers a request; `nil` leaves it unanswered.
    typealias Handler = @Sendable (WireEnvelope) -> WireEnvelope?

    let id: String
    let loop: EventLoop
    let clusterEndpoint: String
    let eventsEndpoint: String
    private let statusAnswer = Locked(AdminClusterStatus())
    private let handlerSlot = Locked<Handler?>(nil)
    private let received = Locked<[WireEnvelope]>([])
    private let subscribed = Locked<[String]>([])
    private let publisher: LoopBound<Socket>

    init(id: String) throws {
        self.id = id
        let loop = try EventLoop.start(name: "fake-\(id)", context: Context())
        self.loop = loop
        let status = statusAnswer
        let handler = handlerSlot
        let received = self.received
        let subscribed = self.subscribed
        let (cluster, events, publisher) = try loop.submitAndWait { () throws -> (String, String, LoopBound<Socket>) in
            let router = try Socket(.router, context: loop.context)
            let cluster = try router.bind("tcp://127.0.0.1:*")
            loop.register(router) { socket, _ in
                while let frames = try? socket.receiveFrames() {
                    guard frames.count == 2, let request = try? WireEnvelope.decode(frame: frames[1]) else { continue }
                    let answer: WireEnvelope?
                    if request.kind == .clusterStatus {
                        answer = try? WireEnvelope(responseTo: request, body: status.withLock { $0 })
                    } else {
                        received.withLock { $0.append(request) }
                        answer = handler.withLock { $0 }?(request)
                    }
                    if let answer, let bytes: [UInt8] = try? answer.serializedBytes() {
                        _ = try? socket.send(frames: [frames[0], bytes])
                    }
                }
            }
            let xpub = try Socket(.xpub, context: loop.context)
            try xpub.set(.xpubVerbose, 1)  // every subscription, also repeated ones
            let events = try xpub.bind("tcp://127.0.0.1:*")
            loop.register(xpub) { socket, _ in
                while let frames = try? socket.receiveFrames(), let first = frames.first, first.first == 1 {
                    subscribed.withLock { $0.append(String(decoding: first.dropFirst(), as: UTF8.self)) }
                }
            }
            return (cluster, events, LoopBound(xpub, loop: loop))
        }
        clusterEndpoint = cluster
        eventsEndpoint = events
        self.publisher = publisher
    }

    /// This coordinator as a member of a status document.
    var member: AdminMemberStatus {
        var member = AdminMemberStatus()
        member.id = id
        member.role = "coordinator"
        member.state = .alive
        member.clusterEndpoint = clusterEndpoint
        // The fake serves clients on the same socket.
        member.clientEndpoint = clusterEndpoint
        member.eventsEndpoint = eventsEndpoint
        return member
    }

    /// What `CLUSTER_STATUS` answers from now on.
    func answerStatus(with members: [AdminMemberStatus]) {
        var status = AdminClusterStatus()
        status.reporter = id
        status.members = members
        statusAnswer.withLock { $0 = status }
    }

    /// How requests other than `CLUSTER_STATUS` are answered from now on.
    func answer(with handler: @escaping Handler) {
        handlerSlot.withLock { $0 = handler }
    }

    /// The requests other than `CLUSTER_STATUS` received so far.
    var requests: [WireEnvelope] { received.withLock { $0 } }

    /// The topics subscribed to so far.
    var subscriptions: [String] { subscribed.withLock { $0 } }

    /// Publishes a room notice under "room/<id>".
    func publish(_ notice: RoomRoomNotice) {
        let publisher = self.publisher
        loop.execute {
            guard let envelope = try? WireEnvelope(request: .roomNotice, id: 0, body: notice),
                  let bytes: [UInt8] = try? envelope.serializedBytes()
            else { return }
            _ = try? publisher.value.send(frames: [Array("room/\(notice.roomID)".utf8), bytes])
        }
    }

    func stop() {
        loop.shutdown()
    }
}

/// A member entry for an edge or a dead-end coordinator.
func member(id: String, role: String, cluster: String = "", client: String = "", state: GossipMemberState = .alive) -> AdminMemberStatus {
    var member = AdminMemberStatus()
    member.id = id
    member.role = role
    member.state = state
    member.clusterEndpoint = cluster
    member.clientEndpoint = client
    return member
}

/// A key (room id, channel) whose rendezvous owner among `ids` is `owner`.
func key(ownedBy owner: String, among ids: [String], prefix: String) -> String {
    (1...1000).lazy.map { "\(prefix)-\($0)" }.first { RendezvousHashing.owner(key: $0, among: ids) == owner }!
}

/// A value shared between threads behind a lock (a class, so closures can capture it).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}
