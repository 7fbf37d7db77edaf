import HummingbirdWebSocket
import Logging
import NIOCore
import ShowroomWire
import Synchronization

/// A coordinator's or call-signal node's client kinds over WebSocket, for pages in a browser,
/// where ZeroMQ is not available: each binary message is one envelope (``WebSocketFraming``, no
/// attachment), served exactly as the node's client socket serves it (``Node/serve(_:face:)``:
/// the same kinds, checks and owners), answered on the same connection.
///
/// A coordinator's notices (its PUB socket's messages) reach a browser here too: a connection
/// names the topics it wants (`EVENTS_SUBSCRIBE`, prefixes as a SUB socket's) and gets each
/// notice published under one of them as a one-way envelope. A connection that falls too far
/// behind loses notices first and is closed past twice its bound, so it never slows the node.
public final class NodeWebSocketFace: Sendable {
    /// The path browsers connect to.
    public static let path = "/v1/node"
    /// The most topics one connection subscribes to.
    public static let maxTopics = 64
    /// The longest topic, in bytes.
    public static let maxTopicBytes = 200
    /// What a topic starts with: a room's notices, a channel's events, a call's events.
    public static let topicPrefixes = ["room/", "channel/", "call/"]

    private struct Connection {
        var outbox: WebSocketOutbox
        var topics: [[UInt8]] = []
        var inFlight = 0
    }

    let listener: WebSocketListener
    /// Whether the node publishes notices (a coordinator): `EVENTS_SUBSCRIBE` is served.
    let publishesEvents: Bool
    /// What may wait for one connection before its notices are dropped.
    let maxQueuedBytes: Int
    /// Requests of one connection being served at once; more are answered `RATE_LIMITED`.
    let maxInFlight: Int
    private let node = Mutex<Node?>(nil)
    private let connections = Mutex<[UInt64: Connection]>([:])
    private let subscribers = Atomic<Int>(0)
    private let lastID = Atomic<UInt64>(0)
    private let logger: Logger

    /// A face on `settings`' address, taking messages up to `maxMessageBytes`.
    /// - Throws: `invalidArgument` for an address or TLS file that is not usable.
    public init(settings: WebSocketSettings, maxMessageBytes: Int, publishesEvents: Bool,
                maxQueuedBytes: Int = 1 << 20, maxInFlight: Int = 32, logger: Logger) throws(ShowroomError) {
        listener = WebSocketListener(settings: try .init(settings, path: Self.path, maxMessageBytes: maxMessageBytes), logger: logger)
        self.publishesEvents = publishesEvents
        self.maxQueuedBytes = maxQueuedBytes
        self.maxInFlight = maxInFlight
        self.logger = logger
    }

    /// Binds and serves; returns `ws://HOST:PORT/v1/node` (`wss://` with TLS) once listening.
    /// Requests are answered `UNAVAILABLE` until ``attach(_:)``.
    public func start(advertiseHost: String?) async throws -> String {
        try await listener.start(advertiseHost: advertiseHost) { [self] inbound, outbound, _ in
            await serve(inbound, outbound)
        }
    }

    /// The node whose client kinds this face serves.
    public func attach(_ node: Node) { self.node.withLock { $0 = node } }

    /// Closes the listening socket and every connection.
    public func stop() async { await listener.stop() }

    /// Sends `envelope` (serialized) to every connection subscribed to a prefix of `topic`.
    /// Any thread; costs a lock and a prefix check per connection, nothing while nobody subscribed.
    public func publish(topic: String, envelope: [UInt8]) {
        guard subscribers.load(ordering: .relaxed) > 0 else { return }
        let size = WebSocketFraming.prefixBytes + envelope.count
        var behind: [UInt64] = []
        connections.withLock { connections in
            for (id, connection) in connections where connection.topics.contains(where: { topic.utf8.starts(with: $0) }) {
                let outcome = connections[id]?.outbox.enqueue(size: size, droppable: true, limit: maxQueuedBytes) {
                    Self.framed(envelope)
                }
                if outcome == .dropped { behind.append(id) }
            }
        }
        for id in behind { logger.debug("a notice dropped for a WebSocket client too far behind", metadata: ["connection": "\(id)"]) }
    }

    // MARK: - A connection

    private func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async {
        let id = lastID.add(1, ordering: .relaxed).newValue
        let outbox = AsyncStream<ByteBuffer>.makeStream()
        connections.withLock { $0[id] = Connection(outbox: WebSocketOutbox(outbox.continuation)) }
        await WebSocketConnection.run(
            inbound, outbound, outbox: outbox, maxMessageBytes: listener.settings.maxMessageBytes, logger: logger,
            written: { [self] bytes in connections.withLock { $0[id]?.outbox.written(bytes) } },
            receive: { receive($0, from: id) })
        let subscribed = connections.withLock { $0.removeValue(forKey: id).map { !$0.topics.isEmpty } ?? false }
        if subscribed { subscribers.subtract(1, ordering: .relaxed) }
    }

