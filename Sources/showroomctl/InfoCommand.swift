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
        abstract: "Ask a Showroom process for its id, role, version and uptime.")

    @Option(help: "The process's cluster endpoint, e.g. tcp://127.0.0.1:7100.")
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
            let object: [String: Any] = [
                "id": info.nodeID, "role": role, "version": info.version,
                "endpoint": info.clusterEndpoint, "uptime_ms": info.uptimeMs, "pid": info.pid,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("\(info.nodeID)  \(role)  \(info.clusterEndpoint)  version \(info.version)  pid \(info.pid)  up \(info.uptimeMs / 1000) s")
        }
    }
}
