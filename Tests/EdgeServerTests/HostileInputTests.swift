#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Edge
import EdgeServer
import Logging
import ShowroomAuth
import ShowroomWire
import XCTest
import ShowroomTesting
import ZeroMQ

/// What a client written from `proto/` alone can send an edge, with real sockets: oversize
/// messages, extra frames, connections that never open a session. Bad names and headers, which
/// the shell refuses whatever carries them, are in ``HostileInputInProcessTests``.
final class HostileInputTests: XCTestCase {
    private var context: Context!
    private var edge: EdgeServer!
    private let unopenedTimeout: Duration = .seconds(1)

    override func setUpWithError() throws {
        context = try Context()
        var settings = EdgeSettings()
        // Every refusal reported, so each hostile case gets its own answer.
        settings.refusalReportInterval = .zero
        edge = try EdgeServer(
            configuration: EdgeServerConfiguration(
                appID: TestApp.appID, appCertificate: TestApp.certificate, settings: settings,
                unopenedConnectionTimeout: unopenedTimeout),
            logger: LogCapture.logger(label: "edge"))
    }

    override func tearDown() {
        edge.shutdown()
        context.shutdown()
    }

    // MARK: Helpers

    /// A DEALER that sends raw frames and waits for the answer to a request id.
    private final class Peer {
        let socket: Socket
        private var nextID: UInt64 = 1
        private(set) var events: [EdgeEvent] = []

        init(_ endpoint: String, context: Context) throws {
            socket = try Socket(.dealer, context: context)
            try socket.connect(endpoint)
        }

        deinit { socket.close() }

        /// Sends `frames` as they are; the first is `envelope` with a fresh request id.
        func send(_ envelope: WireEnvelope, attachments: [[UInt8]] = []) throws -> UInt64 {
            var envelope = envelope
            envelope.requestID = nextID
            nextID += 1
            XCTAssertEqual(try socket.send(frames: [try envelope.serializedBytes()] + attachments), .sent)
            return envelope.requestID
        }

        /// Waits for the response to `id`; events arriving meanwhile are kept.
        func response(to id: UInt64, timeout: Duration = .seconds(5)) throws -> WireEnvelope {
            let deadline = ContinuousClock.now + timeout
            while true {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { throw ShowroomError.deadlineExceeded("no response to request \(id)") }
                guard try socket.poll(.readable, timeout: left).contains(.readable), let frames = try socket.receiveFrames() else { continue }
                let envelope = try WireEnvelope.decode(frame: frames[0])
                if envelope.isResponse, envelope.requestID == id { return envelope }
                // Keyframe requests and frames are not events; this peer does not need them.
                if !envelope.isResponse, let event = try? EdgeCodec.event(from: envelope) { events.append(event) }
            }
        }

        /// Waits for an error event.
        func errorEvent(timeout: Duration = .seconds(5)) throws -> ShowroomError {
            let deadline = ContinuousClock.now + timeout
            while true {
                if let index = events.firstIndex(where: { if case .error = $0 { true } else { false } }),
                   case .error(let error, _, _) = events.remove(at: index) {
                    return error
                }
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { throw ShowroomError.deadlineExceeded("no error event; got \(events)") }
                guard try socket.poll(.readable, timeout: left).contains(.readable), let frames = try socket.receiveFrames() else { continue }
                let envelope = try WireEnvelope.decode(frame: frames[0])
                // Keyframe requests and frames are not events; this peer does not need them.
                if !envelope.isResponse, let event = try? EdgeCodec.event(from: envelope) { events.append(event) }
            }
        }

        /// Sends a decoded request and returns the edge's reply.
        func request(_ request: EdgeRequest, attachments: [[UInt8]] = []) throws -> EdgeReply {
            let id = try send(EdgeCodec.envelope(request: request, id: 1), attachments: attachments)
            return try EdgeCodec.reply(from: response(to: id))
        }

        func open() throws {
            XCTAssertNil(try request(.openSession(clientID: UUID().uuidString, sdkVersion: "test")).failure)
        }

        func join(_ channel: String, uid: UInt32, role: ClientRole = .broadcaster) throws -> EdgeReply {
            try request(.join(channel: channel, uid: uid, token: TestApp.token(channel: channel, uid: uid), role: role,
                              options: .defaults(for: role)))
        }

