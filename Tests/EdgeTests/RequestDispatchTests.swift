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
}
