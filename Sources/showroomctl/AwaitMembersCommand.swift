import ArgumentParser
import Foundation
import NodeRuntime
import ShowroomWire
import ZeroMQ

/// `showroomctl await-members`: waits until every given member sees the same number of alive
/// members. Used by the cluster launcher to return only once the cluster has converged.
struct AwaitMembersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "await-members",
        abstract: "Wait until each given member sees COUNT alive members.")

    @Option(name: .customLong("seed"), help: "A member's cluster endpoint (repeatable: every one is asked).")
    var seeds: [String]

    @Option(help: "Alive members each must see.")
    var count: Int

    @Option(help: "Seconds to wait before giving up (exit status 1).")
    var timeout = 30.0

    func run() throws {
        let context = try Context()
        let clients = try seeds.map { try NodeClient(endpoint: $0, context: context) }
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var waitingFor = Set(clients.indices)
        var last: [Int: String] = [:]
        while !waitingFor.isEmpty && ContinuousClock.now < deadline {
            for i in waitingFor.sorted() {
                do {
                    let status = try clients[i].request(.clusterStatus, body: AdminClusterStatusRequest(),
                                                        expecting: AdminClusterStatus.self, timeout: .seconds(1))
                    let alive = status.members.filter { $0.state == .alive }.count
                    if alive == count { waitingFor.remove(i) } else { last[i] = "\(status.reporter) sees \(alive) alive" }
                } catch {
                    last[i] = "\(clients[i].endpoint): \(error)"
                }
            }
            if !waitingFor.isEmpty { Thread.sleep(forTimeInterval: 0.05) }  // poll period
        }
        if !waitingFor.isEmpty {
            let reasons = waitingFor.sorted().compactMap { last[$0] }.joined(separator: "; ")
            FileHandle.standardError.write(Data("showroomctl await-members: not converged to \(count) alive: \(reasons)\n".utf8))
            throw ExitCode(1)
        }
    }
}
