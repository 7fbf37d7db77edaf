import Foundation
import Logging
import XCTest

@testable import AdminEndpoint

/// Hostile clients against a real admin port on loopback: oversized, partial, trickled and idle
/// requests, each refused or disconnected, while the health check keeps answering.
final class AdminServerLimitsTests: XCTestCase {
    private let logger = Logger(label: "admin-limits-test") { _ in SwiftLogNoOpLogHandler() }
    private var servers: [AdminServer] = []

    override func tearDown() async throws {
        for server in servers { await server.stop() }
        servers = []
    }

    private func startServer(limits: AdminServer.Limits = .init()) async throws -> UInt16 {
        let server = AdminServer(
            configuration: .init(limits: limits), metrics: MetricsSetup.bootstrap(build: testBuild), logger: logger)
        servers.append(server)
        try await server.start()
        return try XCTUnwrap(server.port)
    }

    private static let mebibyte = 1 << 20

    /// Sends `request` on a new connection and reads until the server closes it.
    private static func exchange(port: UInt16, _ request: [UInt8], within seconds: Int = 5)
        -> (text: String, closed: Bool, took: Duration)
    {
        let started = ContinuousClock.now
        let deadline = started + .seconds(seconds)
        guard let connection = RawConnection(port: port) else { return ("", false, .zero) }
        connection.send(request, deadline: deadline)
        let (text, closed) = connection.readUntilClosed(deadline: deadline)
        return (text, closed, started.duration(to: .now))
    }

    private static func healthz(port: UInt16) -> (status: Int?, took: Duration) {
        let result = exchange(port: port, Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        return (statusCode(of: result.text), result.took)
    }

    private static func bigHeaderRequest() -> [UInt8] {
        Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: mebibyte)
            + Array("\r\n\r\n".utf8)
    }

