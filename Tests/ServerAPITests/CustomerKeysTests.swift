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

    func testAHeaderLetInBeforeIsRecognisedByItsWholeBytes() throws {
        let keys = try keys()
        let right = basic("biz", "s3cret-s3cret")
        XCTAssertEqual(try keys.authenticate(authorization: right).get().id, "biz")
        XCTAssertTrue(keys.keeps(right, for: "biz"), "a header that let its key in is kept")
        XCTAssertEqual(try keys.authenticate(authorization: right).get().id, "biz")
        // A wrong secret of the same length, after the right one was kept, is refused, and the
        // kept one still lets the key in.
        let sameLength = basic("biz", "s3cret-s3creX")
        XCTAssertEqual(sameLength.utf8.count, right.utf8.count)
        XCTAssertEqual(keys.authenticate(authorization: sameLength), .failure(.badCredentials))
        XCTAssertEqual(keys.authenticate(authorization: basic("biz", "s3cret-s3cre")), .failure(.badCredentials))
        XCTAssertEqual(keys.authenticate(authorization: basic("biz", "s3cret-s3cret!")), .failure(.badCredentials))
        XCTAssertEqual(try keys.authenticate(authorization: right).get().id, "biz")
        // Another spelling of the same credentials is checked in full and lets the key in too.
        let spaced = "basic   " + right.dropFirst("Basic ".count)
        XCTAssertEqual(try keys.authenticate(authorization: spaced).get().id, "biz")
        XCTAssertEqual(try keys.authenticate(authorization: right).get().id, "biz")
        // Refusals are not kept.
        XCTAssertFalse(keys.keeps(sameLength, for: "biz"))
        XCTAssertFalse(keys.keeps(basic("nobody", "s3cret-s3cret"), for: "nobody"))
    }

    func testANewConfigurationRefusesAnOldSecretOrARemovedKeyAtOnce() throws {
        let right = basic("biz", "s3cret-s3cret")
        let before = try keys()
        XCTAssertEqual(try before.authenticate(authorization: right).get().id, "biz")
        XCTAssertEqual(try before.authenticate(authorization: right).get().id, "biz")
        // The secret changed: the header that was kept is refused by the first request.
        let changed = try CustomerKeys([
            CustomerKey(id: "biz", secretSHA256: CustomerKey.hash(secret: "new-secret-new-1"), scopes: [.read, .rooms]),
        ])
        XCTAssertEqual(changed.authenticate(authorization: right), .failure(.badCredentials))
        XCTAssertEqual(try changed.authenticate(authorization: basic("biz", "new-secret-new-1")).get().id, "biz")
        // The key was removed.
        let removed = try CustomerKeys([
            CustomerKey(id: "reader", secretSHA256: CustomerKey.hash(secret: "other-secret"), scopes: [.read]),
        ])
        XCTAssertEqual(removed.authenticate(authorization: right), .failure(.badCredentials))
        // A scope taken away is seen at once too: the key comes from the configuration, not the kept header.
        let narrower = try CustomerKeys([CustomerKey(id: "biz", secretSHA256: CustomerKey.hash(secret: "s3cret-s3cret"), scopes: [.read])])
        XCTAssertEqual(try narrower.authenticate(authorization: right).get().scopes, [.read])
    }

    func testTheUserNameIsReadOnlyFromAPlainBasicHeader() {
        XCTAssertEqual(CustomerKeys.basicUserID(basic("biz", "s3cret")), "biz")
        XCTAssertEqual(CustomerKeys.basicUserID(basic("a-B_9", "x:y")), "a-B_9")
        XCTAssertEqual(CustomerKeys.basicUserID("bAsIc  " + Data("k:s".utf8).base64EncodedString()), "k")
        XCTAssertEqual(CustomerKeys.basicUserID(basic(String(repeating: "i", count: 64), "s")), String(repeating: "i", count: 64))
        for hostile in [
            "", "Basic", "Basic ", "Bearer " + Data("k:s".utf8).base64EncodedString(),
            "Basic" + Data("k:s".utf8).base64EncodedString(),
            basic("", "s"), basic("no colon", "s"), basic("bad id", "s"), basic("é", "s"),
            basic(String(repeating: "i", count: 65), "s"),
            "Basic " + Data("nocolon".utf8).base64EncodedString(),
            "Basic %%%", "Basic " + String(repeating: "A", count: 1000),
        ] {
            XCTAssertNil(CustomerKeys.basicUserID(hostile), hostile)
        }
    }

    func testTheKeptHeadersAreBounded() {
        let kept = VerifiedHeaders()
        for i in 0..<(VerifiedHeaders.capacity + 10) { kept.keep("header \(i)", for: "id\(i)") }
        XCTAssertEqual(kept.count, VerifiedHeaders.capacity)
        XCTAssertFalse(kept.holds("header \(VerifiedHeaders.capacity)", for: "id\(VerifiedHeaders.capacity)"))
        // A key already kept still has its newest header kept.
        kept.keep("newer", for: "id0")
        XCTAssertTrue(kept.holds("newer", for: "id0"))
        XCTAssertFalse(kept.holds("header 0", for: "id0"))
        XCTAssertEqual(kept.count, VerifiedHeaders.capacity)
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
