import Foundation
import Logging
import Synchronization

#if canImport(XCTest)
import XCTest
#endif

/// The lines one process (or one in-process logger) printed, kept in order for waits and for the
/// report of a failed test.
public final class CapturedOutput: @unchecked Sendable {
    // @unchecked: the lines are behind `condition`'s lock.
    /// Who printed them: a node id, or an executable's name.
    public let label: String
    private let condition = NSCondition()
    private var lines: [(isStandardOutput: Bool, text: String)] = []
    private var stdout: [String] = []
    private var stderr: [String] = []
    private var ended = false

    /// An empty capture named `label`.
    public init(label: String) { self.label = label }

    /// Records a line.
    public func append(_ line: String, isStandardOutput: Bool) {
        condition.lock()
        lines.append((isStandardOutput, line))
        if isStandardOutput { stdout.append(line) } else { stderr.append(line) }
        condition.broadcast()
        condition.unlock()
    }

    /// Marks the end of the output (the process exited).
    public func finish() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Standard output lines so far.
    public var standardOutput: [String] { locked { stdout } }
    /// Standard error lines (a node's log) so far.
    public var standardError: [String] { locked { stderr } }
    /// How many lines so far, both streams.
    public var count: Int { locked { lines.count } }
    /// Whether the output has ended.
    public var isFinished: Bool { locked { ended } }
    /// Every line so far, standard output ones marked `>`.
    public var text: String { lines(from: 0).joined(separator: "\n") }

    /// The lines from index `start` on, standard output ones marked `>`.
    public func lines(from start: Int) -> [String] {
        locked { lines.dropFirst(start).map { ($0.isStandardOutput ? "> " : "") + $0.text } }
    }

    /// Waits until a standard output line satisfies `match` (nil at the deadline, or when the
    /// output ended without one). Sleeps on a condition: woken by each new line.
    public func waitForLine(timeout: Duration, where match: (String) -> Bool) -> String? {
        let deadline = Date() + Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        condition.lock()
        defer { condition.unlock() }
        var checked = 0
        while true {
            if let line = stdout[checked...].first(where: match) { return line }
            checked = stdout.count
            if ended || !condition.wait(until: deadline) && Date() >= deadline {
                return stdout[checked...].first(where: match)
            }
        }
    }
}

/// Keeps what every process a test started printed, and prints it when the test fails: each
/// node's lines from the test's start (or the node's) on, so a failure in a real-process test
/// shows what the nodes said without the noise of passing tests. Installed by the first process
/// (or logger) a test makes; the failure hook is an `XCTestObservation`.
public enum LogCapture {
    private struct Entry {
        var output: CapturedOutput
        var pid: Int32?
        /// Lines already there when the current test started.
        var mark: Int
    }

    private static let entries = Mutex<[Entry]>([])
    /// Lines printed per node and failed test at most (its last ones).
    static let maxLinesPerNode = 400

    /// Keeps `output` for the reports of failing tests.
    public static func register(_ output: CapturedOutput, pid: Int32? = nil) {
        installObserver()
        entries.withLock { $0.append(Entry(output: output, pid: pid, mark: 0)) }
    }

    /// A logger (for an in-process node or edge) whose lines are captured under `label` and
    /// printed only if the test fails; `level` and above (default info, as swift-log's default).
    public static func logger(label: String, level: Logger.Level = .info) -> Logger {
        let output = CapturedOutput(label: label)
        register(output)
        var logger = Logger(label: label) { _ in CapturedLogHandler(output: output) }
        logger.logLevel = level
        return logger
    }

    /// A test starts: outputs that ended before are dropped, the others marked.
    static func testStarted() {
        entries.withLock { entries in
            entries.removeAll { $0.output.isFinished }
            for index in entries.indices { entries[index].mark = entries[index].output.count }
        }
    }

    /// What the nodes printed during the current test, for its failure report.
    public static func report(for test: String) -> String {
        let current = entries.withLock { $0 }
        var text = ""
        for entry in current {
            let lines = entry.output.lines(from: entry.mark)
            guard !lines.isEmpty else { continue }
            let shown = lines.suffix(maxLinesPerNode)
            text += "---- \(entry.output.label)\(entry.pid.map { " (pid \($0))" } ?? ""): "
            text += lines.count > shown.count ? "last \(shown.count) of \(lines.count) lines" : "\(lines.count) lines"
            text += " during \(test) (> standard output) ----\n" + shown.joined(separator: "\n") + "\n"
        }
        return text
    }

    private static let observer: Void = {
        #if canImport(XCTest)
        XCTestObservationCenter.shared.addTestObserver(FailedTestLogPrinter())
        #endif
    }()

    private static func installObserver() { _ = observer }
}

#if canImport(XCTest)
/// Prints the captured logs of a test that failed, after the test.
private final class FailedTestLogPrinter: NSObject, XCTestObservation {
    func testCaseWillStart(_ testCase: XCTestCase) {
        LogCapture.testStarted()
    }

    func testCaseDidFinish(_ testCase: XCTestCase) {
        guard let run = testCase.testRun, run.totalFailureCount > 0 else { return }
        let report = LogCapture.report(for: testCase.name)
        guard !report.isEmpty else { return }
        print("==== \(testCase.name) failed; what its nodes printed:\n" + report + "==== end of \(testCase.name)'s node logs")
    }
}
#endif

/// A swift-log handler writing into a ``CapturedOutput``.
struct CapturedLogHandler: LogHandler {
    let output: CapturedOutput
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        output.append("\(event.level) \(event.message)\(fields)", isStandardOutput: false)
    }
}
