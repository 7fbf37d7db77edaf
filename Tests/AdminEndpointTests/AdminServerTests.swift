import Foundation
import Logging
import Metrics
import Synchronization
import XCTest

@testable import AdminEndpoint

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class AdminServerTests: XCTestCase {
    private let client = TestHTTPClient()
    private let logger = Logger(label: "admin-test") { _ in SwiftLogNoOpLogHandler() }
    private var servers: [AdminServer] = []

    override func tearDown() async throws {
        for server in servers { await server.stop() }
        servers = []
    }

    /// A started server on an ephemeral loopback port, stopped in tearDown.
    private func startServer(
        metrics: MetricsSetup = MetricsSetup.bootstrap(build: testBuild),
        port: UInt16 = 0,
        status: @escaping AdminServer.StatusProvider = { Data("{}".utf8) }
    ) async throws -> (AdminServer, String) {
        let server = AdminServer(
            configuration: .init(host: "127.0.0.1", port: port), metrics: metrics, logger: logger, status: status)
        servers.append(server)
        let endpoint = try await server.start()
        return (server, endpoint)
    }

    func testStartReportsTheBoundEndpoint() async throws {
        let (server, endpoint) = try await startServer()
        let port = try XCTUnwrap(server.port)
        XCTAssertNotEqual(port, 0)
        XCTAssertEqual(endpoint, "http://127.0.0.1:\(port)")
        XCTAssertEqual(server.endpoint, endpoint)
        XCTAssertTrue(TestSocket.isListening(port: port))
    }

    func testSwiftMetricsAppearInMetricsWithTheirValues() async throws {
        let (_, endpoint) = try await startServer()
        let requests = Counter(label: "admin_test.requests", dimensions: [("path", "/join")])
        requests.increment(by: 3)
        Gauge(label: "admin_test.rooms_open").record(7)
        Metrics.Timer(label: "admin_test.join_seconds").recordMilliseconds(20)
        Recorder(label: "admin_test.payload_bytes").record(300)
        Meter(label: "admin_test.peers").set(4)

        let first = try await client.request("\(endpoint)/metrics")
        XCTAssertEqual(first.status, 200)
        XCTAssertTrue(first.contentType?.hasPrefix("text/plain; version=0.0.4") == true, "\(first.contentType ?? "none")")
        let text = first.body
        for expected in [
            "# TYPE showroom_admin_test_requests counter",
            #"showroom_admin_test_requests{path="/join"} 3"#,
            "# TYPE showroom_admin_test_rooms_open gauge",
            "showroom_admin_test_rooms_open 7.0",
            "# TYPE showroom_admin_test_join_seconds histogram",
            #"showroom_admin_test_join_seconds_bucket{le="0.025"} 1"#,
            #"showroom_admin_test_join_seconds_bucket{le="0.01"} 0"#,
            "showroom_admin_test_join_seconds_sum 0.02",
            "showroom_admin_test_join_seconds_count 1",
            "# TYPE showroom_admin_test_payload_bytes histogram",
            "showroom_admin_test_payload_bytes_sum 300.0",
            "showroom_admin_test_payload_bytes_count 1",
            "showroom_admin_test_peers 4.0",
            #"showroom_build_info{version="9.8.7-test",role="admin-test",node="admin-test-node"} 1.0"#,
            "# TYPE showroom_process_uptime_seconds gauge",
            "# TYPE showroom_process_cpu_seconds_total counter",
        ] {
            XCTAssertTrue(text.contains(expected), "missing \(expected) in:\n\(text)")
        }

        requests.increment()
        let second = try await client.request("\(endpoint)/metrics")
        XCTAssertTrue(second.body.contains(#"showroom_admin_test_requests{path="/join"} 4"#), second.body)
    }

    func testHealthzIsOkUntilDraining() async throws {
        let (server, endpoint) = try await startServer()
        let ok = try await client.request("\(endpoint)/healthz")
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.body, "ok")
        XCTAssertFalse(server.isDraining)

        server.setDraining()
        XCTAssertTrue(server.isDraining)
        let draining = try await client.request("\(endpoint)/healthz")
        XCTAssertEqual(draining.status, 503)
        XCTAssertEqual(draining.body, "draining")
        let metrics = try await client.request("\(endpoint)/metrics")
        XCTAssertEqual(metrics.status, 200, "other paths keep working while draining")

        server.setDraining(false)
        let again = try await client.request("\(endpoint)/healthz")
        XCTAssertEqual(again.status, 200)
    }

    func testReadyzIsStartingUntilReadyAndDrainingAfter() async throws {
        let (server, endpoint) = try await startServer()
        let starting = try await client.request("\(endpoint)/readyz")
        XCTAssertEqual(starting.status, 503)
        XCTAssertEqual(starting.body, "starting")
        let health = try await client.request("\(endpoint)/healthz")
        XCTAssertEqual(health.status, 200, "alive while not yet ready")

        server.setReady()
        XCTAssertTrue(server.isReady)
        let ready = try await client.request("\(endpoint)/readyz")
        XCTAssertEqual(ready.status, 200)
        XCTAssertEqual(ready.body, "ready")

        server.setDraining()
        let draining = try await client.request("\(endpoint)/readyz")
        XCTAssertEqual(draining.status, 503)
        XCTAssertEqual(draining.body, "draining")
    }

    func testStatusServesTheProvidersJSON() async throws {
        let calls = Calls()
        let (_, endpoint) = try await startServer(status: {
            let n = calls.next()
            return Data(#"{"members":["edge-1","coordinator-1"],"call":\#(n)}"#.utf8)
        })
        let first = try await client.request("\(endpoint)/status")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.contentType, "application/json")
        XCTAssertEqual(first.body, #"{"members":["edge-1","coordinator-1"],"call":1}"#)
        let second = try await client.request("\(endpoint)/status")
        XCTAssertEqual(second.body, #"{"members":["edge-1","coordinator-1"],"call":2}"#, "asked again on each request")
    }

    func testJSONStatusHelperAndAFailingProvider() async throws {
        struct View: Encodable, Sendable { var node = "edge-1"; var alive = 3; var url = "tcp://h:1/x" }
        let (_, endpoint) = try await startServer(status: AdminServer.jsonStatus { View() })
        let ok = try await client.request("\(endpoint)/status")
        XCTAssertEqual(ok.body, #"{"alive":3,"node":"edge-1","url":"tcp://h:1/x"}"#)

        struct Unavailable: Error, CustomStringConvertible { var description: String { "membership not ready" } }
        let (_, failing) = try await startServer(status: { throw Unavailable() })
        let error = try await client.request("\(failing)/status")
        XCTAssertEqual(error.status, 500)
        XCTAssertTrue(error.body.contains("membership not ready"), error.body)
    }

    func testUnknownPathIs404NamingTheValidPaths() async throws {
        let (_, endpoint) = try await startServer()
        for path in ["/", "/nope", "/metrics/extra"] {
            let response = try await client.request("\(endpoint)\(path)")
            XCTAssertEqual(response.status, 404, path)
            XCTAssertEqual(response.contentType, "text/plain; charset=utf-8")
            XCTAssertTrue(response.body.contains("/metrics, /healthz, /readyz, /status"), response.body)
        }
        let post = try await client.request("\(endpoint)/metrics", method: "POST")
        XCTAssertEqual(post.status, 405)
        let query = try await client.request("\(endpoint)/healthz?verbose=1")
        XCTAssertEqual(query.status, 200, "the query is not part of the path")
    }

    func testAStatusProviderThatHangsIsAnswered503() async throws {
        let server = AdminServer(
            configuration: .init(limits: .init(statusTimeout: 0.3)), metrics: MetricsSetup.bootstrap(build: testBuild),
            logger: logger, status: {
                try await Task.sleep(for: .seconds(60))
                return Data("{}".utf8)
            })
        servers.append(server)
        let endpoint = try await server.start()
        let response = try await client.request("\(endpoint)/status")
        XCTAssertEqual(response.status, 503)
        XCTAssertTrue(response.body.contains("no answer within 0.3 s"), response.body)
    }

    func testStopIsPromptAndReleasesThePort() async throws {
        let (server, endpoint) = try await startServer()
        let port = try XCTUnwrap(server.port)
        _ = try await client.request("\(endpoint)/healthz")  // leaves a keep-alive connection open
        let idle = try XCTUnwrap(TestSocket.openConnection(port: port), "an idle client that never sends")
        defer { close(idle) }

        let clock = ContinuousClock()
        let took = await clock.measure { await server.stop() }
        XCTAssertLessThan(took, .seconds(2), "stop must not wait for idle clients")
        XCTAssertNil(server.endpoint)
        XCTAssertFalse(TestSocket.isListening(port: port), "port still accepts connections after stop")
        await server.stop()  // twice is fine

        // The port is free again: a new server binds it.
        let (again, againEndpoint) = try await startServer(port: port)
        XCTAssertEqual(againEndpoint, endpoint)
        let health = try await client.request("\(againEndpoint)/healthz")
        XCTAssertEqual(health.status, 200)
        await again.stop()
    }

    func testTwoServersSideBySide() async throws {
        let other = MetricsSetup(build: BuildInfo(version: "1", role: "second", nodeID: "second-node"))
        let (first, firstEndpoint) = try await startServer()
        let (second, secondEndpoint) = try await startServer(metrics: other)
        XCTAssertNotEqual(first.port, second.port)
        Counter(label: "admin_test.side_by_side").increment()

        let client = self.client
        async let a = client.request("\(firstEndpoint)/metrics")
        async let b = client.request("\(secondEndpoint)/metrics")
        let (firstMetrics, secondMetrics) = try await (a, b)
        XCTAssertTrue(firstMetrics.body.contains("showroom_admin_test_side_by_side 1"), firstMetrics.body)
        XCTAssertFalse(secondMetrics.body.contains("side_by_side"), "the second has its own registry")
        XCTAssertTrue(secondMetrics.body.contains(#"role="second""#), secondMetrics.body)

        second.setDraining()
        let firstHealth = try await client.request("\(firstEndpoint)/healthz")
        let secondHealth = try await client.request("\(secondEndpoint)/healthz")
        XCTAssertEqual(firstHealth.status, 200)
        XCTAssertEqual(secondHealth.status, 503)

        await first.stop()
        let stillServing = try await client.request("\(secondEndpoint)/healthz")
        XCTAssertEqual(stillServing.status, 503, "stopping one leaves the other running")
    }

    func testStartFailsPromptlyWhenThePortIsTaken() async throws {
        let (first, _) = try await startServer()
        let port = try XCTUnwrap(first.port)
        let clash = AdminServer(
            configuration: .init(port: port, startTimeout: 30), metrics: MetricsSetup.bootstrap(build: testBuild),
            logger: logger)
        servers.append(clash)
        let clock = ContinuousClock()
        let started = clock.now
        do {
            try await clash.start()
            XCTFail("a second server bound a port in use")
        } catch {
            guard case .cannotListen(let address, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(address, "127.0.0.1:\(port)")
            XCTAssertTrue(reason.contains("in use"), reason)
        }
        XCTAssertLessThan(started.duration(to: clock.now), .seconds(5), "a bind failure must not wait out the start timeout")
        XCTAssertNil(clash.endpoint)
        do {
            try await clash.start()
            XCTFail("restarted")
        } catch {
            XCTAssertEqual(error, .alreadyStarted)
        }
    }

    func testInvalidHostIsRefused() async {
        let server = AdminServer(
            configuration: .init(host: "example.invalid"), metrics: MetricsSetup.bootstrap(build: testBuild), logger: logger)
        do {
            try await server.start()
            XCTFail("started")
        } catch {
            guard case .invalidAddress = error else { return XCTFail("\(error)") }
        }
    }

    func testRunReturnsWhenStoppedOrCancelled() async throws {
        let (stopped, _) = try await startServer()
        let stoppedPort = try XCTUnwrap(stopped.port)
        let running = Task { try await stopped.run() }
        await stopped.stop()
        try await running.value
        XCTAssertFalse(TestSocket.isListening(port: stoppedPort))

        let (cancelled, _) = try await startServer()
        let cancelledPort = try XCTUnwrap(cancelled.port)
        let cancelledRun = Task { try await cancelled.run() }
        cancelledRun.cancel()
        try await cancelledRun.value
        XCTAssertNil(cancelled.endpoint)
        XCTAssertFalse(TestSocket.isListening(port: cancelledPort))
    }

    func testConfigurationParsesListenAddresses() throws {
        XCTAssertEqual(try AdminServer.Configuration(listen: "0.0.0.0:9100"), .init(host: "0.0.0.0", port: 9100))
        XCTAssertEqual(try AdminServer.Configuration(listen: ":9100"), .init(host: "127.0.0.1", port: 9100))
        XCTAssertEqual(try AdminServer.Configuration(listen: "[::1]:0"), .init(host: "::1", port: 0))
        XCTAssertThrowsError(try AdminServer.Configuration(listen: "9100"))
        XCTAssertThrowsError(try AdminServer.Configuration(listen: "host:99999"))
    }

    func testWildcardHostReportsALoopbackEndpoint() {
        XCTAssertEqual(AdminServer.endpoint(ipAddress: "0.0.0.0", port: 9100), "http://127.0.0.1:9100")
        XCTAssertEqual(AdminServer.endpoint(ipAddress: "::", port: 9100), "http://[::1]:9100")
        XCTAssertEqual(AdminServer.endpoint(ipAddress: "::1", port: 9100), "http://[::1]:9100")
        XCTAssertEqual(AdminServer.endpoint(ipAddress: "10.1.2.3", port: 80), "http://10.1.2.3:80")
    }
}

/// Counts calls from any thread.
private final class Calls: Sendable {
    private let count = Mutex<Int>(0)
    func next() -> Int { count.withLock { $0 += 1; return $0 } }
}
