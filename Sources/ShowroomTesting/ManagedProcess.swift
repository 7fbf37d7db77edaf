import Foundation
import NodeRuntime
import Subprocess
import Synchronization
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// A real process started by a test or a benchmark (through swift-subprocess): its output
/// captured line by line (and printed if the test fails, see ``LogCapture``), lines awaited with
/// deadlines, and the process stopped by its pid however the caller ends.
public final class ManagedProcess: Sendable {
    /// The executable's name, e.g. `showroom-edge`.
    public let name: String
    /// The process id.
    public let pid: Int32
    /// Everything it printed so far.
    public let output: CapturedOutput
    private let exit: ExitStatus

    /// Starts `executable` (a product of this package, found next to the running binary) with
    /// `arguments`; `label` names it in failure reports (default: the executable), `environment`
    /// is added to this process's.
    public convenience init(_ executable: String, _ arguments: [String], label: String? = nil,
                            environment: [String: String] = [:]) throws {
        try self.init(executableURL: try Self.productURL(executable), arguments: arguments, label: label,
                      environment: environment)
    }

    /// Starts the executable at `executableURL`.
    public init(executableURL: URL, arguments: [String], label: String? = nil, environment: [String: String] = [:]) throws {
        name = executableURL.lastPathComponent
        let output = CapturedOutput(label: label ?? name)
        let exit = ExitStatus()
        let started = StartResult()
        var inherited = Environment.inherit
        // Server processes stop by themselves if this process dies without stopping them.
        let given = environment.merging([ParentWatch.variable: "\(getpid())"]) { mine, _ in mine }
        if !given.isEmpty {
            inherited = inherited.updating(Dictionary(uniqueKeysWithValues: given.compactMap { key, value in
                Environment.Key(rawValue: key).map { ($0, Optional(value)) }
            }))
        }
        let environment = inherited
        let path = FilePath(executableURL.path)
        // The process lives as long as this task: it reads both pipes line by line until they
        // close, then reaps the process. It runs on a thread of its own, so a test that blocks a
        // thread of Swift's small cooperative pool waiting for a line cannot starve the reader.
        Task(executorPreference: ProcessReaderExecutor.shared) {
            do {
                let result = try await Subprocess.run(
                    .path(path), arguments: Arguments(arguments), environment: environment,
                    input: .none, output: .sequence, error: .sequence
                ) { execution in
                    started.resolve(.success(execution.processIdentifier.value))
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            do {
                                for try await line in execution.standardOutput.strings() { output.append(line, isStandardOutput: true) }
                            } catch {
                                output.append("(reading standard output failed: \(error))", isStandardOutput: false)
                            }
                        }
                        group.addTask {
                            do {
                                for try await line in execution.standardError.strings() { output.append(line, isStandardOutput: false) }
                            } catch {
                                output.append("(reading standard error failed: \(error))", isStandardOutput: false)
                            }
                        }
                    }
                }
                switch result.terminationStatus {
                case .exited(let code): exit.finish(Int32(code))
                case .signaled(let signal): exit.finish(128 + Int32(signal))
                }
            } catch {
                started.resolve(.failure(error))
                exit.finish(-1)
            }
            output.finish()
        }
        pid = try started.wait()
        self.output = output
        self.exit = exit
        Self.register(pid)
        LogCapture.register(output, pid: pid)
    }

    deinit {
        kill(signal: SIGKILL)
        Self.unregister(pid)
    }

    /// Where `swift build` put the package's executables: next to the running binary (a
    /// benchmark) or one level up from it (the test bundle, `<build>/debug/ShowroomPackageTests.xctest`).
    public static func productURL(_ executable: String) throws -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory.appendingPathComponent(executable),
                          directory.deletingLastPathComponent().appendingPathComponent(executable)]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        throw ShowroomTestingError("executable \(executable) not found next to \(CommandLine.arguments[0]); run `swift build` first")
    }

    /// Lines written to standard output so far.
    public var stdoutLines: [String] { output.standardOutput }
    /// Lines written to standard error (the logs) so far.
    public var stderrLines: [String] { output.standardError }

    /// Waits until a line of standard output satisfies `match`, and returns it.
    public func waitForLine(timeout: Duration = .seconds(20), where match: (String) -> Bool) throws -> String {
        guard let line = output.waitForLine(timeout: timeout, where: match) else {
            if let status = exit.status {
                throw ShowroomTestingError("\(output.label) exited (status \(status)) before the expected line; stderr:\n\(stderrLines.suffix(20).joined(separator: "\n"))")
            }
            throw ShowroomTestingError("\(output.label) printed no expected line within \(timeout); stdout: \(stdoutLines); stderr:\n\(stderrLines.suffix(20).joined(separator: "\n"))")
        }
        return line
    }

    /// Sends `signal` to the process (no effect once it has exited).
    public func kill(signal: Int32) {
        if exit.status == nil { _ = Glibc.kill(pid, signal) }
    }

    /// Waits for the process to exit and its output to end; returns its exit status (128 + the
    /// signal for a killed one), or nil if it still runs at the deadline.
    public func waitForExit(timeout: Duration = .seconds(10)) -> Int32? {
        exit.wait(timeout: timeout) ? exit.status : nil
    }

    /// True until the process has exited.
    public var isRunning: Bool { exit.status == nil }

    /// Runs `executable` to its end and returns its exit status and output (standard output, then
    /// standard error); throws when it takes longer than `timeout` (it is killed then).
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           timeout: Duration = .seconds(60)) throws -> (status: Int32, output: String) {
        let process = try ManagedProcess(executable, arguments, environment: environment)
        guard let status = process.waitForExit(timeout: timeout) else {
            process.kill(signal: SIGKILL)
            throw ShowroomTestingError("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout):\n\(process.output.text)")
        }
        return (status, (process.stdoutLines + process.stderrLines).joined(separator: "\n"))
    }

    // Every process still running is killed if the test binary exits early.
    private static let live = Mutex<Set<Int32>>([])
    private static let killAtExit: Void = {
        atexit { ManagedProcess.live.withLock { $0 }.forEach { _ = Glibc.kill($0, SIGKILL) } }
    }()
    private static func register(_ pid: Int32) {
        _ = killAtExit
        _ = live.withLock { $0.insert(pid) }
    }
    private static func unregister(_ pid: Int32) { _ = live.withLock { $0.remove(pid) } }
}

