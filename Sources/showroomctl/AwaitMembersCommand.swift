import ArgumentParser
import Foundation
import ShowroomWire

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
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        do {
            let link = try OperatorLink(seeds: seeds, timeout: .seconds(1))
            var pending = Set(seeds)
            var last: [String: String] = [:]
            while !pending.isEmpty {
                for seed in pending.sorted() {
                    do {
                        let status = try link.status(of: seed)
                        let alive = status.members.filter { $0.state == .alive }.count
                        if alive == count { pending.remove(seed) } else { last[seed] = "sees \(alive) alive" }
                    } catch {
                        last[seed] = "\(error)"
                    }
                }
                guard !pending.isEmpty else { break }
                guard ContinuousClock.now < deadline else {
                    let views = pending.sorted().map { "\($0): \(last[$0] ?? "?")" }.joined(separator: "; ")
                    throw ShowroomError.deadlineExceeded("not each sees \(count) alive within \(timeout) s: \(views)")
                }
                Thread.sleep(forTimeInterval: 0.05)  // between rounds of status requests
            }
        } catch {
            FileHandle.standardError.write(Data("showroomctl await-members: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
