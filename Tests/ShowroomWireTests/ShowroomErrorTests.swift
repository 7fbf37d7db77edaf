import ShowroomWire
import SwiftProtobuf
import XCTest

final class ShowroomErrorTests: XCTestCase {
    func testStaticConstructorsUseTheGeneralCodes() {
        let cases: [(ShowroomError, ShowroomError.Code, Int, String)] = [
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

    func testEveryWireCodeHasTheSameCodeByNumberAndName() {
        for wire in WireErrorCode.allCases {
            let code = ShowroomError.Code(wire: wire)
            XCTAssertEqual(code.rawValue, wire.rawValue, "\(wire)")
            XCTAssertEqual("\(code)", "\(wire)", "the SDK names code \(wire.rawValue) as the wire does")
            XCTAssertEqual(code.wire, wire)
            XCTAssertFalse(code.summary.isEmpty)
        }
        // And nothing else: every code but the stand-in for unknown ones is on the wire.
        XCTAssertEqual(ShowroomError.Code.allCases.count, WireErrorCode.allCases.count + 1)
        XCTAssertEqual(ShowroomError.Code.channelElsewhere.rawValue, 3017)
    }

    func testUnknownCodesKeepTheirNumber() throws {
        var wire = WireError()
        wire.code = .UNRECOGNIZED(6001)
        wire.message = "from a newer node"
        let error = ShowroomError(wire: wire)
        XCTAssertEqual(error.code, .unrecognized)
        XCTAssertEqual(error.number, 6001)
        XCTAssertEqual(error.description, "E6001 unrecognized error: from a newer node")
        XCTAssertEqual(error.wire, wire, "passed on unchanged")
        XCTAssertNotEqual(error, ShowroomError(wire: { var other = wire; other.code = .UNRECOGNIZED(6002); return other }()))
    }

    func testRedirectTravelsWithChannelElsewhere() throws {
        var redirect = WireRedirect()
        redirect.edgeID = "edge-2"
        redirect.clientEndpoint = "tcp://127.0.0.1:7002"
        let error = ShowroomError.channelElsewhere("channel room-1 is on edge-2", redirect: redirect)
        let bytes: [UInt8] = try error.wire.serializedBytes()
        let received = ShowroomError(wire: try WireError(serializedBytes: bytes))
        XCTAssertEqual(received, error)
        XCTAssertEqual(received.code, .channelElsewhere)
        XCTAssertEqual(received.redirect?.edgeID, "edge-2")
        XCTAssertNil(ShowroomError.unavailable("x").wire.hasRedirect ? "redirect" : nil)
    }
}
