import HummingbirdWSClient
import Logging
import NIOCore
import NIOSSL
import NodeRuntime
import Routing
import ShowroomTesting
import ShowroomWire
import SwiftProtobuf
import XCTest

/// A coordinator's or call-signal node's client kinds over WebSocket, with real sockets: what the
/// node's client socket serves is served the same way (and what it refuses is refused), notices
/// reach the connections subscribed to them, and the hostile cases (origins, framing, internal
/// kinds, topics, too many requests at once) are answered without ending the connection.
final class NodeWebSocketFaceTests: XCTestCase {
    private static let page = "http://127.0.0.1:8080"
    private let nodes = TestNodes()
    private var faces: [NodeWebSocketFace] = []

    override func tearDown() async throws {
        for face in faces { await face.stop() }
        faces = []
        await nodes.stopAll()
    }

    /// A started face on a node of `role`; returns the face, its node and its address.
    private func start(role: NodeRole = .coordinator, publishesEvents: Bool = true, maxInFlight: Int = 32,
                       tls: SelfSignedCertificate? = nil) async throws -> (NodeWebSocketFace, Node, String) {
        var settings = WebSocketSettings()
        settings.allowedOrigins = [Self.page]
        settings.certificateFile = tls?.certificate
        settings.privateKeyFile = tls?.key
        let face = try NodeWebSocketFace(settings: settings, maxMessageBytes: 64 << 10, publishesEvents: publishesEvents,
                                         maxInFlight: maxInFlight, logger: LogCapture.logger(label: "face"))
        faces.append(face)
        let url = try await face.start(advertiseHost: nil)
        let node = try nodes.make("member-\(faces.count)", role: role, webSocketEndpoint: url)
        face.attach(node)
        node.serveBrowsers(face)
        node.join()
        return (face, node, url)
    }

    private func request(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, id: UInt64) throws -> WireEnvelope {
        try WireEnvelope(request: kind, id: id, body: body)
    }

    /// The next answer to request `id`, skipping notices.
    private func answer(_ id: UInt64, _ messages: inout WebSocketInboundMessageStream.AsyncIterator) async throws -> WireEnvelope {
        while true {
            let (envelope, _) = try await receiveFramed(&messages)
            if envelope.isResponse, envelope.requestID == id { return envelope }
        }
    }

    func testClientKindsAreServedAsOnTheClientSocketAndTheMemberAnnouncesItsAddress() async throws {
        let (_, node, url) = try await start()
        XCTAssertTrue(url.hasPrefix("ws://127.0.0.1:") && url.hasSuffix("/v1/node"), url)
        try await withWebSocket(url: url, origin: Self.page) { messages, outbound in
            var messages = messages
            try await sendFramed(try request(.nodeInfo, WireNodeInfoRequest(), id: 1), on: outbound)
            let info = try await answer(1, &messages)
            XCTAssertNil(info.failure)
            XCTAssertEqual(try info.decodeBody(WireNodeInfo.self).nodeID, node.configuration.nodeID)

            try await sendFramed(try request(.clusterStatus, AdminClusterStatusRequest(), id: 2), on: outbound)
            let status = try await answer(2, &messages).decodeBody(AdminClusterStatus.self)
            XCTAssertEqual(status.members.map(\.webSocketEndpoint), [url], "members announce where browsers reach them")
            XCTAssertEqual(status.members.first?.clusterEndpoint, "", "a client sees no cluster endpoint")

            // Internal kinds are refused as on the client socket; the connection stays.
            try await sendFramed(try request(.coordinatorState, AdminClusterStatusRequest(), id: 3), on: outbound)
            let reply70 = try await answer(3, &messages)
            XCTAssertEqual(reply70.failure?.code, .permissionDenied)
            try await sendFramed(try request(.nodeInfo, WireNodeInfoRequest(), id: 4), on: outbound)
            let reply72 = try await answer(4, &messages)
            XCTAssertNil(reply72.failure)
        }
    }

