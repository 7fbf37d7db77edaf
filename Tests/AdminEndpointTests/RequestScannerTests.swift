import XCTest

@testable import AdminEndpoint

final class RequestScannerTests: XCTestCase {
    private func scanner(uri: Int = 64, header: Int = 256, body: Int = 16) -> RequestScanner {
        RequestScanner(maxURIBytes: uri, maxHeaderBytes: header, maxBodyBytes: body)
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testACompleteRequestPassesWhole() {
        var scanner = scanner()
        let request = bytes("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let outcome = scanner.scan(request)
        XCTAssertEqual(outcome, .init(accepted: request.count, completed: 1, rejection: nil))
        XCTAssertFalse(scanner.isMidRequest)
    }

    func testARequestSplitIntoSingleBytesIsFollowed() {
        var scanner = scanner()
        let request = bytes("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n")
        var completed = 0
        for (index, byte) in request.enumerated() {
            let outcome = scanner.scan([byte])
            XCTAssertNil(outcome.rejection)
            XCTAssertEqual(outcome.accepted, 1)
            completed += outcome.completed
            if index < request.count - 1 { XCTAssertTrue(scanner.isMidRequest, "byte \(index)") }
        }
        XCTAssertEqual(completed, 1)
        XCTAssertFalse(scanner.isMidRequest)
    }

    func testPipelinedRequestsWithSmallBodiesAreCountedApart() {
        var scanner = scanner()
        let requests = bytes(
            "POST /metrics HTTP/1.1\r\ncontent-LENGTH: 5\r\n\r\nhelloGET /status HTTP/1.1\n\nGET /healthz HTTP/1.1\r\n")
        let outcome = scanner.scan(requests)
        XCTAssertEqual(outcome, .init(accepted: requests.count, completed: 2, rejection: nil))
        XCTAssertTrue(scanner.isMidRequest, "the third has not ended")
    }

    func testABodyLongerThanTheChunkIsSkippedAcrossChunks() {
        var scanner = scanner()
        XCTAssertEqual(scanner.scan(bytes("PUT /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n1234")).completed, 0)
        XCTAssertTrue(scanner.isMidRequest)
        XCTAssertEqual(scanner.scan(bytes("567890GET / HTTP/1.1\r\n\r\n")).completed, 2)
        XCTAssertFalse(scanner.isMidRequest)
    }

    func testALongTargetIs414AtTheFirstByteOverTheLimit() {
        var scanner = scanner(uri: 8)
        let first = bytes("GET /ok HTTP/1.1\r\n\r\n")
        let outcome = scanner.scan(first + bytes("GET /123456789 HTTP/1.1\r\n\r\n"))
        XCTAssertEqual(outcome.rejection, .uriTooLong(limit: 8))
        XCTAssertEqual(outcome.accepted, first.count, "the request before it passes")
        XCTAssertEqual(outcome.completed, 1)
        XCTAssertEqual(scanner.scan(bytes("more")).rejection, .uriTooLong(limit: 8), "refused for good")
        XCTAssertEqual(scanner.scan(bytes("more")).accepted, 0)

        var exact = self.scanner(uri: 8)
        XCTAssertNil(exact.scan(bytes("GET /1234567 HTTP/1.1\r\n\r\n")).rejection, "8 bytes is within the limit")
    }

    func testAHugeHeaderIsRefusedAtTheLimitWhateverFollows() {
        var scanner = scanner(header: 256)
        let head = bytes("GET /healthz HTTP/1.1\r\nX-Big: ")
        XCTAssertNil(scanner.scan(head).rejection)
        let outcome = scanner.scan([UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20))
        XCTAssertEqual(outcome.rejection, .headerTooLarge(limit: 256))
        XCTAssertEqual(outcome.accepted, 0, "the request began in an earlier chunk")
        XCTAssertEqual(RequestScanner.Rejection.headerTooLarge(limit: 256).status, 431)
    }

    func testManyHeaderLinesCountTowardsTheHeadLimit() {
        var scanner = scanner(header: 256)
        var request = "GET / HTTP/1.1\r\n"
        for index in 0..<40 { request += "X-\(index): 1\r\n" }
        XCTAssertEqual(scanner.scan(bytes(request + "\r\n")).rejection, .headerTooLarge(limit: 256))
    }

    func testEndlessEmptyLinesBeforeARequestAreBounded() {
        var scanner = scanner(header: 256)
        let outcome = scanner.scan([UInt8](repeating: UInt8(ascii: "\n"), count: 10_000))
        XCTAssertEqual(outcome.rejection, .headerTooLarge(limit: 256))
    }

    func testBodiesOverTheLimitOrChunkedAre413() {
        for (request, expected) in [
            ("POST /x HTTP/1.1\r\nContent-Length: 17\r\n\r\n", RequestScanner.Rejection.bodyTooLarge(limit: 16)),
            ("POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n", .bodyTooLarge(limit: 16)),
            ("POST /x HTTP/1.1\r\nContent-Length: \(String(repeating: "9", count: 80))\r\n\r\n", .bodyTooLarge(limit: 16)),
            ("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", .bodyTooLarge(limit: 16)),
            ("POST /x HTTP/1.1\r\nContent-Length: ten\r\n\r\n", .malformed("Content-Length is not a number")),
            ("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", .malformed("Content-Length is not a number")),
            ("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
             .malformed("conflicting Content-Length headers")),
        ] {
            var scanner = scanner()
            XCTAssertEqual(scanner.scan(bytes(request)).rejection, expected, request)
        }
        var within = scanner()
        XCTAssertEqual(within.scan(bytes("POST /x HTTP/1.1\r\nContent-Length:  16 \r\n\r\n")).completed, 0)
        XCTAssertEqual(within.scan([UInt8](repeating: 0, count: 16)).completed, 1)
    }

    func testMalformedRequestLinesAre400() {
        for request in [" GET / HTTP/1.1\r\n", "GET\r\n", "GET /\r\n", String(repeating: "G", count: 40) + " / HTTP/1.1\r\n"] {
            var scanner = scanner()
            let rejection = scanner.scan(bytes(request)).rejection
            XCTAssertEqual(rejection?.status, 400, request)
        }
    }

    func testRejectionResponsesAreCompleteHTTP() {
        let response = String(decoding: RequestScanner.Rejection.uriTooLong(limit: 4096).response, as: UTF8.self)
        XCTAssertTrue(response.hasPrefix("HTTP/1.1 414 URI Too Long\r\n"), response)
        XCTAssertTrue(response.contains("Connection: close\r\n"), response)
        let parts = response.components(separatedBy: "\r\n\r\n")
        XCTAssertEqual(parts.count, 2)
        XCTAssertTrue(parts[0].contains("Content-Length: \(parts[1].utf8.count)\r\n"), response)
        XCTAssertTrue(parts[1].contains("4096 bytes"), parts[1])
    }
}
