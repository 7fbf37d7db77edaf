import Webhooks
import XCTest

/// HMAC-SHA256 signatures: a published test vector, and verification that accepts only the
/// right secret and the right body.
final class WebhookSignatureTests: XCTestCase {
    func testSignMatchesTheRFC4231Vector() {
        // RFC 4231, test case 2.
        let signature = WebhookSignature.sign(body: Array("what do ya want for nothing?".utf8), secret: "Jefe")
        XCTAssertEqual(signature, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testVerifyAcceptsTheSecretAndRefusesAnotherSecretOrBody() {
        let body = Array(#"{"noticeId":"room-1-1"}"#.utf8)
        let signature = WebhookSignature.sign(body: body, secret: "s3cret")
        XCTAssertTrue(WebhookSignature.verify(body: body, secret: "s3cret", signature: signature))
        XCTAssertTrue(WebhookSignature.verify(body: body, secret: "s3cret", signature: signature.uppercased()))
        XCTAssertFalse(WebhookSignature.verify(body: body, secret: "other", signature: signature))
        XCTAssertFalse(WebhookSignature.verify(body: body + [0x20], secret: "s3cret", signature: signature))
        XCTAssertFalse(WebhookSignature.verify(body: body, secret: "s3cret", signature: String(signature.dropLast(2))))
        XCTAssertFalse(WebhookSignature.verify(body: body, secret: "s3cret", signature: "zz" + signature.dropFirst(2)))
        XCTAssertFalse(WebhookSignature.verify(body: body, secret: "s3cret", signature: ""))
    }
}
