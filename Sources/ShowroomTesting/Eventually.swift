import Foundation
import ShowroomWire

#if canImport(XCTest)
import XCTest
#endif

/// Waits until `condition` holds, up to `timeout`. A condition that throws counts as not yet (a
/// member still restarting, a request refused while the cluster settles); the last error is named
/// when the time is up. For what the product reports as a stream (an engine's events), await the
/// stream instead (``EventLog``); this is for state that can only be looked at. It looks at once,
/// then after 5 ms, doubling the pause up to 100 ms.
public func eventually(_ what: String, timeout: Duration = .seconds(15),
                       _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    var lastError: (any Error)?
    var pause = Duration.milliseconds(5)
    while true {
        do {
            if try await condition() { return }
        } catch {
            lastError = error
        }
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { break }
        try await Task.sleep(for: min(pause, left))
        pause = min(pause * 2, .milliseconds(100))
    }
    throw ShowroomError.deadlineExceeded("\(what) did not happen within \(timeout)\(lastError.map { "; last error: \($0)" } ?? "")")
}

/// The root of this package's checkout (where `Package.swift` is), for tests that read its files.
public let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

#if canImport(XCTest)
/// Asserts that `body` fails with `code` and a message a person can act on.
public func assertFails<T>(_ code: ShowroomError.Code, _ what: String, file: StaticString = #filePath, line: UInt = #line,
                           _ body: () async throws -> T) async {
    do {
        _ = try await body()
        XCTFail("\(what): expected \(code), got success", file: file, line: line)
    } catch let error as ShowroomError {
        XCTAssertEqual(error.code, code, "\(what): \(error)", file: file, line: line)
        XCTAssertFalse(error.message.isEmpty, "\(what): the error has no message", file: file, line: line)
    } catch {
        XCTFail("\(what): expected \(code), got \(error)", file: file, line: line)
    }
}

/// Runs `body`, which must throw a ShowroomError with `code` and a message a person can act on;
/// returns the error for further checks.
@discardableResult
public func assertThrows<T>(
    _ code: ShowroomError.Code, _ body: () throws(ShowroomError) -> T, file: StaticString = #filePath, line: UInt = #line
) -> ShowroomError? {
    do {
        let value = try body()
        XCTFail("expected \(code), got \(value)", file: file, line: line)
        return nil
    } catch {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
        XCTAssertFalse(error.message.isEmpty, "an error needs a message a person can act on", file: file, line: line)
        return error
    }
}
#endif
