import Edge
@testable import EdgeServer
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOSSL
import NodeRuntime
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest
import ZeroMQ

/// Browsers' sessions over the edge's WebSocket face, with real sockets: the same protocol and
/// plane as the ZeroMQ face (a WebSocket viewer gets a ZeroMQ host's frames byte for byte and its
/// GOP at once, a ZeroMQ viewer a WebSocket host's), and the hostile cases (origins, framing,
/// text, a vanished browser).
final class WebSocketFaceTests: XCTestCase {
    private var context: Context!
    private var edge: EdgeServer!
    private var webSocket: String!
    /// The ZeroMQ clients live on a thread of their own: their sockets never leave it.
    private var clientLoop: ZeroMQ.EventLoop!
    private var clients: LoopBound<ZMQClients>!
    private static let allowedOrigin = "http://show.example:8080"

    override func setUp() async throws {
        context = try Context()
        edge = try EdgeServer(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate),
            logger: LogCapture.logger(label: "edge"))
        var settings = WebSocketSettings()
        settings.allowedOrigins = [Self.allowedOrigin]
        webSocket = try await edge.startWebSocket(settings)
        let loop = try ZeroMQ.EventLoop.start(name: "zmq-clients", context: context)
        clientLoop = loop
        clients = try await loop.submit { LoopBound(ZMQClients(), loop: loop) }
    }

    override func tearDown() async throws {
        let clients = self.clients!
        try await clientLoop.submit { clients.value.all.removeAll() }
        clientLoop.shutdown()
        await edge.stop()
        context.shutdown()
    }

    /// A ZeroMQ client with its session open.
    private func client() async throws -> Int {
        let (endpoint, context, clients) = (edge.endpoint, context!, clients!)
        return try await clientLoop.submit {
            let client = try RawEdgeClient(endpoint: endpoint, context: context)
            try client.open()
            clients.value.all.append(client)
            return clients.value.all.count - 1
        }
    }

    /// Runs `body` with ZeroMQ client `index`, on its thread.
    @discardableResult
    private func zmq<T: Sendable>(_ index: Int, _ body: @escaping @Sendable (RawEdgeClient) throws -> T) async throws -> T {
        let clients = self.clients!
        return try await clientLoop.submit { try body(clients.value.all[index]) }
    }

    func testTheEndpointIsAnnouncedWithItsPath() {
        XCTAssertTrue(webSocket.hasPrefix("ws://127.0.0.1:"), webSocket)
        XCTAssertTrue(webSocket.hasSuffix("/v1/edge"), webSocket)
    }

    func testABrowserViewerGetsAZeroMQHostsFramesAndGOPAndAZeroMQViewerABrowserHosts() async throws {
        let host = try await client()
        let payloads = (0..<6).map { i in [UInt8](repeating: UInt8(i), count: 300 + i) }
        try await zmq(host) { host in
            XCTAssertNil(try host.join("web-show", uid: 1, token: TestApp.token(channel: "web-show", uid: 1), role: .broadcaster).failure)
            for i in 0..<3 {
                try host.publish(channel: "web-show", uid: 1, track: .video, sequence: UInt32(i), keyframe: i == 1, payload: payloads[i])
            }
            _ = try host.request(.heartbeat(clientTime: 1))  // its frames are handled once this is answered
        }

        try await browser(origin: Self.allowedOrigin) { browser in
            try await browser.open()
            let joined = try await browser.request(.join(channel: "web-show", uid: 200, token: TestApp.token(channel: "web-show", uid: 200, role: .subscriber),
                                                          role: .audience, options: .defaults(for: .audience)))
            XCTAssertNil(joined.failure)
            // The GOP from its keyframe at once, then what the host sends next, byte for byte.
            try await browser.waitForFrames(2)
            XCTAssertEqual(browser.frames.map(\.header.sequence), [1, 2], "the cache starts at the latest keyframe")
            try await self.zmq(host) { host in
                for i in 3..<6 {
                    try host.publish(channel: "web-show", uid: 1, track: .video, sequence: UInt32(i), keyframe: false, payload: payloads[i])
                }
            }
            try await browser.waitForFrames(5)
            XCTAssertEqual(browser.frames.map(\.payload), Array(payloads[1...]))

            // The browser goes live in a channel of its own; a ZeroMQ viewer gets its frames.
            let own = try await browser.request(.join(channel: "web-host", uid: 300, token: TestApp.token(channel: "web-host", uid: 300),
                                                       role: .broadcaster, options: .defaults(for: .broadcaster)))
            XCTAssertNil(own.failure)
            let viewer = try await self.client()
            try await self.zmq(viewer) { viewer in
                XCTAssertNil(try viewer.join("web-host", uid: 301, token: TestApp.token(channel: "web-host", uid: 301, role: .subscriber), role: .audience).failure)
                try viewer.waitForEvent("the browser host") { $0 == .userJoined(channel: "web-host", uid: 300) }
            }
            let picture = [UInt8](repeating: 0xAB, count: 1_200)
            try await browser.publish(channel: "web-host", uid: 300, sequence: 0, keyframe: true, payload: picture)
            let got = try await self.zmq(viewer) { viewer in
                try viewer.waitForFrames(1)
                return (viewer.frames[0].payload, viewer.frames[0].header.publisherUid)
            }
            XCTAssertEqual(got.0, picture)
            XCTAssertEqual(got.1, 300)
        }
    }

    func testAVanishedBrowserHostGoesOfflineForItsViewers() async throws {
        let viewer = try await client()
        try await zmq(viewer) { viewer in
            XCTAssertNil(try viewer.join("web-gone", uid: 2, token: TestApp.token(channel: "web-gone", uid: 2, role: .subscriber), role: .audience).failure)
        }
        try await browser(origin: nil) { browser in
            try await browser.open()
            let joined = try await browser.request(.join(channel: "web-gone", uid: 400, token: TestApp.token(channel: "web-gone", uid: 400),
                                                          role: .broadcaster, options: .defaults(for: .broadcaster)))
            XCTAssertNil(joined.failure, "a client that names no page origin (not a browser) is let in")
            try await self.zmq(viewer) { viewer in
                try viewer.waitForEvent("the browser host") { $0 == .userJoined(channel: "web-gone", uid: 400) }
            }
        }
        // The connection closed without a leave: the session is over at once, not at its timeout.
        try await zmq(viewer) { viewer in
            try viewer.waitForEvent(timeout: .seconds(3), "the browser host offline") { $0 == .userOffline(channel: "web-gone", uid: 400, reason: .dropped) }
        }
    }

    func testABrowserThatStopsReadingLosesFramesNotTheOthers() async throws {
        let host = try await client()
        let viewer = try await client()
        try await zmq(host) { host in
            XCTAssertNil(try host.join("web-slow", uid: 1, token: TestApp.token(channel: "web-slow", uid: 1), role: .broadcaster).failure)
        }
        try await zmq(viewer) { viewer in
            XCTAssertNil(try viewer.join("web-slow", uid: 2, token: TestApp.token(channel: "web-slow", uid: 2, role: .subscriber), role: .audience).failure)
        }
        try await browser(origin: Self.allowedOrigin) { browser in
            try await browser.open()
            let joined = try await browser.request(.join(channel: "web-slow", uid: 3, token: TestApp.token(channel: "web-slow", uid: 3, role: .subscriber),
                                                          role: .audience, options: .defaults(for: .audience)))
            XCTAssertNil(joined.failure)
            // 36 MB while the browser reads nothing: past its outbox (4 MiB), the client library's
            // buffered messages and the socket's buffers, which loopback TCP grows to several MiB
            // (12 MB once fitted in all of them, and nothing was dropped). Sent in three bursts of
            // 12 MB, each taken by the ZeroMQ viewer before the next, as a reading viewer takes them.
            let frames = 300
            var sequences: [UInt32] = []
            for burst in stride(from: 0, to: frames, by: 100) {
                try await self.zmq(host) { host in
                    for i in burst..<(burst + 100) {
                        try host.publish(channel: "web-slow", uid: 1, track: .video, sequence: UInt32(i), keyframe: i == 0,
                                         payload: [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 120_000))
                    }
                }
                // The ZeroMQ viewer gets every frame, in order, while the browser is stuck.
                sequences = try await self.zmq(viewer) { viewer in
                    try viewer.waitForFrames(burst + 100, timeout: .seconds(8))
                    return viewer.frames.map(\.header.sequence)
                }
            }
            XCTAssertEqual(sequences, Array(0..<UInt32(frames)))
            // The browser reads again: its session is alive, it lost frames, and what it got is in order.
            let alive = try await browser.request(.heartbeat(clientTime: 1))
            XCTAssertNil(alive.failure)
            let got = browser.frames.map(\.header.sequence)
            XCTAssertLessThan(got.count, frames, "frames past its outbox were dropped")
            XCTAssertEqual(got, got.sorted())
            let dropped = try await self.edge.statistics().framesDropped
            XCTAssertGreaterThan(dropped, 0)
        }
    }

    func testHostileBrowsersAreRefusedAndToldWhy() async throws {
        // A page of another origin cannot connect.
        do {
            try await browser(origin: "http://evil.example") { _ in XCTFail("a page of another origin was let in") }
            XCTFail("the upgrade was not refused")
        } catch is NeverUpgraded {
            XCTFail("the upgrade was left hanging, not refused")
        } catch {}

        try await browser(origin: Self.allowedOrigin) { browser in
            // Framing that lies about its envelope: an error event, and the session goes on.
            try await browser.sendRaw([0, 0, 0, 9, 1, 2, 3])
            try await browser.sendRaw([0, 0])
            for _ in 0..<2 {
                let event = try await browser.nextEvent()
                guard case .error(let error, _, _) = event else { return XCTFail("\(event)") }
                XCTAssertEqual(error.code, .malformedMessage)
            }
            // Joining before opening a session: refused with its code.
            let early = try await browser.request(.join(channel: "x", uid: 1, token: "t", role: .audience, options: .defaults(for: .audience)))
            XCTAssertEqual(early.failure?.code, .noSession)
            try await browser.open()
            // A message past max_message_bytes but within the close bound: TOO_LARGE, still open.
            let big = try await browser.request(.heartbeat(clientTime: 1), padding: EdgeLimits().maxMessageBytes + 1)
            XCTAssertEqual(big.failure?.code, .tooLarge)
            let after = try await browser.request(.heartbeat(clientTime: 2))
            XCTAssertNil(after.failure, "the session goes on")
            // Text is not the protocol: the connection is closed.
            try await browser.outbound.writeTextMessage("hello")
            try await browser.waitForClose()
        }
    }

    func testWithACertificateTheFaceSpeaksTLSAndOnlyTLS() async throws {
        let tls = try SelfSignedCertificate()
        defer { tls.remove() }
        let (certificate, key) = (tls.certificate, tls.key)

        var settings = WebSocketSettings()
        settings.certificateFile = certificate
        settings.privateKeyFile = key
        let secure = try await edge.startWebSocket(settings)
        XCTAssertTrue(secure.hasPrefix("wss://127.0.0.1:"), secure)
        var trusting = TLSConfiguration.makeClientConfiguration()
        trusting.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate))
        try await browser(url: secure, tls: trusting) { browser in
            try await browser.open()
            let alive = try await browser.request(.heartbeat(clientTime: 1))
            XCTAssertNil(alive.failure)
        }
        // Plain WebSocket on the TLS port gets nowhere; a client that does not trust the certificate neither.
        do {
            try await browser(url: secure.replacingOccurrences(of: "wss://", with: "ws://"), tls: nil, deadline: .seconds(3)) { _ in
                XCTFail("plain text was let in")
            }
            XCTFail("plain text on the TLS port was not refused")
        } catch {}  // refused, or never upgraded: this client is not told why (the TLS layer closes on it)
        do {
            try await browser(url: secure, tls: .makeClientConfiguration(), deadline: .seconds(3)) { _ in
                XCTFail("an untrusted certificate was taken")
            }
            XCTFail("the client took a certificate it does not trust")
        } catch {}

        // Half a pair, or files that are not PEM: refused with what to fix.
        var half = WebSocketSettings()
        half.certificateFile = certificate
        XCTAssertThrowsError(try half.validate())
        var garbage = WebSocketSettings()
        garbage.certificateFile = key
        garbage.privateKeyFile = certificate
        do {
            _ = try await edge.startWebSocket(garbage)
            XCTFail("a key file given as the certificate was taken")
        } catch let error as ShowroomError {
            XCTAssertEqual(error.code, .invalidArgument)
            XCTAssertTrue(error.message.contains("webSocket"), error.message)
        }
    }

    func testABrowsersSessionIdIsNeitherARoutingIdNorAStandIns() {
        // Any routing id a ZeroMQ peer may choose (1–7 bytes, any values) and a relay's stand-ins.
        for id in [[UInt8](repeating: 0xFF, count: 7), [0x80], [0, 0, 0, 0, 0x80], [0x80, 0, 0, 0, 0, 0, 1]] {
            XCTAssertFalse(WebSocketClients.isWebSocket(SessionID(routingID: id)!), "\(id)")
        }
        XCTAssertFalse(WebSocketClients.isWebSocket(SessionID(RelayBook.standInIDBase | 1)))
        XCTAssertTrue(WebSocketClients.isWebSocket(SessionID(0x80 << 56 | 1)))
    }

    func testTheFramingIsTheEnvelopeLengthThenTheEnvelopeThenThePayload() throws {
        let message = [UInt8]([7, 7, 7]).withUnsafeBytes { envelope in
            [UInt8]([1, 2]).withUnsafeBytes { WebSocketFraming.message(envelope: envelope, payload: $0) }
        }
        XCTAssertEqual(message, [0, 0, 0, 3, 7, 7, 7, 1, 2])
        func parts(_ bytes: [UInt8]) -> Result<(envelope: Range<Int>, payload: Range<Int>), ShowroomError> {
            bytes.withUnsafeBytes { bytes in Result { () throws(ShowroomError) in try WebSocketFraming.parts(of: bytes) } }
        }
        let split = try parts(message).get()
        XCTAssertEqual(split.envelope, 4..<7)
        XCTAssertEqual(split.payload, 7..<9)
        for hostile: [UInt8] in [[], [0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 2, 1], [0xFF, 0xFF, 0xFF, 0xFF, 1]] {
            guard case .failure(let error) = parts(hostile) else { XCTFail("\(hostile) was taken"); continue }
            XCTAssertEqual(error.code, .malformedMessage)
        }
    }

    // MARK: - A scripted browser

    /// Connects to the edge's WebSocket face (with `origin` as a page's `Origin`, or none) and
    /// runs `script` on the connection; the connection closes when it returns. At the deadline
    /// (10 s) the connection is cut, so a script waiting for what never comes fails instead of
    /// hanging, and a refused connection that is never told so counts as refused.
    private func browser(origin: String?, _ script: (inout BrowserSession) async throws -> Void) async throws {
        try await browser(url: webSocket, origin: origin, tls: nil, script)
    }

    private func browser(url: String, origin: String? = nil, tls: TLSConfiguration?, deadline limit: Duration = .seconds(10),
                         _ script: (inout BrowserSession) async throws -> Void) async throws {
        try await withWebSocket(url: url, origin: origin, tls: tls, deadline: limit) { messages, outbound in
            var session = BrowserSession(messages: messages, outbound: outbound)
            try await script(&session)
        }
    }
}

