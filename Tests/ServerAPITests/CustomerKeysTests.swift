import Foundation
@testable import ServerAPI
import ShowroomWire
import XCTest

/// Customer keys and request rates as plain values: what lets a request in, and what a
/// configuration may hold.
final class CustomerKeysTests: XCTestCase {
    private func basic(_ id: String, _ secret: String) -> String {
        "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
    }

    private func keys() throws -> CustomerKeys {
        try CustomerKeys([
            CustomerKey(id: "biz", secretSHA256: CustomerKey.hash(secret: "s3cret-s3cret"), scopes: [.read, .rooms]),
            CustomerKey(id: "reader", secretSHA256: CustomerKey.hash(secret: "other-secret"), scopes: [.read]),
        ])
    }

    func testTheRightSecretLetsTheKeyIn() throws {
        let key = try keys().authenticate(authorization: basic("biz", "s3cret-s3cret")).get()
        XCTAssertEqual(key.id, "biz")
        XCTAssertEqual(key.scopes, [.read, .rooms])
        // A secret may hold a colon: only the first one separates the id.
        let colon = try CustomerKeys([CustomerKey(id: "c", secretSHA256: CustomerKey.hash(secret: "a:b:c"), scopes: [.read])])
        XCTAssertEqual(try colon.authenticate(authorization: basic("c", "a:b:c")).get().id, "c")
    }

    func testWrongOrMissingCredentialsAreRefused() throws {
        let keys = try keys()
        XCTAssertEqual(keys.authenticate(authorization: nil), .failure(.noCredentials))
        XCTAssertEqual(keys.authenticate(authorization: "Bearer abc"), .failure(.noCredentials))
        XCTAssertEqual(keys.authenticate(authorization: "Basic %%%not-base64"), .failure(.noCredentials))
        XCTAssertEqual(keys.authenticate(authorization: "Basic " + Data("no-colon".utf8).base64EncodedString()), .failure(.noCredentials))
        XCTAssertEqual(keys.authenticate(authorization: "Basic " + String(repeating: "A", count: 5000)), .failure(.noCredentials))
        XCTAssertEqual(keys.authenticate(authorization: basic("biz", "wrong")), .failure(.badCredentials))
        XCTAssertEqual(keys.authenticate(authorization: basic("nobody", "s3cret-s3cret")), .failure(.badCredentials))
        // Another key's secret does not open this one.
        XCTAssertEqual(keys.authenticate(authorization: basic("biz", "other-secret")), .failure(.badCredentials))
    }

    func testAConfigurationEntryIsCheckedFieldByField() throws {
        let hash = Hex.encode(CustomerKey.hash(secret: "s3cret-s3cret"))
        let good = try CustomerKey(configuration: ["id": "biz", "secretSHA256": hash, "scopes": ["read", "calls"]])
        XCTAssertEqual(good.scopes, [.read, .calls])
        XCTAssertNil(good.rate)
        let limited = try CustomerKey(configuration: ["id": "l", "secretSHA256": hash, "scopes": ["read"], "requestsPerSecond": 2, "burst": 3])
        XCTAssertEqual(limited.rate?.perSecond, 2)
        XCTAssertEqual(limited.rate?.burst, 3)
        let hostile: [Any] = [
            "not an object",
            ["secretSHA256": hash, "scopes": ["read"]],
            ["id": "", "secretSHA256": hash, "scopes": ["read"]],
            ["id": String(repeating: "x", count: 65), "secretSHA256": hash, "scopes": ["read"]],
            ["id": "bad id", "secretSHA256": hash, "scopes": ["read"]],
            ["id": "k", "secretSHA256": "abc", "scopes": ["read"]],
            ["id": "k", "secretSHA256": String(repeating: "g", count: 64), "scopes": ["read"]],
            ["id": "k", "secretSHA256": hash, "scopes": []],
            ["id": "k", "secretSHA256": hash, "scopes": ["admin"]],
            ["id": "k", "secretSHA256": hash, "scopes": "read"],
            ["id": "k", "secretSHA256": hash, "scopes": ["read"], "secret": "plain"],
            ["id": "k", "secretSHA256": hash, "scopes": ["read"], "requestsPerSecond": 5],
            ["id": "k", "secretSHA256": hash, "scopes": ["read"], "requestsPerSecond": 0, "burst": 1],
            ["id": "k", "secretSHA256": hash, "scopes": ["read"], "requestsPerSecond": 1, "burst": 0],
        ]
        for entry in hostile {
            XCTAssertThrowsError(try CustomerKey(configuration: entry), "\(entry)") { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, "\(entry)")
                XCTAssertFalse((error as? ShowroomError)?.message.isEmpty ?? true)
            }
        }
        let twice = try CustomerKey(configuration: ["id": "k", "secretSHA256": hash, "scopes": ["read"]])
        XCTAssertThrowsError(try CustomerKeys([twice, twice]))
    }

    func testTheRateTakesABurstThenRefillsAtItsPace() {
        var rate = RequestRate(perSecond: 10, burst: 5)
        for _ in 0..<5 { XCTAssertNil(rate.take("a", nowMs: 1_000)) }
        XCTAssertEqual(rate.take("a", nowMs: 1_000), 1, "the sixth at once waits")
        // Another key has its own bucket.
        XCTAssertNil(rate.take("b", nowMs: 1_000))
        // 100 ms refill one request at 10 a second.
        XCTAssertNil(rate.take("a", nowMs: 1_100))
        XCTAssertNotNil(rate.take("a", nowMs: 1_100))
        // A clock that goes back refills nothing; a long pause refills the burst only.
        XCTAssertNotNil(rate.take("a", nowMs: 0))
        for _ in 0..<5 { XCTAssertNil(rate.take("a", nowMs: 1_000_000)) }
        XCTAssertNotNil(rate.take("a", nowMs: 1_000_000))
        // A slow key's own rate: one every 10 s, told to wait that long.
        XCTAssertNil(rate.take("slow", rate: RequestRate.Limit(perSecond: 0.1, burst: 1), nowMs: 0))
        XCTAssertEqual(rate.take("slow", rate: RequestRate.Limit(perSecond: 0.1, burst: 1), nowMs: 0), 10)
        // Hostile times do not trap.
        XCTAssertNil(rate.take("edge", nowMs: .max))
        _ = rate.take("edge", nowMs: .min)
    }

    func testEveryErrorCodeHasAStatus() {
        for code in ShowroomError.Code.allCases {
            let status = APIGuard.status(of: ShowroomError(code, "x")).code
            XCTAssertTrue((400...599).contains(status), "\(code) → \(status)")
        }
        XCTAssertEqual(APIGuard.status(of: .invalidArgument("x")).code, 400)
        XCTAssertEqual(APIGuard.status(of: ShowroomError(.roomNotFound, "x")).code, 404)
        XCTAssertEqual(APIGuard.status(of: ShowroomError(.roomExists, "x")).code, 409)
        XCTAssertEqual(APIGuard.status(of: ShowroomError(.rateLimited, "x")).code, 429)
        XCTAssertEqual(APIGuard.status(of: .unavailable("x")).code, 503)
    }
}
