import OperatorTools
import ArgumentParser
import Foundation
import NodeRuntime
import ShowroomWire

/// `showroomctl keys ...`: the cluster's CURVE keyring.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage the cluster's CURVE keyring (who may speak on cluster links).",
        subcommands: [Generate.self])

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write cluster.key and a key pair per id (<id>.key, mode 600, and <id>.pub) into a directory; existing keys are kept.")

        @Option(help: "The keyring directory (created if missing).")
        var dir: String

        @Option(name: .customLong("id"), help: "A member or operator id to make keys for (repeatable).")
        var ids: [String] = []

        func run() throws {
            let made = try ClusterKeyring.generate(directory: dir, ids: ids)
            print("keyring \(dir): \(made.isEmpty ? "no new keys" : "new keys for \(made.joined(separator: ", "))")")
        }
    }
}

/// The seeds showroomctl gives the SDK. The SDK speaks to client endpoints only, while an operator
/// may name any member's cluster endpoint: the alive coordinators' client endpoints are read from
/// the cluster status of the first seed that answers (``OperatorLink/clusterStatus()``: with
/// the operator's keys, as a cluster endpoint, or plainly, as a client endpoint).
enum ClientSeeds {
    /// The coordinators' client endpoints, or `seeds` unchanged when no seed answered (the SDK then
    /// reports what it finds).
    static func resolve(_ seeds: [String]) async throws -> [String] {
        try await onThread {
            guard let status = try? OperatorLink(seeds: seeds).clusterStatus() else { return seeds }
            let coordinators = OperatorLink.coordinators(in: status).map(\.clientEndpoint).filter { !$0.isEmpty }
            return coordinators.isEmpty ? seeds : coordinators
        }
    }
}