    func testWithACertificateTheFaceSpeaksTLSAndOnlyTLS() async throws {
        let certificate = try SelfSignedCertificate()
        defer { certificate.remove() }
        let (_, node, url) = try await start(role: .callsignal, publishesEvents: false, tls: certificate)
        XCTAssertTrue(url.hasPrefix("wss://127.0.0.1:"), url)
        var trusting = TLSConfiguration.makeClientConfiguration()
        trusting.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate.certificate))
        try await withWebSocket(url: url, origin: Self.page, tls: trusting) { messages, outbound in
            var messages = messages
            try await sendFramed(try request(.nodeInfo, WireNodeInfoRequest(), id: 1), on: outbound)
            let info = try await answer(1, &messages)
            XCTAssertEqual(try info.decodeBody(WireNodeInfo.self).nodeID, node.configuration.nodeID)
        }
        do {
            try await withWebSocket(url: url.replacingOccurrences(of: "wss://", with: "ws://"), deadline: .seconds(3)) { _, _ in
                XCTFail("plain text was let in")
            }
            XCTFail("plain text on the TLS port was not refused")
        } catch {}  // refused, or never upgraded: the TLS layer closes on it
    }

    func testBadFramingIsAnsweredAndTheConnectionStaysButTextClosesIt() async throws {
        let (_, _, url) = try await start()
        try await withWebSocket(url: url, origin: Self.page) { messages, outbound in
            var messages = messages
            for garbage: [UInt8] in [[0, 0], [0, 0, 0, 9, 1], [0xFF, 0xFF, 0xFF, 0xFF, 1, 2], [0, 0, 0, 2, 0xFF, 0xFF]] {
                try await outbound.writeBinaryMessage(ByteBuffer(bytes: garbage))
                let (envelope, _) = try await receiveFramed(&messages)
                XCTAssertEqual(envelope.failure?.code, .malformedMessage, "\(garbage)")
            }
            // A node's requests carry no attachment.
            try await sendFramed(try request(.nodeInfo, WireNodeInfoRequest(), id: 5), payload: [1, 2, 3], on: outbound)
            let reply87 = try await receiveFramed(&messages)
            XCTAssertEqual(reply87.envelope.failure?.code, .malformedMessage)
            try await sendFramed(try request(.nodeInfo, WireNodeInfoRequest(), id: 6), on: outbound)
            let reply89 = try await answer(6, &messages)
            XCTAssertNil(reply89.failure)
            try await outbound.write(.text("hello"))
            while try await messages.next() != nil {}
        }
    }

    func testPagesFromOtherOriginsAreRefused() async throws {
        let (_, _, url) = try await start()
        do {
            try await withWebSocket(url: url, origin: "http://evil.example", deadline: .seconds(5)) { _, _ in
                XCTFail("a page from an origin not allowed was let in")
            }
        } catch is NeverUpgraded {
        } catch {
            // Refused with an HTTP answer: what a browser sees as a failed connection.
        }
        try await withWebSocket(url: url) { _, _ in }  // not a browser: no origin to check
    }

    func testNoticesReachTheConnectionsSubscribedToTheirTopic() async throws {
        let (face, node, url) = try await start()
        var notice = try WireEnvelope(request: .roomNotice, id: 0, body: WireNodeInfoRequest())
        notice.senderNode = "a"
        let bytes: [UInt8] = try notice.serializedBytes()
        try await withWebSocket(url: url, origin: Self.page) { messages, outbound in
            var messages = messages
            var subscribe = RoomSubscribeEventsRequest()
            subscribe.topics = ["room/r1"]
            try await sendFramed(try request(.eventsSubscribe, subscribe, id: 1), on: outbound)
            let reply118 = try await answer(1, &messages)
            XCTAssertNil(reply118.failure)
            node.publishToBrowsers(topic: "room/r2", envelope: bytes)
            face.publish(topic: "room/r1", envelope: bytes)
            let (first, _) = try await receiveFramed(&messages)
            XCTAssertEqual(first.kind, .roomNotice, "room/r2's notice never comes: only room/r1's")
            XCTAssertEqual(first.requestID, 0)

            // Hostile subscriptions are refused and the set stays.
            for topics in [["secret/x"], [""], [String(repeating: "a", count: 201)], (0...64).map { "room/\($0)" }] {
                subscribe.topics = topics
                try await sendFramed(try request(.eventsSubscribe, subscribe, id: 2), on: outbound)
                let reply129 = try await answer(2, &messages)
                XCTAssertEqual(reply129.failure?.code, .invalidArgument, "\(topics.prefix(2))")
            }
            face.publish(topic: "room/r1", envelope: bytes)
            let reply132 = try await receiveFramed(&messages)
            XCTAssertEqual(reply132.envelope.kind, .roomNotice)
            // An empty set stops them.
            subscribe.topics = []
            try await sendFramed(try request(.eventsSubscribe, subscribe, id: 3), on: outbound)
            let reply136 = try await answer(3, &messages)
            XCTAssertNil(reply136.failure)
            face.publish(topic: "room/r1", envelope: bytes)
            try await sendFramed(try request(.nodeInfo, WireNodeInfoRequest(), id: 4), on: outbound)
            let next = try await receiveFramed(&messages).envelope
            XCTAssertEqual(next.requestID, 4, "no notice after unsubscribing")
        }
    }

    func testAMemberWithoutNoticesRefusesSubscriptions() async throws {
        let (_, _, url) = try await start(role: .callsignal, publishesEvents: false)
        try await withWebSocket(url: url, origin: Self.page) { messages, outbound in
            var messages = messages
            var subscribe = RoomSubscribeEventsRequest()
            subscribe.topics = ["room/r1"]
            try await sendFramed(try request(.eventsSubscribe, subscribe, id: 1), on: outbound)
            let reply151 = try await answer(1, &messages)
            XCTAssertEqual(reply151.failure?.code, .unknownKind)
        }
    }

    func testAConnectionWaitsForAtMostItsShareOfAnswersAndAWaitingAnswerHoldsUpNoOther() async throws {
        let (_, node, url) = try await start(role: .callsignal, publishesEvents: false, maxInFlight: 2)
        // Polls that are never answered, as a long poll with nothing to say; kept on the node's loop.
        let held = HeldAnswers()
        try await node.loop.submit {
            node.handleDeferred(.callPoll) { _, _, respond in held.responders.append(respond) }
        }
        func waiting() async throws -> Int { try await node.loop.submit { held.responders.count } }
        func answerOne() async throws {
            try await node.loop.submit { held.responders.removeFirst()(.success(WireNodeInfo())) }
        }
        try await withWebSocket(url: url, origin: Self.page) { messages, outbound in
            var messages = messages
            for id: UInt64 in 1...2 {
                try await sendFramed(try request(.callPoll, WireNodeInfoRequest(), id: id), on: outbound)
            }
            try await eventually("both polls wait at the node") { try await waiting() == 2 }
            try await sendFramed(try request(.callPoll, WireNodeInfoRequest(), id: 3), on: outbound)
            let reply173 = try await answer(3, &messages)
            XCTAssertEqual(reply173.failure?.code, .rateLimited)
            // One answered frees a place.
            try await answerOne()
            let reply176 = try await answer(1, &messages)
            XCTAssertNil(reply176.failure)
            try await sendFramed(try request(.nodeInfo, WireNodeInfoRequest(), id: 4), on: outbound)
            let reply178 = try await answer(4, &messages)
            XCTAssertNil(reply178.failure)
        }
        try await answerOne()
    }
}

/// Answers a test holds back, touched on the node's loop only.
private final class HeldAnswers: @unchecked Sendable {
    var responders: [Node.Responder] = []
}
