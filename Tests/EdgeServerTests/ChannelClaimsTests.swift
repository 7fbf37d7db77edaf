import Edge
import Foundation
@testable import EdgeServer
import ShowroomWire
import XCTest

/// The joins an edge holds while it asks for a channel (`CHANNEL_CLAIM`), with plain values and a
/// fake clock; and what each answer of the coordinator means for them.
final class ChannelClaimsTests: XCTestCase {
    private func join(_ channel: String, session: UInt64, request: UInt64 = 1) -> ChannelClaims.HeldJoin {
        ChannelClaims.HeldJoin(
            session: SessionID(session), requestID: request,
            request: .join(channel: channel, uid: UInt32(session), token: "t", role: .audience, options: .defaults(for: .audience)),
            channel: channel)
    }

    func testSeveralJoinsShareOneClaimAndAreReleasedTogetherInOrder() {
        var claims = ChannelClaims(timeout: .seconds(5))
        XCTAssertEqual(claims.hold(join("show", session: 1), now: .zero), .claim)
        XCTAssertEqual(claims.hold(join("show", session: 2), now: .milliseconds(10)), .waiting)
        XCTAssertEqual(claims.hold(join("show", session: 3), now: .milliseconds(20)), .waiting)
        XCTAssertEqual(claims.hold(join("other", session: 4), now: .milliseconds(20)), .claim, "another channel: its own claim")
        XCTAssertTrue(claims.isPending("show"))
        XCTAssertEqual(claims.heldJoins, 4)
        XCTAssertEqual(claims.resolve("show").map(\.session), [SessionID(1), SessionID(2), SessionID(3)])
        XCTAssertFalse(claims.isPending("show"))
        XCTAssertTrue(claims.resolve("show").isEmpty, "a late second answer releases nothing")
        XCTAssertEqual(claims.heldJoins, 1)
        // The next join after the answer claims again (the channel may have emptied meanwhile).
        XCTAssertEqual(claims.hold(join("show", session: 5), now: .seconds(1)), .claim)
    }

    func testUnansweredClaimsExpireAndTheHoldIsBounded() {
        var claims = ChannelClaims(timeout: .seconds(5), maxHeldJoins: 3)
        XCTAssertEqual(claims.hold(join("a", session: 1), now: .zero), .claim)
        XCTAssertEqual(claims.hold(join("b", session: 2), now: .seconds(2)), .claim)
        XCTAssertEqual(claims.hold(join("a", session: 3), now: .seconds(3)), .waiting)
        XCTAssertEqual(claims.hold(join("c", session: 4), now: .seconds(3)), .full, "beyond the bound: refused")
        XCTAssertTrue(claims.expire(now: .milliseconds(4999)).isEmpty)
        XCTAssertEqual(claims.expire(now: .seconds(5)).map(\.session), [SessionID(1), SessionID(3)], "a's claim is 5 s old")
        XCTAssertEqual(claims.expire(now: .seconds(7)).map(\.session), [SessionID(2)])
        XCTAssertEqual(claims.heldJoins, 0)
    }

    func testAnswersOfTheCoordinator() throws {
        func answer(_ body: RoomClaimChannelResponse) throws -> Result<WireEnvelope, ShowroomError> {
            var request = WireEnvelope()
            request.kind = .channelClaim
            request.requestID = 7
            return .success(try WireEnvelope(responseTo: request, body: body))
        }
        var granted = RoomClaimChannelResponse()
        granted.granted = true
        XCTAssertEqual(CoordinatorLink.outcome(of: try answer(granted), channel: "show", coordinator: "c1"), .placed)

        // Granted as a relay of an origin: hosted here, pulled from there.
        var relayed = granted
        relayed.relayOfEdgeID = "edge-1"
        relayed.relayOfEndpoint = "tcp://127.0.0.1:7001"
        relayed.relayOfCurvePublicKey = "key"
        XCTAssertEqual(CoordinatorLink.outcome(of: try answer(relayed), channel: "show", coordinator: "c1"),
                       .relay(RelayOrigin(id: "edge-1", endpoint: "tcp://127.0.0.1:7001", curvePublicKey: "key")))
        // A relay grant naming no endpoint has nothing to pull from: an ordinary grant.
        relayed.relayOfEndpoint = ""
        XCTAssertEqual(CoordinatorLink.outcome(of: try answer(relayed), channel: "show", coordinator: "c1"), .placed)

        var elsewhere = RoomClaimChannelResponse()
        elsewhere.edgeID = "edge-2"
        elsewhere.clientEndpoint = "tcp://127.0.0.1:7002"
        guard case .refuse(let error) = CoordinatorLink.outcome(of: try answer(elsewhere), channel: "show", coordinator: "c1") else {
            return XCTFail("a channel placed elsewhere is refused")
        }
        XCTAssertEqual(error.code, .channelElsewhere)
        XCTAssertEqual(error.redirect?.edgeID, "edge-2")
        XCTAssertEqual(error.redirect?.clientEndpoint, "tcp://127.0.0.1:7002")
        XCTAssertTrue(error.message.contains("edge-2"))

        // No endpoint to send the client to, a timeout, an unreadable answer: unavailable, never admitted.
        var nowhere = RoomClaimChannelResponse()
        nowhere.edgeID = "edge-2"
        guard case .refuse(let unreachable) = CoordinatorLink.outcome(of: try answer(nowhere), channel: "show", coordinator: "c1"),
              case .refuse(let timedOut) = CoordinatorLink.outcome(
                  of: .failure(.deadlineExceeded("no answer")), channel: "show", coordinator: "c1")
        else { return XCTFail("refused") }
        XCTAssertEqual(unreachable.code, .unavailable)
        XCTAssertEqual(timedOut.code, .unavailable)
        XCTAssertTrue(timedOut.message.contains("c1"))
        var garbage = WireEnvelope()
        garbage.kind = .channelClaim
        garbage.body = Data([0xff, 0xff, 0xff])
        guard case .refuse(let unreadable) = CoordinatorLink.outcome(of: .success(garbage), channel: "show", coordinator: "c1") else {
            return XCTFail("an unreadable answer is refused")
        }
        XCTAssertEqual(unreadable.code, .unavailable)
        // A refusal (a bad name) passes through with its code.
        var request = WireEnvelope()
        request.kind = .channelClaim
        let refused = WireEnvelope(responseTo: request, error: .invalidArgument("channel name is too long"))
        XCTAssertEqual(CoordinatorLink.outcome(of: .success(refused), channel: "x", coordinator: "c1"),
                       .refuse(.invalidArgument("channel name is too long")))
    }
}
