import OperatorTools
import ArgumentParser
import Foundation
import NodeRuntime
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import ZeroMQ

/// The seeds the benchmarks give the SDK: the alive coordinators' client endpoints, read from the
/// cluster status of the first seed that answers (an operator may name cluster endpoints).
enum ClientSeeds {
    static func resolve(_ seeds: [String]) async throws -> [String] {
        try await onThread { ClusterProbe.coordinatorClientEndpoints(seeds: seeds, credentials: OperatorKeys.credentials) }
    }
}

/// The cluster as the first answering seed sees it.
func clusterStatus(seeds: [String]) async throws -> AdminClusterStatus {
    try await onThread {
        guard let status = ClusterProbe.firstStatus(seeds: seeds, credentials: OperatorKeys.credentials) else {
            throw ShowroomError.unavailable("no seed answered (\(seeds.joined(separator: ", ")))")
        }
        return status
    }
}

/// The pid of member `id`, asked of the member itself (NODE_INFO) on its cluster endpoint, found
/// through the first seed that answers.
func memberProcessID(_ id: String, seeds: [String]) async throws -> Int32 {
    let status = try await clusterStatus(seeds: seeds)
    guard let endpoint = status.member(id)?.clusterEndpoint, !endpoint.isEmpty else {
        throw ShowroomError.unavailable("the cluster view of \(status.reporter) names no cluster endpoint for \(id); give a cluster endpoint as --seed, with SHOWROOM_KEYRING")
    }
    return try await onThread {
        let context = try Context()
        defer { context.shutdown() }
        let client = try NodeClient(endpoint: endpoint, context: context, credentials: OperatorKeys.credentials)
        return Int32(try client.request(.nodeInfo, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self).pid)
    }
}
