import ArgumentParser
import Foundation
import NodeRuntime
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import ZeroMQ

/// The keys the benchmarks present on cluster endpoints of a cluster with a keyring: the
/// `operator` key pair (or `SHOWROOM_KEY_ID`'s) of the keyring directory named by
/// `SHOWROOM_KEYRING`, as for showroomctl. Unset: plain links.
enum OperatorKeys {
    /// The credentials, or nil without `SHOWROOM_KEYRING`; exits with a clear message when the
    /// keyring named there cannot be read.
    static let credentials: ClusterCredentials? = {
        let environment = ProcessInfo.processInfo.environment
        guard let directory = environment["SHOWROOM_KEYRING"], !directory.isEmpty else { return nil }
        do {
            return try ClusterCredentials.load(keyringDirectory: directory, id: environment["SHOWROOM_KEY_ID"] ?? "operator")
        } catch {
            FileHandle.standardError.write(Data("showroom-bench: SHOWROOM_KEYRING: \(error)\n".utf8))
            exit(2)
        }
    }()
}

/// The app credentials the benchmarks mint tokens with: `--app-id` / `--app-cert`,
/// `SHOWROOM_APP_ID` / `SHOWROOM_APP_CERTIFICATE`, or the `app.json` of a local cluster's run
/// directory (`--run-dir` or `SHOWROOM_RUN_DIR`), as for showroomctl.
struct AppCredentials: ParsableArguments {
    @Option(name: .customLong("app-id"), help: "The app id (32 hex digits); default: $SHOWROOM_APP_ID, or the run directory's.")
    var appIDFlag: String?

    @Option(name: .customLong("app-cert"), help: "The app certificate (32 hex digits); default: $SHOWROOM_APP_CERTIFICATE, or the run directory's.")
    var appCertificateFlag: String?

    @Option(name: .customLong("run-dir"), help: "A local cluster's run directory (deploy/cluster.sh), whose app.json holds the credentials; default: $SHOWROOM_RUN_DIR.")
    var runDirectory: String?

    /// The credentials, found as the type's documentation says.
    func resolved() throws -> LocalAppCredentials {
        do {
            return try LocalAppCredentials.find(appID: appIDFlag, appCertificate: appCertificateFlag, runDirectory: runDirectory)
        } catch {
            throw ValidationError(error.message)
        }
    }

    mutating func validate() throws {
        _ = try resolved()  // a missing credential stops the benchmark before it starts anything
    }

    /// A token for `uid` in `channel`: every privilege for a publisher, join only for a subscriber.
    func token(channel: String, uid: UInt32, role: RTCRole, expire: UInt32 = 3600) throws -> String {
        try resolved().token(channel: channel, uid: uid, role: role, expire: expire)
    }
}

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

/// Runs blocking socket work on a thread of its own, off Swift's cooperative pool.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
