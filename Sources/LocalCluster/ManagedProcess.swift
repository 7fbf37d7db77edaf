import Foundation
import ZeroMQ
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real Showroom process started by a test or a benchmark: its output captured line by line,
/// lines awaited with deadlines, and the process stopped by its pid however the caller ends.
public final class ManagedProcess: @unchecked Sendable {
    // @unchecked: `process` is set once in init; `output` is behind a mutex.

    /// The executable's name, e.g. `showroom-edge`.
    public let name: String
    /// The process id.
    public let pid: Int32
    private let process: Process
    private let output = Mutex(Output())
    private let changed = NSCondition()
    private let exited = DispatchSemaphore(value: 0)

    private struct Output {
        var stdout: [String] = []
        var stderr: [String] = []
        var partial: [Bool: String] = [:]
    }

    /// Starts `executable` (a product of this package, found next to the test binary) with
    /// `arguments`.
    public init(_ executable: String, _ arguments: [String]) throws {
        name = executable
        process = Process()
        process.executableURL = try Self.productURL(executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [exited, changed] _ in
            exited.signal()
            changed.lock()
            changed.broadcast()
            changed.unlock()
        }
        try process.run()
        pid = process.processIdentifier
        Self.register(pid)
        capture(out.fileHandleForReading, isStdout: true)
        capture(err.fileHandleForReading, isStdout: false)
    }

    deinit {
        kill(signal: SIGKILL)
        Self.unregister(pid)
    }

    /// Where `swift build` put the package's executables: next to the running test binary.
    public static func productURL(_ executable: String) throws -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [directory.appendingPathComponent(executable)]
        // On Linux the test binary is `<build>/debug/ShowroomPackageTests.xctest`.
        candidates.append(directory.deletingLastPathComponent().appendingPathComponent(executable))
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        throw LocalClusterError("executable \(executable) not found next to \(CommandLine.arguments[0]); run `swift build` first")
    }

    /// Reads `handle` to its end on a thread of its own, line by line. Blocking reads, not a
    /// `readabilityHandler`: tearing down libdispatch's read source can crash its event loop on
    /// Linux (swift-corelibs-libdispatch#949), and a blocking read registers nothing with it.
    private func capture(_ handle: FileHandle, isStdout: Bool) {
        let reader = Thread { [weak self] in
            while true {
                let data = handle.availableData  // blocks until some output or the end
                if data.isEmpty { return }
                guard let self else { continue }  // keep draining so the child never blocks on a full pipe
                self.output.withLock { output in
                    var text = (output.partial[isStdout] ?? "") + String(decoding: data, as: UTF8.self)
                    while let newline = text.firstIndex(of: "\n") {
                        let line = String(text[..<newline])
                        if isStdout { output.stdout.append(line) } else { output.stderr.append(line) }
                        text = String(text[text.index(after: newline)...])
                    }
                    output.partial[isStdout] = text
                }
                self.changed.lock()
                self.changed.broadcast()
                self.changed.unlock()
            }
        }
        reader.name = "\(name)-\(isStdout ? "stdout" : "stderr")"
        reader.start()
    }

    /// Lines written to standard output so far.
    public var stdoutLines: [String] { output.withLock { $0.stdout } }
    /// Lines written to standard error (the logs) so far.
    public var stderrLines: [String] { output.withLock { $0.stderr } }

    /// Waits until a line of standard output satisfies `match`, and returns it.
    public func waitForLine(timeout: Duration = .seconds(20), where match: (String) -> Bool) throws -> String {
        let deadline = Date() + timeout.seconds
        changed.lock()
        defer { changed.unlock() }
        while true {
            if let line = stdoutLines.first(where: match) { return line }
            if !process.isRunning {
                throw LocalClusterError("\(name) exited (status \(process.terminationStatus)) before the expected line; stderr:\n\(stderrLines.suffix(20).joined(separator: "\n"))")
            }
            if !changed.wait(until: min(deadline, Date() + 0.1)) && Date() >= deadline {
                throw LocalClusterError("\(name) printed no expected line within \(timeout); stdout: \(stdoutLines); stderr:\n\(stderrLines.suffix(20).joined(separator: "\n"))")
            }
        }
    }

    /// Sends `signal` to the process (no effect once it has exited).
    public func kill(signal: Int32) {
        if process.isRunning { Glibc.kill(pid, signal) }
    }

    /// Waits for the process to exit and returns its exit status, or nil if it is still running
    /// at the deadline.
    public func waitForExit(timeout: Duration = .seconds(10)) -> Int32? {
        guard exited.wait(timeout: .now() + .milliseconds(Int(timeout.milliseconds))) == .success else {
            return nil
        }
        exited.signal()  // later waiters see the exit too
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// True while the process runs.
    public var isRunning: Bool { process.isRunning }

    // Every process a test started is killed if the test binary exits early.
    private static let live = Mutex<Set<Int32>>([])
    private static let killAtExit: Void = {
        atexit { ManagedProcess.live.withLock { $0 }.forEach { Glibc.kill($0, SIGKILL) } }
    }()
    private static func register(_ pid: Int32) {
        _ = killAtExit
        _ = live.withLock { $0.insert(pid) }
    }
    private static func unregister(_ pid: Int32) { _ = live.withLock { $0.remove(pid) } }
}

/// A failure to start or watch a local process, with a message saying what to look at.
public struct LocalClusterError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
