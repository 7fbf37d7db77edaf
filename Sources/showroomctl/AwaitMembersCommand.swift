import ArgumentParser
import Foundation
import LocalCluster

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
        do {
            try ClusterProbe(credentials: OperatorKeys.credentials).waitUntil(seeds, timeout: .milliseconds(Int(timeout * 1000)), "each sees \(count) alive") {
                $0.aliveIDs.count == count
            }
        } catch {
            FileHandle.standardError.write(Data("showroomctl await-members: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