    /// One message from connection `id`: answered here (a subscription, an error) or served by
    /// the node without holding up the connection's next messages (a call poll waits long).
    private func receive(_ message: ByteBuffer, from id: UInt64) {
        let request: WireEnvelope
        do throws(ShowroomError) {
            request = try message.withUnsafeReadableBytes { bytes throws(ShowroomError) in
                let parts = try WebSocketFraming.parts(of: bytes)
                guard parts.payload.isEmpty else {
                    throw .malformed("a request to a \(Self.path) face has no attachment after its envelope")
                }
                return try WireEnvelope.decode(frame: UnsafeRawBufferPointer(rebasing: bytes[parts.envelope]))
            }
        } catch {
            return send(WireEnvelope(responseTo: WireEnvelope(), error: error), to: id)
        }
        // One-way messages have nothing to answer and nothing on this face to do.
        guard request.requestID != 0 else { return }
        if request.kind == .eventsSubscribe {
            return send(subscribe(request, id), to: id)
        }
        guard let node = node.withLock({ $0 }) else {
            return send(WireEnvelope(responseTo: request, error: .unavailable("the node is starting; retry in a moment")), to: id)
        }
        let admitted = connections.withLock { connections in
            guard let connection = connections[id], connection.inFlight < maxInFlight else { return false }
            connections[id]?.inFlight += 1
            return true
        }
        guard admitted else {
            return send(WireEnvelope(responseTo: request, error: ShowroomError(
                .rateLimited, "more than \(maxInFlight) requests of this connection are waiting for answers; wait for some")), to: id)
        }
        Task { [self] in
            let answer = await node.serve(request, face: .client)
            connections.withLock { $0[id]?.inFlight -= 1 }
            send(answer, to: id)
        }
    }

    /// `EVENTS_SUBSCRIBE`: checks the topics and makes them the connection's.
    private func subscribe(_ request: WireEnvelope, _ id: UInt64) -> WireEnvelope {
        do throws(ShowroomError) {
            guard publishesEvents else {
                throw .unknownKind("this member publishes no notices: subscribe on a coordinator's \(Self.path) face")
            }
            let topics = try request.decodeBody(RoomSubscribeEventsRequest.self).topics
            guard topics.count <= Self.maxTopics else {
                throw .invalidArgument("\(topics.count) topics; a connection subscribes to at most \(Self.maxTopics)")
            }
            for topic in topics {
                guard (1...Self.maxTopicBytes).contains(topic.utf8.count), Self.topicPrefixes.contains(where: topic.hasPrefix) else {
                    throw .invalidArgument("a topic is 1-\(Self.maxTopicBytes) bytes starting \(Self.topicPrefixes.joined(separator: ", ")), not '\(topic.prefix(64))'")
                }
            }
            let change = connections.withLock { connections -> Int in
                let before = connections[id]?.topics.isEmpty == false
                connections[id]?.topics = topics.map { Array($0.utf8) }
                let after = connections[id]?.topics.isEmpty == false
                return (after ? 1 : 0) - (before ? 1 : 0)
            }
            if change != 0 { subscribers.add(change, ordering: .relaxed) }
            return try WireEnvelope(responseTo: request, body: RoomSubscribeEventsResponse())
        } catch {
            return WireEnvelope(responseTo: request, error: error)
        }
    }

    /// Queues an answer; a connection too far behind is closed (its outbox finished).
    private func send(_ envelope: WireEnvelope, to id: UInt64) {
        let bytes: [UInt8]
        do { bytes = try envelope.serializedBytes() } catch { return }
        let size = WebSocketFraming.prefixBytes + bytes.count
        connections.withLock { connections in
            guard connections[id]?.outbox.enqueue(size: size, droppable: false, limit: maxQueuedBytes, { Self.framed(bytes) }) == .tooFarBehind
            else { return }
            logger.info("WebSocket client closed: too far behind", metadata: ["connection": "\(id)"])
            connections[id]?.outbox.continuation.finish()
        }
    }

    private static func framed(_ envelope: [UInt8]) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: WebSocketFraming.prefixBytes + envelope.count)
        envelope.withUnsafeBytes { WebSocketFraming.write(envelope: $0) { buffer.writeBytes($0) } }
        return buffer
    }
}