        /// A media frame: the header as given, `payload` as the attachment.
        func publish(_ header: WireMediaHeader, payload: [UInt8], extra: [[UInt8]] = []) throws {
            var envelope = WireEnvelope()
            envelope.kind = .mediaFrame
            envelope.body = try header.serializedData()
            XCTAssertEqual(try socket.send(frames: [try envelope.serializedBytes(), payload] + extra), .sent)
        }
    }

    /// A valid video header (keyframe, 320×240) for a payload of `size` bytes, as a test varies it.
    static func header(channel: String = "show", uid: UInt32 = 1, track: WireTrackKind = .video, codec: WireCodec = .vp8, size: Int) -> WireMediaHeader {
        var header = WireMediaHeader()
        header.channel = channel
        header.publisherUid = uid
        header.track = track
        header.codec = codec
        header.keyframe = true
        header.width = 320
        header.height = 240
        header.payloadSize = UInt32(size)
        return header
    }

    // MARK: Size

    func testFiveMebibyteMessageIsAnsweredTooLargeAndTheConnectionStays() throws {
        let peer = try Peer(edge.endpoint, context: context)
        let limits = try XCTUnwrap(try peer.request(.openSession(clientID: "limits", sdkVersion: "test")).sessionOpenedLimits)
        XCTAssertEqual(limits.maxMessageBytes, EdgeLimits().maxMessageBytes)

        // A join whose token is 5 MiB: read (under the 4× close limit), refused, dropped.
        let huge = String(repeating: "7", count: 5 << 20)
        let id = try peer.send(EdgeCodec.envelope(
            request: .join(channel: "show", uid: 1, token: huge, role: .audience, options: .defaults(for: .audience)), id: 1))
        let refused = try peer.response(to: id, timeout: .seconds(10))
        XCTAssertEqual(refused.failure?.code, .tooLarge)
        XCTAssertTrue(refused.failure?.message.contains("at most \(EdgeLimits().maxMessageBytes) bytes") == true, "\(refused.failure!)")

        // The same connection (and session) still works.
        XCTAssertNil(try peer.join("show", uid: 1).failure)

        // A 5 MiB one-way media frame gets an error event instead.
        try peer.publish(Self.header(size: 5 << 20), payload: [UInt8](repeating: 0, count: 5 << 20))
        XCTAssertEqual(try peer.errorEvent(timeout: .seconds(10)).code, .tooLarge)
        XCTAssertNil(try peer.request(.heartbeat(clientTime: 1)).failure)
    }

    // MARK: Frames

    func testRequestWithAttachmentsIsMalformedNamingTheCount() throws {
        let peer = try Peer(edge.endpoint, context: context)
        let reply = try peer.request(.openSession(clientID: "x", sdkVersion: "test"), attachments: [[1], [2]])
        XCTAssertEqual(reply.failure?.code, .malformedMessage)
        XCTAssertTrue(reply.failure?.message.contains("got 3 frames") == true, "\(String(describing: reply.failure))")
        // Nothing was opened; the proper request works.
        try peer.open()
    }

    func testMediaFrameWithExtraFramesIsRefused() throws {
        let peer = try Peer(edge.endpoint, context: context)
        try peer.open()
        XCTAssertNil(try peer.join("show", uid: 1).failure)
        try peer.publish(Self.header(size: 3), payload: [1, 2, 3], extra: [[4]])
        let error = try peer.errorEvent()
        XCTAssertEqual(error.code, .malformedMessage)
        XCTAssertTrue(error.message.contains("got 3 frames"), error.message)
    }

    // MARK: Idle connections

