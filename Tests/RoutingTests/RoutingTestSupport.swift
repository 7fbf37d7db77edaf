import ShowroomWire
import XCTest

/// Runs `body`, which must throw a ShowroomError with `code`; returns the error for further checks.
@discardableResult
func assertThrows<T>(
    _ code: WireErrorCode, _ body: () throws(ShowroomError) -> T, file: StaticString = #filePath, line: UInt = #line
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
