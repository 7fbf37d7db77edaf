import Foundation
import NodeRuntime
import ShowroomTesting
import XCTest

/// A server process started by a runner that dies without stopping it stops by itself.
final class ParentWatchTests: XCTestCase {
    func testANodeWhoseStarterDiesStopsByItself() async throws {
        let node = try ManagedProcess.productURL("showroom-callsignal").path
        // A shell starts the node (naming itself as the parent to watch), prints its pid and exits
        // at once, as a crashed test runner would.
        let starter = try ManagedProcess(executableURL: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", """
            \(ParentWatch.variable)=$$ '\(node)' --node-id orphan-1 --bind tcp://127.0.0.1:* --admin off >/dev/null 2>&1 &
            echo pid=$!
            """])
        let line = try starter.waitForLine { $0.hasPrefix("pid=") }
        let pid = try XCTUnwrap(Int32(line.dropFirst(4)))
        XCTAssertNotNil(starter.waitForExit(), "the starter exited")
        do {
            try await eventually("the orphaned node stops", timeout: .seconds(10)) { !processIsAlive(pid) }
        } catch {
            kill(pid, SIGKILL)
            throw error
        }
    }
}
