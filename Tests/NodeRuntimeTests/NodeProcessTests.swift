import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import NodeRuntime
import ShowroomTesting
import Routing
import ShowroomWire
import XCTest
import ZeroMQ

/// The three server executables as real processes: they start, answer, refuse bad input clearly,
/// and exit cleanly on SIGTERM and SIGINT.
final class NodeProcessTests: XCTestCase {
    private let context = try! Context()

    func testEveryRoleStartsAnswersAndStopsCleanlyOnSIGTERM() throws {
        let nodes = try NodeRole.allCases.map { role in try NodeProcess(role, nodeID: "\(role)-under-test") }
        for (role, node) in zip(NodeRole.allCases, nodes) {
            let client = try NodeClient(endpoint: node.endpoint, context: context)
            let info = try client.request(.nodeInfo, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self)
            XCTAssertEqual(info.nodeID, "\(role)-under-test")
            XCTAssertEqual(NodeRole(wire: info.role), role)
            XCTAssertEqual(info.version, ShowroomVersion.current)
            XCTAssertEqual(info.clusterEndpoint, node.endpoint)
            XCTAssertEqual(Int32(info.pid), node.process.pid)
            XCTAssertTrue(node.process.stderrLines.contains { $0.contains("node=\(role)-under-test") },
                          "logs carry the node id")
            // The admin port serves Prometheus metrics labelled with the node.
            let ready = try XCTUnwrap(node.process.stdoutLines.first { $0.hasPrefix("ready ") })
            let admin = try XCTUnwrap(NodeProcess.fields(of: ready)["admin"])
            let metrics = try httpGet("\(admin)/metrics")
            XCTAssertTrue(metrics.contains("showroom_build_info{"), metrics)
            XCTAssertTrue(metrics.contains("node=\"\(role)-under-test\""), metrics)
            XCTAssertTrue(try httpGet("\(admin)/status").contains("\(role)-under-test"))
        }
        for node in nodes { node.process.kill(signal: SIGTERM) }
        for node in nodes {
            XCTAssertEqual(node.process.waitForExit(timeout: .seconds(10)), 0, "\(node.nodeID) exit status after SIGTERM")
        }
    }

    func testSIGINTStopsCleanly() throws {
        let node = try NodeProcess(.edge, nodeID: "edge-sigint")
        node.process.kill(signal: SIGINT)
        XCTAssertEqual(node.process.waitForExit(timeout: .seconds(10)), 0)
        XCTAssertTrue(node.process.stderrLines.contains { $0.contains("node stopped") })
    }

    func testMalformedUnknownAndNewerMessagesGetClearErrors() throws {
        let node = try NodeProcess(.coordinator, nodeID: "coordinator-bad-input")
        defer { node.process.kill(signal: SIGKILL) }
        let client = try NodeClient(endpoint: node.endpoint, context: context)

        let garbage = try client.exchange([[0xFF, 0xFF, 0xFF, 0x01]], requestID: 0, timeout: .seconds(5))
        XCTAssertEqual(garbage.failure?.code, .malformedMessage)
        XCTAssertFalse(garbage.failure?.message.isEmpty ?? true)

        XCTAssertThrowsError(try client.request(.mediaFrame, body: WireMediaHeader(), expecting: WireNodeInfo.self)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .unknownKind)
        }

        var newer = try WireEnvelope(request: .nodeInfo, id: 77, body: WireNodeInfoRequest())
        newer.protocolVersion = WireEnvelope.currentProtocolVersion + 1
        let answer = try client.exchange([try newer.serializedBytes()], requestID: 77, timeout: .seconds(5))
        XCTAssertEqual(answer.failure?.code, .unsupportedVersion)

        // Bad input lost nothing: the node still answers a proper request.
        let info = try client.request(.nodeInfo, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self)
        XCTAssertEqual(info.nodeID, "coordinator-bad-input")
    }

    func testConfigurationFileIsReadAndFlagsWin() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("showroom-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("callsignal.json")
        try Data(#"{"nodeID": "from-file", "logLevel": "debug", "bind": "tcp://127.0.0.1:*"}"#.utf8).write(to: file)

        let fromFile = try ManagedProcess("showroom-callsignal", ["--config", file.path])
        defer { fromFile.kill(signal: SIGKILL) }
        XCTAssertTrue(try fromFile.waitForLine { $0.hasPrefix("ready ") }.contains("node=from-file"))
        XCTAssertTrue(fromFile.stderrLines.contains { $0.contains("debug") }, "log level from the file")

        let overridden = try ManagedProcess("showroom-callsignal", ["--config", file.path, "--node-id", "from-flag"])
        defer { overridden.kill(signal: SIGKILL) }
        XCTAssertTrue(try overridden.waitForLine { $0.hasPrefix("ready ") }.contains("node=from-flag"))
    }

    func testBadConfigurationIsRefusedWithAClearMessage() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("showroom-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("typo.json")
        try Data(#"{"nodeId": "typo"}"#.utf8).write(to: file)

        let typo = try ManagedProcess("showroom-edge", ["--config", file.path])
        XCTAssertEqual(typo.waitForExit(), 2)
        XCTAssertTrue(typo.stderrLines.joined().contains("unknown key 'nodeId'"), "\(typo.stderrLines)")

        let badBind = try ManagedProcess("showroom-edge", ["--bind", "udp://127.0.0.1:1"])
        XCTAssertEqual(badBind.waitForExit(), 2)
        XCTAssertTrue(badBind.stderrLines.joined().contains("must start with tcp://"), "\(badBind.stderrLines)")
    }
}

/// The body of a GET, waiting at most 5 s.
func httpGet(_ url: String) throws -> String {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<String, any Error>?>(nil)
    URLSession.shared.dataTask(with: URL(string: url)!) { data, _, error in
        result.withLock { $0 = error.map { .failure($0) } ?? .success(String(decoding: data ?? Data(), as: UTF8.self)) }
        done.signal()
    }.resume()
    guard done.wait(timeout: .now() + 5) == .success else { throw ShowroomTestingError("GET \(url) timed out") }
    return try result.withLock { $0! }.get()
}
