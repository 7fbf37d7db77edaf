import Foundation
import NodeRuntime
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import SwiftProtobuf
import Synchronization
import XCTest
import ZeroMQ

extension TestCluster {
    /// Member `id`'s client endpoint: the SDK's seed, and where client kinds go. Requests of
    /// internal kinds sent through ``request(_:_:to:expecting:timeout:)`` to it go to the member's
    /// cluster endpoint instead, with the operator's keys (the cluster runs with a keyring).
    func endpoint(_ id: String) throws -> String {
        let client = try clientEndpoint(of: id)
        let face = (endpoint: try endpoint(of: id), credentials: credentials)
        clusterFaces.withLock { $0[client] = face }
        return client
    }

    /// Where a request of `kind` for the member at `endpoint` goes, with which keys.
    static func route(_ kind: WireMessageKind, to endpoint: String) -> (endpoint: String, credentials: ClusterCredentials?) {
        guard !kind.isClientKind, let face = clusterFaces.withLock({ $0[endpoint] }) else { return (endpoint, nil) }
        return face
    }
}

/// Client endpoint -> the member's cluster endpoint and the keys to speak there.
private let clusterFaces = Mutex<[String: (endpoint: String, credentials: ClusterCredentials?)]>([:])

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
