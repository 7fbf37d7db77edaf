import Foundation
import NodeRuntime
import Routing
import ShowroomWire
import ZeroMQ

/// Asks members for their view of the cluster, and waits for the views to satisfy a condition.
/// Confined to the thread that created it (it owns ZeroMQ sockets).
public final class ClusterProbe {
    private let context: Context
    private var clients: [String: NodeClient] = [:]
    private let credentials: ClusterCredentials?

    /// Creates a probe with its own ZeroMQ context; `credentials` are the keys it presents on
    /// cluster endpoints of a cluster with a keyring.
    public init(credentials: ClusterCredentials? = nil) throws {
        context = try Context()
        self.credentials = credentials
    }

    /// The member at `endpoint`'s view, or nil when it does not answer within `timeout`.
    public func status(of endpoint: String, timeout: Duration = .seconds(1)) -> AdminClusterStatus? {
        do {
            let client = try clients[endpoint] ?? NodeClient(endpoint: endpoint, context: context, credentials: credentials)
            clients[endpoint] = client
            return try client.request(.clusterStatus, body: AdminClusterStatusRequest(),
                                      expecting: AdminClusterStatus.self, timeout: timeout)
        } catch {
            return nil
        }
    }

    /// Polls the views of `endpoints` (every 50 ms) until `condition` holds for all of them, or
    /// `timeout` passes. Returns the time it took, or throws with the last views when it timed out.
    @discardableResult
    public func waitUntil(_ endpoints: [String], timeout: Duration = .seconds(20), _ what: String,
                          condition: (AdminClusterStatus) -> Bool) throws -> Duration {
        let start = ContinuousClock.now
        var pending = Set(endpoints)
        var last: [String: String] = [:]
        while !pending.isEmpty {
            for endpoint in pending.sorted() {
                if let status = self.status(of: endpoint) {
                    if condition(status) { pending.remove(endpoint) } else { last[endpoint] = Self.summary(status) }
                } else {
                    last[endpoint] = "no answer"
                }
            }
            if pending.isEmpty { break }
            guard start.duration(to: .now) < timeout else {
                let views = pending.sorted().map { "\($0): \(last[$0] ?? "?")" }.joined(separator: "\n  ")
                throw ShowroomTestingError("not within \(timeout): \(what); views:\n  \(views)")
            }
            Thread.sleep(forTimeInterval: 0.05)  // poll period between status requests
        }
        return start.duration(to: .now)
    }

    /// The cluster as the first of `seeds` that answers sees it: each seed is asked with
    /// `credentials` (a cluster endpoint), then plainly (a client endpoint); nil when none answers.
    public static func firstStatus(seeds: [String], credentials: ClusterCredentials?) -> AdminClusterStatus? {
        let probes = [credentials.flatMap { try? ClusterProbe(credentials: $0) }, try? ClusterProbe()].compactMap { $0 }
        for seed in seeds {
            for probe in probes {
                if let status = probe.status(of: seed, timeout: .milliseconds(700)) { return status }
            }
        }
        return nil
    }

    /// The client endpoints of the alive coordinators, as the first of `seeds` that answers sees
    /// them: the seeds to give the SDK when an operator names members' cluster endpoints.
    /// `seeds` unchanged when none answers or none names a coordinator (the SDK then reports what
    /// it finds).
    public static func coordinatorClientEndpoints(seeds: [String], credentials: ClusterCredentials?) -> [String] {
        guard let status = firstStatus(seeds: seeds, credentials: credentials) else { return seeds }
        let endpoints = status.members.filter { $0.isAlive(as: .coordinator) }
            .sorted { $0.id < $1.id }.map(\.clientEndpoint).filter { !$0.isEmpty }
        return endpoints.isEmpty ? seeds : endpoints
    }

    /// `id=state/incarnation` for each member of a view.
    public static func summary(_ status: AdminClusterStatus) -> String {
        status.reporter + " sees " + status.members.map { "\($0.id)=\($0.state)/\($0.incarnation)" }.joined(separator: " ")
    }
}

extension AdminClusterStatus {
    /// The member with `id` in this view, if known.
    public func member(_ id: String) -> AdminMemberStatus? {
        members.first { $0.id == id }
    }

    /// Ids of the members this view holds alive.
    public var aliveIDs: Set<String> {
        Set(members.filter { $0.state == .alive }.map(\.id))
    }
}