    func testConnectionsThatNeverOpenASessionAreClosed() throws {
        let count = 50
        let port = try XCTUnwrap(edge.endpoint.split(separator: ":").last.flatMap { UInt16($0) })
        let started = ContinuousClock.now

        // Raw TCP connections that never speak ZeroMQ.
        let raw = try (0..<count).map { _ in try Self.tcpConnect(port: port) }
        defer { for fd in raw { close(fd) } }
        // ZeroMQ peers that complete the handshake and never send anything.
        let silent = try (0..<count).map { _ -> (Socket, SocketMonitor) in
            let socket = try Socket(.dealer, context: context)
            try socket.set(.reconnectInterval, -1)  // a closed peer stays closed, so it can be counted
            let monitor = try SocketMonitor(watching: socket, events: [.handshakeSucceeded, .disconnected], context: context)
            try socket.connect(edge.endpoint)
            return (socket, monitor)
        }
        defer {
            for (socket, monitor) in silent {
                monitor.stop()
                socket.close()
            }
        }

        // A real session opened meanwhile.
        let client = try RawEdgeClient(endpoint: edge.endpoint, context: context)
        try client.open()
        XCTAssertNil(try client.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)

        let deadline = started + unopenedTimeout + .seconds(4)
        var handshook = Set<Int>()
        var dropped = Set<Int>()
        var closedRaw = Set<Int>()
        while (dropped.count < count || closedRaw.count < count), ContinuousClock.now < deadline {
            for (index, (_, monitor)) in silent.enumerated() {
                while let event = try monitor.nextEvent() {
                    if event.event == .handshakeSucceeded { handshook.insert(index) }
                    if event.event == .disconnected { dropped.insert(index) }
                }
            }
            for (index, fd) in raw.enumerated() where !closedRaw.contains(index) && Self.peerClosed(fd) {
                closedRaw.insert(index)
            }
            try client.drain(for: .milliseconds(20))
        }
        XCTAssertEqual(handshook.count, count, "the silent peers completed the ZeroMQ handshake")
        XCTAssertEqual(dropped.count, count, "silent ZeroMQ peers closed within the timeout and a margin")
        XCTAssertEqual(closedRaw.count, count, "raw TCP connections closed within the timeout and a margin")
        // Not before the timeout: the first closings come after it.
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, unopenedTimeout)

        // The session outlived them all and still works.
        XCTAssertNil(try client.request(.heartbeat(clientTime: 1)).failure)
        XCTAssertNil(try client.join("other", uid: 1, token: TestApp.token(channel: "other", uid: 1), role: .audience).failure)
    }

    func testTooManyUnopenedConnectionsCloseTheOldest() throws {
        edge.shutdown()
        edge = try EdgeServer(
            configuration: EdgeServerConfiguration(
                appID: TestApp.appID, appCertificate: TestApp.certificate,
                unopenedConnectionTimeout: .seconds(60), maxUnopenedConnections: 10),
            logger: LogCapture.logger(label: "edge"))
        let port = try XCTUnwrap(edge.endpoint.split(separator: ":").last.flatMap { UInt16($0) })
        var raw: [Int32] = []
        defer { for fd in raw { close(fd) } }
        for _ in 0..<30 { raw.append(try Self.tcpConnect(port: port)) }

        // Long before the timeout the oldest are closed (20, and one more for the real client,
        // which waits too until it opens its session), and the real client gets in.
        let client = try RawEdgeClient(endpoint: edge.endpoint, context: context)
        try client.open()
        let deadline = ContinuousClock.now + .seconds(5)
        var closed = Set<Int>()
        while closed.count < 21, ContinuousClock.now < deadline {
            for (index, fd) in raw.enumerated() where !closed.contains(index) && Self.peerClosed(fd) { closed.insert(index) }
            try client.drain(for: .milliseconds(20))
        }
        try client.drain(for: .milliseconds(100))
        for (index, fd) in raw.enumerated() where !closed.contains(index) && Self.peerClosed(fd) { closed.insert(index) }
        XCTAssertEqual(closed, Set(0..<21))
        XCTAssertNil(try client.request(.heartbeat(clientTime: 1)).failure)
    }

    // MARK: Sockets

    private static func tcpConnect(port: UInt16) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw ShowroomError.internal("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw ShowroomError.internal("connect: errno \(errno)")
        }
        return fd
    }

    /// True once the other side closed the connection (what it sent before is read and ignored).
    private static func peerClosed(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else { return false }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { return true }
            if n < 0 { return errno != EAGAIN && errno != EINTR }
        }
    }
}

private extension EdgeReply {
    /// The limits of a successful EDGE_OPEN_SESSION reply.
    var sessionOpenedLimits: EdgeLimits? {
        if case .success(.sessionOpened(_, _, _, let limits)) = result { return limits }
        return nil
    }
}