/// A failure to start or watch a local process or cluster, with a message saying what to look at.
public struct ShowroomTestingError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The pid once the process started, or why it did not; waited for by the starting thread.
private final class StartResult: Sendable {
    private let result = Mutex<Result<Int32, any Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func resolve(_ outcome: Result<Int32, any Error>) {
        let first = result.withLock { current in
            guard current == nil else { return false }
            current = outcome
            return true
        }
        if first { ready.signal() }
    }

    func wait() throws -> Int32 {
        ready.wait()
        ready.signal()
        return try result.withLock { $0! }.get()
    }
}

/// A process's exit status once it has been reaped.
private final class ExitStatus: Sendable {
    private let value = Mutex<Int32?>(nil)
    private let exited = DispatchSemaphore(value: 0)

    var status: Int32? { value.withLock { $0 } }

    func finish(_ status: Int32) {
        value.withLock { $0 = status }
        exited.signal()
    }

    /// Whether the process exited within `timeout`.
    func wait(timeout: Duration) -> Bool {
        guard exited.wait(timeout: .now() + .milliseconds(Int(timeout.milliseconds))) == .success else { return false }
        exited.signal()  // later waiters see the exit too
        return true
    }
}

/// One thread running the tasks that read child processes' output: they never wait for a thread
/// of the cooperative pool, which tests may hold while they wait for a line.
final class ProcessReaderExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is guarded by `condition`.
    static let shared = ProcessReaderExecutor()
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "process-readers"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
