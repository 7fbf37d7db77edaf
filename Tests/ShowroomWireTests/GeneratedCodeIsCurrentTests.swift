import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fails when `Sources/ShowroomWire/Generated/` is not what `proto/generate.sh` produces from the
/// current `.proto` files (someone edited a `.proto` without regenerating, or edited generated code).
final class GeneratedCodeIsCurrentTests: XCTestCase {
    /// The first run builds protoc-gen-swift in release mode (about two minutes on two cores).
    private static let deadline: TimeInterval = 10 * 60

    /// The package root: this file is `<root>/Tests/ShowroomWireTests/<file>.swift`.
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    func testCommittedGeneratedCodeMatchesProtoFiles() throws {
        let root = Self.packageRoot
        let script = root.appendingPathComponent("proto/generate.sh")
        let committed = root.appendingPathComponent("Sources/ShowroomWire/Generated")
        let fm = FileManager.default
        XCTAssertTrue(fm.isExecutableFile(atPath: script.path), "\(script.path) is missing or not executable")

        let scratch = fm.temporaryDirectory.appendingPathComponent("showroom-generated-\(UUID().uuidString)")
        let fresh = scratch.appendingPathComponent("Generated")
        try fm.createDirectory(at: fresh, withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: scratch) }

        let log = scratch.appendingPathComponent("generate.log")
        let status = try Self.run(script, arguments: ["--out", fresh.path], log: log)
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? "<no output>"
        switch status {
        case .timedOut:
            return XCTFail("proto/generate.sh did not finish within \(Int(Self.deadline))s and was killed. Output:\n\(output)")
        case .exited(let code) where code != 0:
            return XCTFail("proto/generate.sh --out \(fresh.path) failed with status \(code). Output:\n\(output)")
        case .signaled(let signal):
            return XCTFail("proto/generate.sh was killed by signal \(signal). Output:\n\(output)")
        case .exited:
            break
        }

        let expected = try Self.files(under: fresh)
        let actual = try Self.files(under: committed)
        XCTAssertFalse(expected.isEmpty, "proto/generate.sh produced no files. Output:\n\(output)")

        let missing = expected.subtracting(actual).sorted()
        let stale = actual.subtracting(expected).sorted()
        let changed = try expected.intersection(actual).sorted().filter { path in
            let a = try Data(contentsOf: fresh.appendingPathComponent(path))
            let b = try Data(contentsOf: committed.appendingPathComponent(path))
            return a != b
        }
        guard missing.isEmpty, stale.isEmpty, changed.isEmpty else {
            var report = ["Sources/ShowroomWire/Generated/ is not current with proto/:"]
            report += changed.map { "  differs from generate.sh output: \($0)" }
            report += missing.map { "  missing (generate.sh produces it): \($0)" }
            report += stale.map { "  stale (generate.sh does not produce it; delete it): \($0)" }
            report.append(
                "Fix: run `proto/generate.sh` (in \(root.path)) and commit the .proto files and "
                    + "Sources/ShowroomWire/Generated/ together; never edit generated files by hand.")
            return XCTFail(report.joined(separator: "\n"))
        }
    }

    // MARK: - Helpers

    private enum Status {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
    }

    /// Runs `executable` with stdout and stderr going to `log`, killing it (and its children)
    /// if it runs longer than ``deadline``.
    private static func run(_ executable: URL, arguments: [String], log: URL) throws -> Status {
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: log.path])
        }
        let logHandle = try FileHandle(forWritingTo: log)
        defer { try? logHandle.close() }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = logHandle
        process.standardError = logHandle
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()

        if finished.wait(timeout: .now() + deadline) == .timedOut {
            // Foundation starts the child in its own process group: signal the whole group so the
            // swift build started by the script goes too. SIGTERM first lets SwiftPM clean up.
            let pid = process.processIdentifier
            let target = getpgid(pid) == pid ? -pid : pid
            kill(target, SIGTERM)
            if finished.wait(timeout: .now() + 10) == .timedOut {
                kill(target, SIGKILL)
                finished.wait()
            }
            return .timedOut
        }
        switch process.terminationReason {
        case .exit: return .exited(process.terminationStatus)
        case .uncaughtSignal: return .signaled(process.terminationStatus)
        @unknown default: return .exited(process.terminationStatus)
        }
    }

    /// Paths of all regular files under `directory`, relative to it, hidden ones (.DS_Store) aside.
    private static func files(under directory: URL) throws -> Set<String> {
        let fm = FileManager.default
        let base = directory.standardizedFileURL.resolvingSymlinksInPath().path
        guard let enumerator = fm.enumerator(atPath: base) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: base])
        }
        var result: Set<String> = []
        for case let relative as String in enumerator
        where !(relative as NSString).lastPathComponent.hasPrefix(".") {
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: base + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                result.insert(relative)
            }
        }
        return result
    }
}
