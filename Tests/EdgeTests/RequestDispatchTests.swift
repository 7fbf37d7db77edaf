import Edge
import ShowroomWire
import XCTest

/// The plane's one entry point for decoded requests: dispatch by kind, tokens verified through the
/// shell's verifier, replies that encode for the client.
final class RequestDispatchTests: XCTestCase {
    func testHandleDispatchesAndVerifiesTokensThroughTheShell() throws {
        var plane = ChannelPlane<TestFrame>()
        var verified: [(String, String, UInt32)] = []
        let verify: (String, String, UInt32) -> Result<ChannelGrant, ShowroomError> = { token, channel, uid in
            verified.append((token, channel, uid))
            return token == "good" ? .success(.publisher(channel: channel, uid: uid)) : .failure(ShowroomError(.unspecified, "bad token"))
        }
        _ = plane.handle(.openSession(clientID: "c", sdkVersion: "1"), from: host, requestID: 1, now: .zero, verifyToken: verify)
        let bad = plane.handle(.join(channel: "room", uid: 5, token: "bad", role: .broadcaster, options: .defaults(for: .broadcaster)),
                               from: host, requestID: 2, now: .zero, verifyToken: verify)
        XCTAssertEqual(bad.failure?.message, "bad token")
        let good = plane.handle(.join(channel: "room", uid: 5, token: "good", role: .broadcaster, options: .defaults(for: .broadcaster)),
                                from: host, requestID: 3, now: .zero, verifyToken: verify)
        XCTAssertEqual(good.replies.first?.body, .joined(channel: "room", uid: 5, connection: ConnectionID(1), role: .broadcaster))
        let renew = plane.handle(.renewToken(channel: "room", token: "good"), from: host, requestID: 4, now: .zero, verifyToken: verify)
        XCTAssertEqual(renew.replies.first?.body, .tokenRenewed(channel: "room"))
        XCTAssertEqual(verified.map(\.0), ["bad", "good", "good"])
        XCTAssertEqual(verified.last?.2, 5, "renewal is verified for the connection's uid")
        // Not joined: refused without asking the verifier.
        let stray = plane.handle(.renewToken(channel: "other", token: "good"), from: host, requestID: 5, now: .zero, verifyToken: verify)
        XCTAssertEqual(stray.failure?.code, .notJoined)
        XCTAssertEqual(verified.count, 3)
        // Replies encode to envelopes the client decodes.
        for case .reply(let reply, _) in good {
            XCTAssertEqual(try EdgeCodec.reply(from: try EdgeCodec.envelope(reply: reply)), reply)
        }
    }

    func testAPreloadedTokenIsCheckedOnceAndTheJoinThatFollowsTakesItsGrant() throws {
        var plane = ChannelPlane<TestFrame>()
        var verified = 0
        let verify: (String, String, UInt32) -> Result<ChannelGrant, ShowroomError> = { token, channel, uid in
            verified += 1
            return token.hasPrefix("good") ? .success(.subscriber(channel: channel, uid: uid)) : .failure(ShowroomError(.tokenBadSignature, "bad token"))
        }
        let early = plane.handle(.preload(channel: "room", uid: 5, token: "good"), from: host, requestID: 1, now: .zero, verifyToken: verify)
        XCTAssertEqual(early.failure?.code, .noSession, "no session, no preload")
        XCTAssertEqual(verified, 0)
        _ = plane.handle(.openSession(clientID: "c", sdkVersion: "1"), from: host, requestID: 2, now: .zero, verifyToken: verify)
        let preloaded = plane.handle(.preload(channel: "room", uid: 5, token: "good"), from: host, requestID: 3, now: .zero, verifyToken: verify)
        XCTAssertEqual(preloaded.replies.first?.body, .preloaded(channel: "room", kept: .seconds(30)))
        XCTAssertNil(plane.channel("room"), "nothing joined")
        XCTAssertEqual(verified, 1)
        let joined = plane.handle(.join(channel: "room", uid: 5, token: "good", role: .audience, options: .defaults(for: .audience)),
                                  from: host, requestID: 4, now: .seconds(1), verifyToken: verify)
        XCTAssertNil(joined.failure)
        XCTAssertEqual(verified, 1, "the join took the preloaded grant without a second check")
        XCTAssertEqual(plane.statistics.preloadedJoins, 1)
        _ = plane.handle(.leave(channel: "room"), from: host, requestID: 5, now: .seconds(1), verifyToken: verify)

        // Another token, a stale preload, or a bad token: checked at the join as always.
        _ = plane.handle(.preload(channel: "room", uid: 5, token: "good-1"), from: host, requestID: 6, now: .seconds(1), verifyToken: verify)
        _ = plane.handle(.join(channel: "room", uid: 5, token: "good-2", role: .audience, options: .defaults(for: .audience)),
                         from: host, requestID: 7, now: .seconds(2), verifyToken: verify)
        XCTAssertEqual(verified, 3)
        _ = plane.handle(.leave(channel: "room"), from: host, requestID: 8, now: .seconds(2), verifyToken: verify)
        _ = plane.handle(.join(channel: "room", uid: 5, token: "good-1", role: .audience, options: .defaults(for: .audience)),
                         from: host, requestID: 9, now: .seconds(40), verifyToken: verify)
        XCTAssertEqual(verified, 4, "a preload 39 s old is stale")
        let refused = plane.handle(.preload(channel: "other", uid: 5, token: "bad"), from: host, requestID: 10, now: .seconds(40), verifyToken: verify)
        XCTAssertEqual(refused.failure?.code, .tokenBadSignature)

        // At most 20 kept per session: the oldest goes.
        for n in 0..<21 {
            _ = plane.handle(.preload(channel: "c\(n)", uid: 5, token: "good"), from: host, requestID: 100 + UInt64(n), now: .seconds(41), verifyToken: verify)
        }
        let checked = verified
        _ = plane.handle(.join(channel: "c0", uid: 5, token: "good", role: .audience, options: .defaults(for: .audience)),
                         from: host, requestID: 200, now: .seconds(42), verifyToken: verify)
        XCTAssertEqual(verified, checked + 1, "the 21st preload pushed the first out")
        _ = plane.handle(.join(channel: "c20", uid: 5, token: "good", role: .audience, options: .defaults(for: .audience)),
                         from: host, requestID: 201, now: .seconds(42), verifyToken: verify)
        XCTAssertEqual(verified, checked + 1)
    }
}
