import CoreMetrics
import Metrics
import Prometheus
import XCTest

@testable import AdminEndpoint

/// The one build identity every test in this process bootstraps with: bootstrap runs once.
let testBuild = BuildInfo(version: "9.8.7-test", role: "admin-test", nodeID: "admin-test-node")

final class MetricsSetupTests: XCTestCase {
    func testMetricNamesGetThePrefixAndOnlyValidCharacters() {
        XCTAssertEqual(MetricsSetup.metricName(forLabel: "rooms_open"), "showroom_rooms_open")
        XCTAssertEqual(MetricsSetup.metricName(forLabel: "edge.rooms-open"), "showroom_edge_rooms_open")
        XCTAssertEqual(MetricsSetup.metricName(forLabel: "showroom.edge.peers"), "showroom_edge_peers")
        XCTAssertEqual(MetricsSetup.metricName(forLabel: "showroom_x"), "showroom_x")
        XCTAssertEqual(MetricsSetup.metricName(forLabel: "2xx responses"), "showroom_2xx_responses")
        XCTAssertEqual(MetricsSetup.metricName(forLabel: "ns:name"), "showroom_ns:name")
    }

    func testBootstrapIsIdempotentAndFeedsSwiftMetrics() {
        let first = MetricsSetup.bootstrap(build: testBuild)
        let second = MetricsSetup.bootstrap(build: BuildInfo(version: "other", role: "other", nodeID: "other"))
        XCTAssertTrue(first === second)
        XCTAssertTrue(MetricsSetup.bootstrapped === first)
        XCTAssertEqual(second.build, testBuild, "the first bootstrap wins")
        XCTAssertTrue(MetricsSystem.factory is PrometheusMetricsFactory)

        Counter(label: "setup_test.events").increment(by: 2)
        let text = String(decoding: first.exposition(), as: UTF8.self)
        XCTAssertTrue(text.contains("\nshowroom_setup_test_events 2\n"), text)
        XCTAssertFalse(text.contains("other"), "a later bootstrap adds no second build_info")
    }

    func testBuildInfoAndProcessMetricsAreExported() throws {
        let setup = MetricsSetup(build: BuildInfo(version: "1.2.3", role: "edge", nodeID: "edge-\"q\""))
        let text = String(decoding: setup.exposition(), as: UTF8.self)
        XCTAssertTrue(text.contains("# TYPE showroom_build_info gauge"), text)
        XCTAssertTrue(
            text.contains(#"showroom_build_info{version="1.2.3",role="edge",node="edge-\"q\""} 1.0"#), text)
        let samples = Self.samples(text)
        XCTAssertGreaterThan(try XCTUnwrap(samples["showroom_process_uptime_seconds"]), 0)
        XCTAssertNotNil(samples["showroom_process_cpu_seconds_total"])
        #if os(Linux)
        XCTAssertGreaterThan(try XCTUnwrap(samples["showroom_process_resident_memory_bytes"]), 1_048_576)
        XCTAssertGreaterThan(try XCTUnwrap(samples["showroom_process_virtual_memory_bytes"]), 1_048_576)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(samples["showroom_process_threads"]), 1)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(samples["showroom_process_open_fds"]), 3)
        XCTAssertTrue(text.contains("# TYPE showroom_process_cpu_seconds_total counter"), text)
        #endif
    }

    func testCPUCounterNeverGoesDown() throws {
        let setup = MetricsSetup(build: testBuild)
        var previous = -1.0
        for _ in 0..<3 {
            // Burn a little CPU so the tick counter can move.
            var x = 0.0
            for i in 0..<2_000_000 { x += Double(i).squareRoot() }
            XCTAssertGreaterThan(x, 0)
            let value = try XCTUnwrap(Self.samples(String(decoding: setup.exposition(), as: UTF8.self))["showroom_process_cpu_seconds_total"])
            XCTAssertGreaterThanOrEqual(value, previous)
            previous = value
        }
        XCTAssertGreaterThan(previous, 0)
    }

    /// Unlabelled samples of an exposition, by name.
    static func samples(_ text: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, !parts[0].contains("{"), let value = Double(parts[1]) {
                result[String(parts[0])] = value
            }
        }
        return result
    }
}

final class ProcFSTests: XCTestCase {
    func testStatIsParsedFromAfterTheCommandName() throws {
        // A command name with spaces and parentheses must not shift the fields.
        let line = "4242 (my (odd) node) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 75 0 0 20 0 7 0 123456 1000000 2500 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n"
        let stat = try XCTUnwrap(ProcFS.parseStat(line))
        XCTAssertEqual(stat, ProcFS.Stat(cpuTicks: 325, threads: 7, startTicks: 123456))
    }

    func testMalformedInputGivesNil() {
        XCTAssertNil(ProcFS.parseStat(""))
        XCTAssertNil(ProcFS.parseStat("1 (x) S 1 2"))
        XCTAssertNil(ProcFS.parseStatm("garbage"))
        XCTAssertNil(ProcFS.parseUptime(""))
        XCTAssertNil(ProcFS.readFile("/nonexistent/\(UUID().uuidString)"))
    }

    func testStatmAndUptime() throws {
        let statm = try XCTUnwrap(ProcFS.parseStatm("52000 3100 900 10 0 4000 0\n"))
        XCTAssertEqual(statm.sizePages, 52000)
        XCTAssertEqual(statm.residentPages, 3100)
        XCTAssertEqual(ProcFS.parseUptime("12345.67 23456.78\n"), 12345.67)
    }

    #if os(Linux)
    func testThisProcessCanBeRead() throws {
        XCTAssertNotNil(ProcFS.parseStat(try XCTUnwrap(ProcFS.readFile("/proc/self/stat"))))
        XCTAssertNotNil(ProcFS.parseStatm(try XCTUnwrap(ProcFS.readFile("/proc/self/statm"))))
    }
    #endif
}