    func testMebibyteHeadersAre431AtOnceWhileHealthzKeepsAnswering() async throws {
        let port = try await startServer()
        let attacks = 4
        let request = Self.bigHeaderRequest()
        async let refused: [(text: String, closed: Bool, took: Duration)] = withTaskGroup(
            of: (text: String, closed: Bool, took: Duration).self
        ) { group in
            for _ in 0..<attacks {
                group.addTask { await onThread { Self.exchange(port: port, request) } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Health checks while the attacks are in flight, one after another.
        var checks: [(status: Int?, took: Duration)] = []
        for _ in 0..<5 {
            checks.append(await onThread { Self.healthz(port: port) })
        }
        for result in await refused {
            XCTAssertTrue(result.closed, "the oversized request's connection is closed")
            let status = statusCode(of: result.text)
            XCTAssertTrue(status == 431 || status == nil, "431 or a closed connection, got: \(result.text.prefix(200))")
            XCTAssertLessThan(result.took, .seconds(2), "a 1 MiB header must be refused at once")
        }
        for check in checks {
            XCTAssertEqual(check.status, 200)
            XCTAssertLessThan(check.took, .seconds(1), "/healthz stalled during the attack")
        }
        // Seen whole once, unhurried: the refusal is the 431 with its explanation.
        let one = await onThread { Self.exchange(port: port, request) }
        if let status = statusCode(of: one.text) {
            XCTAssertEqual(status, 431)
            XCTAssertTrue(one.text.contains("larger than 16384 bytes"), one.text)
        }
    }

    func testAMebibytePathIs414() async throws {
        let port = try await startServer()
        let request = Array("GET /".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: Self.mebibyte)
            + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let result = await onThread { Self.exchange(port: port, request) }
        XCTAssertTrue(result.closed)
        XCTAssertEqual(statusCode(of: result.text), 414, String(result.text.prefix(300)))
        XCTAssertTrue(result.text.contains("longer than 4096 bytes"), String(result.text.prefix(300)))
        XCTAssertLessThan(result.took, .seconds(2))

        let fine = await onThread { Self.healthz(port: port) }
        XCTAssertEqual(fine.status, 200, "the server serves on")
    }

    func testABodyIs413() async throws {
        let port = try await startServer()
        for head in [
            "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: \(Self.mebibyte)\r\n\r\n",
            "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            let result = await onThread { Self.exchange(port: port, Array(head.utf8)) }
            XCTAssertTrue(result.closed, head)
            XCTAssertEqual(statusCode(of: result.text), 413, result.text)
            XCTAssertTrue(result.text.contains("take no request body"), result.text)
        }
        // A GET with an empty body is still fine.
        let empty = await onThread {
            Self.exchange(port: port, Array("GET /healthz HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        }
        XCTAssertEqual(statusCode(of: empty.text), 200, empty.text)
    }

    func testAPartialRequestIsClosedWithinTheRequestTimeout() async throws {
        let port = try await startServer(limits: .init(requestTimeout: 0.5, idleTimeout: 30))
        let result = await onThread { () -> (text: String, closed: Bool, took: Duration) in
            let started = ContinuousClock.now
            guard let connection = RawConnection(port: port) else { return ("", false, .zero) }
            connection.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n".utf8), deadline: started + .seconds(1))
            let (text, closed) = connection.readUntilClosed(deadline: started + .seconds(10))
            return (text, closed, started.duration(to: .now))
        }
        XCTAssertTrue(result.closed, "a half request is held open")
        XCTAssertEqual(statusCode(of: result.text), 408, result.text)
        XCTAssertGreaterThanOrEqual(result.took, .milliseconds(400), "closed before the request timeout")
        XCTAssertLessThan(result.took, .seconds(3))
    }

    func testATrickledRequestIsClosedEvenThoughBytesKeepComing() async throws {
        let port = try await startServer(limits: .init(requestTimeout: 0.5, idleTimeout: 30))
        let result = await onThread { () -> (closed: Bool, sent: Int, took: Duration) in
            let started = ContinuousClock.now
            guard let connection = RawConnection(port: port) else { return (false, 0, .zero) }
            var sent = 0
            let header = Array("GET /healthz HTTP/1.1\r\nX-Slow: ".utf8) + [UInt8](repeating: UInt8(ascii: "s"), count: 200)
            // One byte every 50 ms: never idle, never complete.
            for byte in header {
                guard connection.send([byte], deadline: .now + .seconds(1)) else { break }
                sent += 1
                let (_, closed) = connection.readUntilClosed(deadline: .now + .milliseconds(50))
                if closed { return (true, sent, started.duration(to: .now)) }
            }
            return (connection.isClosed(by: .now + .seconds(1)), sent, started.duration(to: .now))
        }
        XCTAssertTrue(result.closed, "a trickled request is held open")
        XCTAssertLessThan(result.sent, 100, "closed only after \(result.sent) bytes")
        XCTAssertLessThan(result.took, .seconds(3))
    }

    func testIdleConnectionsAreClosed() async throws {
        let port = try await startServer(limits: .init(requestTimeout: 5, idleTimeout: 0.5))
        let result = await onThread { () -> (status: Int?, keptAlive: Bool, closedAfterIdle: Bool, silentClosed: Bool) in
            guard let connection = RawConnection(port: port), let silent = RawConnection(port: port) else {
                return (nil, false, false, false)
            }
            connection.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), deadline: .now + .seconds(2))
            // The response, on a connection kept alive: not closed within 200 ms of it.
            let (text, closedEarly) = connection.readUntilClosed(deadline: .now + .milliseconds(200))
            let closedAfterIdle = connection.isClosed(by: .now + .seconds(3))
            let silentClosed = silent.isClosed(by: .now + .seconds(3))
            return (statusCode(of: text), !closedEarly, closedAfterIdle, silentClosed)
        }
        XCTAssertEqual(result.status, 200)
        XCTAssertTrue(result.keptAlive, "the connection is kept alive after a response")
        XCTAssertTrue(result.closedAfterIdle, "an idle keep-alive connection stays open")
        XCTAssertTrue(result.silentClosed, "a connection that never sends stays open")
    }

    func testConnectionsBeyondTheCapWaitForAFreeOne() async throws {
        let port = try await startServer(limits: .init(idleTimeout: 30, maxConnections: 1))
        let result = await onThread { () -> (waited: Bool, served: Int?) in
            var holder = RawConnection(port: port)
            holder?.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), deadline: .now + .seconds(2))
            _ = holder?.readUntilClosed(deadline: .now + .milliseconds(300))  // answered; kept alive
            guard holder != nil, let second = RawConnection(port: port) else { return (false, nil) }
            second.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), deadline: .now + .seconds(2))
            let (early, _) = second.readUntilClosed(deadline: .now + .milliseconds(500))
            holder = nil  // closing the first connection lets the second in
            let (late, _) = second.readUntilClosed(deadline: .now + .seconds(3))
            return (early.isEmpty, statusCode(of: late))
        }
        XCTAssertTrue(result.waited, "the second connection was served while the first held the only slot")
        XCTAssertEqual(result.served, 200)
    }
}
