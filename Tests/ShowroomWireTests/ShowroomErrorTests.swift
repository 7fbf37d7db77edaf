import ShowroomWire
import SwiftProtobuf
import XCTest

final class ShowroomErrorTests: XCTestCase {
    func testStaticConstructorsUseTheGeneralCodes() {
        let cases: [(ShowroomError, WireErrorCode, Int, String)] = [
            (.malformed("m"), .malformedMessage, 1000, "malformed message"),
            (.unknownKind("m"), .unknownKind, 1001, "unknown message kind"),
            (.deadlineExceeded("m"), .deadlineExceeded, 1002, "deadline exceeded"),
            (.unavailable("m"), .unavailable, 1003, "unavailable"),
            (.internal("m"), .internal, 1004, "internal error"),
            (.tooLarge("m"), .tooLarge, 1005, "too large"),
            (.unsupportedVersion("m"), .unsupportedVersion, 1006, "unsupported version"),
            (.invalidArgument("m"), .invalidArgument, 1007, "invalid argument"),
        ]
        for (error, code, number, summary) in cases {
            XCTAssertEqual(error.code, code)
            XCTAssertEqual(error.code.rawValue, number)
            XCTAssertEqual(error.message, "m")
            XCTAssertEqual(error.description, "E\(number) \(summary): m")
        }
    }

    func testDescription() {
        XCTAssertEqual(
            ShowroomError.malformed("frame 0 is not an Envelope").description,
            "E1000 malformed message: frame 0 is not an Envelope")
        XCTAssertEqual(ShowroomError(.tooLarge, "").description, "E1005 too large")
        XCTAssertEqual(ShowroomError(.unspecified, "?").description, "E0 unspecified error: ?")
        XCTAssertEqual("\(ShowroomError.internal("boom"))", "E1004 internal error: boom")
    }

    func testWireConversionRoundTrips() throws {
        let error = ShowroomError.invalidArgument("deadline_ms must be at most 60000, got 90000")
        let wire = error.wire
        XCTAssertEqual(wire.code, .invalidArgument)
        XCTAssertEqual(wire.message, error.message)
        XCTAssertEqual(ShowroomError(wire: wire), error)

        let bytes: [UInt8] = try wire.serializedBytes()
        XCTAssertEqual(ShowroomError(wire: try WireError(serializedBytes: bytes)), error)
    }

    func testHashableAndThrowable() {
        let set: Set<ShowroomError> = [.internal("a"), .internal("a"), .internal("b"), .unavailable("a")]
        XCTAssertEqual(set.count, 3)

        func fail() throws(ShowroomError) { throw .deadlineExceeded("no answer from coordinator-1 within 2000 ms") }
        XCTAssertThrowsError(try fail()) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .deadlineExceeded)
        }
    }
}
