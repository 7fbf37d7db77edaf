import OperatorTools
import ArgumentParser
import Foundation
import NodeRuntime
import Routing
import ShowroomWire
import ZeroMQ

/// `showroomctl info --endpoint ADDR`: asks one process who it is.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Ask a Showroom process for its id, role, cluster endpoint, version, pid and uptime.")

    @Option(help: "The process's cluster endpoint, e.g. tcp://127.0.0.1:7100 (with SHOWROOM_KEYRING when the cluster has a keyring), or its client endpoint, which does not tell its pid or cluster endpoint.")
    var endpoint: String

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Double = 3

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let context = try Context()
        let client = try NodeClient(endpoint: endpoint, context: context, credentials: OperatorKeys.credentials)
        let info: WireNodeInfo
        do {
            info = try client.request(.nodeInfo, body: WireNodeInfoRequest(), expecting: WireNodeInfo.self,
                                      timeout: .milliseconds(Int(timeout * 1000)))
        } catch {
            FileHandle.standardError.write(Data("showroomctl info: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let role = NodeRole(wire: info.role)?.rawValue ?? "unknown"
        if json {
            // A client face leaves the pid and cluster endpoint out: null, not 0 and "".
            let object: [String: Any] = [
                "id": info.nodeID, "role": role, "version": info.version,
                "endpoint": info.clusterEndpoint.isEmpty ? NSNull() : info.clusterEndpoint, "uptime_ms": info.uptimeMs,
                "pid": info.pid == 0 ? NSNull() : info.pid,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            let endpoint = info.clusterEndpoint.isEmpty ? "-" : info.clusterEndpoint
            let pid = info.pid == 0 ? "-" : "\(info.pid)"
            print("\(info.nodeID)  \(role)  \(endpoint)  version \(info.version)  pid \(pid)  up \(info.uptimeMs / 1000) s")
        }
    }
}
