import Edge
import Foundation
@testable import EdgeServer
import ShowroomWire
import XCTest

/// What the owner coordinator's answer to a channel claim (`CHANNEL_CLAIM`) is taken to mean
/// (``ClaimOutcome``), whatever it sends; what each outcome means for the held joins is
/// ``ChannelClaims``' (EdgeTests).
final class ClaimAnswerTests: XCTestCase {
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
