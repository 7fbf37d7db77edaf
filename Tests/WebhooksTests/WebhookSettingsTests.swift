import ShowroomWire
import Webhooks
import XCTest

/// Settings validation: what is accepted, and INVALID_ARGUMENT naming what is wrong otherwise.
final class WebhookSettingsTests: XCTestCase {
    func testHTTPAndHTTPSURLsWithAHostAreAccepted() throws {
        let urls = ["http://127.0.0.1:8080/events", "https://example.com/showroom?key=1", "HTTPS://Example.com"]
        let settings = try WebhookSettings(urls: urls, secret: "s")
        XCTAssertEqual(settings.urls, urls)
        XCTAssertEqual(settings.maxAttempts, 20)
        XCTAssertEqual(settings.queueLimit, 10_000)
        XCTAssertNoThrow(try WebhookSettings(urls: [], secret: ""), "no URL: webhooks off")
    }

    func testInvalidSettingsAreRefusedWithInvalidArgument() {
        let cases: [(make: () throws(ShowroomError) -> WebhookSettings, mentions: String)] = [
            ({ () throws(ShowroomError) in try WebhookSettings(urls: ["ftp://example.com/x"], secret: "") }, "scheme 'ftp'"),
            ({ () throws(ShowroomError) in try WebhookSettings(urls: ["http://"], secret: "") }, "no host"),
            ({ () throws(ShowroomError) in try WebhookSettings(urls: ["example.com/events"], secret: "") }, "example.com/events"),
            ({ () throws(ShowroomError) in try WebhookSettings(urls: [""], secret: "") }, "not a URL"),
            ({ () throws(ShowroomError) in try WebhookSettings(urls: ["http://a/x", "http://a/x"], secret: "") }, "twice"),
            ({ () throws(ShowroomError) in try WebhookSettings(urls: [], secret: "", requestTimeout: .zero) }, "request timeout"),
            (
                { () throws(ShowroomError) in
                    try WebhookSettings(urls: [], secret: "", initialBackoff: .seconds(2), maxBackoff: .seconds(1))
                },
                "maximum backoff"
            ),
            ({ () throws(ShowroomError) in try WebhookSettings(urls: [], secret: "", maxAttempts: 0) }, "maximum attempts"),
            ({ () throws(ShowroomError) in try WebhookSettings(urls: [], secret: "", queueLimit: -1) }, "queue limit"),
        ]
        for (make, mentions) in cases {
            do {
                let settings = try make()
                XCTFail("accepted \(settings)")
            } catch {
                XCTAssertEqual(error.code, .invalidArgument, error.message)
                XCTAssertEqual(error.code.rawValue, 1007)
                XCTAssertTrue(error.message.contains(mentions), error.message)
            }
        }
    }
}