/// The ZeroMQ clients of a test, kept on their thread.
private final class ZMQClients {
    var all: [RawEdgeClient] = []
}

/// One browser connection as a test drives it: requests and their replies, events and frames.
private struct BrowserSession {
    var messages: WebSocketInboundMessageStream.AsyncIterator
    let outbound: WebSocketOutboundWriter
    var nextID: UInt64 = 1
    var events: [EdgeEvent] = []
    var frames: [(header: WireMediaHeader, payload: [UInt8])] = []

    mutating func open() async throws {
        if let failure = try await request(.openSession(clientID: "browser-\(UInt32.random(in: 0 ... .max))", sdkVersion: "test")).failure {
            throw failure
        }
    }

    /// Sends a request (its envelope padded past `padding` bytes, if given) and waits for its reply.
    mutating func request(_ request: EdgeRequest, padding: Int = 0) async throws -> EdgeReply {
        let id = nextID
        nextID += 1
        var envelope = try EdgeCodec.envelope(request: request, id: id)
        if padding > 0 { envelope.body += Data(count: padding) }
        try await send(envelope)
        while true {
            let envelope = try await receive()
            if envelope.isResponse, envelope.requestID == id { return try EdgeCodec.reply(from: envelope) }
        }
    }

    /// Publishes one video frame.
    mutating func publish(channel: String, uid: UInt32, sequence: UInt32, keyframe: Bool, payload: [UInt8]) async throws {
        let header = WireMediaHeader.testFrame(channel: channel, uid: uid, track: .video, sequence: sequence, keyframe: keyframe, payloadSize: payload.count)
        var envelope = WireEnvelope()
        envelope.kind = .mediaFrame
        envelope.body = try header.serializedData()
        try await send(envelope, payload: payload)
    }

    func send(_ envelope: WireEnvelope, payload: [UInt8]? = nil) async throws {
        try await sendFramed(envelope, payload: payload, on: outbound)
    }

    func sendRaw(_ bytes: [UInt8]) async throws {
        try await outbound.writeBinaryMessage(ByteBuffer(bytes: bytes))
    }

    /// The next message; frames and events are filed as they come.
    mutating func receive() async throws -> WireEnvelope {
        let (envelope, payload) = try await receiveFramed(&messages)
        if envelope.kind == .mediaFrame {
            frames.append((try envelope.decodeBody(WireMediaHeader.self), payload))
        } else if !envelope.isResponse, envelope.kind != .keyframeRequest {
            events.append(try EdgeCodec.event(from: envelope))
        }
        return envelope
    }

    mutating func nextEvent() async throws -> EdgeEvent {
        while events.isEmpty { _ = try await receive() }
        return events.removeFirst()
    }

    mutating func waitForFrames(_ count: Int) async throws {
        while frames.count < count { _ = try await receive() }
    }

    /// Reads until the edge closes the connection.
    mutating func waitForClose() async throws {
        while try await messages.next() != nil {}
    }
}
