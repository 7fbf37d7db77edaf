import Foundation
import LocalCluster
import NodeRuntime
import ShowroomAuth
import ShowroomKit
import ShowroomWire
import SwiftProtobuf
import Synchronization
import XCTest
import ZeroMQ

/// A cluster of real processes started through `deploy/cluster.sh` on free ports, for one test
/// class; stopped (and every process killed by pid) in tearDown.
final class TestCluster: @unchecked Sendable {  // used by one test at a time
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let launcher: Launcher

    init(coordinators: Int, edges: Int, extra: [String] = []) throws {
        launcher = try Launcher(packageRoot: Self.packageRoot)
        try launcher.run("up", ["--edges", "\(edges)", "--coordinators", "\(coordinators)", "--callsignals", "0",
                                "--base-port", "0"] + extra)
    }

    /// Member `id`'s client endpoint: the SDK's seed, and where client kinds go. Requests of
    /// internal kinds sent through ``request(_:_:to:expecting:timeout:)`` to it go to the member's
    /// cluster endpoint instead, with the operator's keys (the cluster runs with a keyring).
    func endpoint(_ id: String) throws -> String {
        let client = try launcher.clientEndpoint(of: id)
        let cluster = try launcher.endpoint(of: id)
        let credentials = launcher.credentials
        Self.clusterFaces.withLock { $0[client] = (cluster, credentials) }
        return client
    }

    /// Client endpoint -> the member's cluster endpoint and the keys to speak there.
    static let clusterFaces = Mutex<[String: (endpoint: String, credentials: ClusterCredentials?)]>([:])

    /// Where a request of `kind` for the member at `endpoint` goes, with which keys.
    static func route(_ kind: WireMessageKind, to endpoint: String) -> (endpoint: String, credentials: ClusterCredentials?) {
        guard !kind.isClientKind, let face = clusterFaces.withLock({ $0[endpoint] }) else { return (endpoint, nil) }
        return face
    }

    func down() { try? launcher.down() }

    /// A token of the demo app the launcher gives every process.
    static func token(channel: String, uid: UInt32, role: RTCRole = .publisher) throws -> String {
        try RTCTokenBuilder.buildToken(appID: DemoApp.appID, appCertificate: DemoApp.appCertificate,
                                       channelName: channel, uid: uid, role: role, tokenExpire: 600)
    }
}

/// Blocking requests to one member's cluster endpoint, run on a thread of their own (a
/// ``NodeClient`` owns a ZeroMQ socket and may not be used from Swift's cooperative pool).
func request<Response: SwiftProtobuf.Message & Sendable>(
    _ kind: WireMessageKind, _ body: some SwiftProtobuf.Message & Sendable, to endpoint: String, expecting: Response.Type,
    timeout: Duration = .seconds(3)
) async throws -> Response {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result {
                let context = try Context()
                defer { context.shutdown() }
                let route = TestCluster.route(kind, to: endpoint)
                let client = try NodeClient(endpoint: route.endpoint, context: context, credentials: route.credentials)
                return try client.request(kind, body: body, expecting: Response.self, timeout: timeout)
            })
        }.start()
    }
}

/// Sends raw frames and returns the answer envelope, on a thread of its own.
func exchange(_ frames: [[UInt8]], to endpoint: String, requestID: UInt64) async throws -> WireEnvelope {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result {
                let context = try Context()
                defer { context.shutdown() }
                return try NodeClient(endpoint: endpoint, context: context)
                    .exchange(frames, requestID: requestID, timeout: .seconds(3))
            })
        }.start()
    }
}

/// Asserts that `body` fails with `code`.
func assertFails<T>(_ code: WireErrorCode, _ what: String, file: StaticString = #filePath, line: UInt = #line,
                    _ body: () async throws -> T) async {
    do {
        _ = try await body()
        XCTFail("\(what): expected \(code), got success", file: file, line: line)
    } catch let error as ShowroomError {
        XCTAssertEqual(error.code, code, "\(what): \(error)", file: file, line: line)
        XCTAssertFalse(error.message.isEmpty, file: file, line: line)
    } catch {
        XCTFail("\(what): expected \(code), got \(error)", file: file, line: line)
    }
}

