import OperatorTools
import Foundation
import NodeRuntime
import Routing
import ShowroomWire
import SwiftProtobuf
import ZeroMQ

/// The operator's link to a cluster: its status as a seed sees it, and room and admin requests to
/// the room-coordinators. The alive coordinators are learned from the first seed that answers, and
/// each request goes to the first coordinator that answers it (any coordinator serves any room: it
/// forwards to the owner). Not the edges' link to their coordinator (`EdgeServer`'s
/// `CoordinatorLink`): this one is for showroomctl's commands.
final class OperatorLink {
    let context: Context
    let seeds: [String]
    let timeout: Duration
    private var clients: [String: NodeClient] = [:]

    init(seeds: [String], timeout: Duration = .seconds(3)) throws {
        guard !seeds.isEmpty else { throw ShowroomError.invalidArgument("give at least one --seed tcp://host:port") }
        self.seeds = seeds
        self.timeout = timeout
        context = try Context()
    }

    /// The cluster as the first answering seed sees it. A seed is asked as a cluster endpoint
    /// with the operator's keys (when `SHOWROOM_KEYRING` names them), then as a client endpoint.
    func clusterStatus() throws(ShowroomError) -> AdminClusterStatus {
        var last: ShowroomError = .unavailable("no seed answered")
        for seed in seeds {
            do {
                return try status(of: seed)
            } catch {
                last = error
            }
        }
        throw last
    }

    /// The cluster as `seed` sees it: asked as a cluster endpoint with the operator's keys (when
    /// `SHOWROOM_KEYRING` names them), then as a client endpoint.
    func status(of seed: String) throws(ShowroomError) -> AdminClusterStatus {
        var last: ShowroomError = .unavailable("\(seed) did not answer")
        let attempts: [ClusterCredentials?] = OperatorKeys.credentials.map { [$0, nil] } ?? [nil]
        for credentials in attempts {
            do {
                return try client(seed, credentials: credentials).request(
                    .clusterStatus, body: AdminClusterStatusRequest(), expecting: AdminClusterStatus.self,
                    timeout: attempts.count > 1 && credentials != nil ? min(timeout, .milliseconds(700)) : timeout)
            } catch {
                last = error
            }
        }
        throw last
    }

    /// The alive coordinators' members, sorted by id.
    static func coordinators(in status: AdminClusterStatus) -> [AdminMemberStatus] {
        status.members.filter { $0.isAlive(as: .coordinator) }.sorted { $0.id < $1.id }
    }

    /// Sends `body` to an alive coordinator; the next one is tried when one cannot be reached.
    func request<Response: SwiftProtobuf.Message>(_ kind: WireMessageKind, body: some SwiftProtobuf.Message,
                                                  expecting: Response.Type) throws(ShowroomError) -> Response {
        let members = Self.coordinators(in: try clusterStatus())
        guard !members.isEmpty else {
            throw ShowroomError(.noCoordinator, "no room-coordinator is alive in the cluster (asked \(seeds.joined(separator: ", "))); start one")
        }
        var last: ShowroomError = .unavailable("no coordinator answered")
        for member in members {
            do {
                // Room requests are client kinds: a coordinator's client face serves them (a
                // status from a client face names no cluster endpoints anyway).
                let endpoint = member.clientEndpoint.isEmpty ? member.clusterEndpoint : member.clientEndpoint
                return try client(endpoint, credentials: member.clientEndpoint.isEmpty ? OperatorKeys.credentials : nil)
                    .request(kind, body: body, expecting: Response.self, timeout: timeout)
            } catch where error.code == .unavailable || error.code == .deadlineExceeded {
                last = error
            }
        }
        throw last
    }

    /// A client for `endpoint`: with the operator's keys for a cluster endpoint, plain for a client
    /// endpoint (a CURVE client never finishes a handshake with a plain server, nor the reverse).
    private func client(_ endpoint: String, credentials: ClusterCredentials?) throws(ShowroomError) -> NodeClient {
        let key = (credentials == nil ? "plain " : "curve ") + endpoint
        if let client = clients[key] { return client }
        do {
            let client = try NodeClient(endpoint: endpoint, context: context, credentials: credentials)
            clients[key] = client
            return client
        } catch {
            throw .invalidArgument("cannot connect to \(endpoint): \(error)")
        }
    }
}

