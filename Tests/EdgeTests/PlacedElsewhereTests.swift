import Edge
import ShowroomWire
import XCTest

/// A channel its owner coordinator placed on another edge (two sides of a partition each placed
/// it): the connections here are closed with CHANNEL_ELSEWHERE naming that edge, and the
/// coordinator's answer is checked before anything is closed.
final class PlacedElsewhereTests: XCTestCase {
    private let placedOn = WireRedirect.with {
        $0.edgeID = "edge-2"
        $0.clientEndpoint = "tcp://127.0.0.1:7001"
    }

    func testEveryConnectionOfTheChannelIsSentToThePlacedEdgeAndOthersStay() {
        var edge = TestEdge()
        for session in [host, viewer1, guest] { edge.open(session) }
        XCTAssertNil(edge.join(host, "show", uid: 100, as: .broadcaster).failure)
        XCTAssertNil(edge.join(viewer1, "show", uid: 1, as: .audience).failure)
        XCTAssertNil(edge.join(guest, "other", uid: 5, as: .broadcaster).failure)
        edge.activities = []
        edge.now = .seconds(3)

        let out = edge.run(edge.plane.sendElsewhere(
            [ChannelPlacedElsewhere(channel: "show", placedOn: placedOn), ChannelPlacedElsewhere(channel: "gone", placedOn: placedOn)],
            now: edge.now))
        for session in [host, viewer1] {
            guard case .connectionClosed("show", let reason) = out.events(to: session).last else {
                return XCTFail("\(out.events(to: session))")
            }
            XCTAssertEqual(reason.code, .channelElsewhere)
            XCTAssertEqual(reason.redirect, placedOn, "the client joins the placed edge without asking again")
            XCTAssertNil(edge.plane.connection(session, channel: "show"))
        }
        XCTAssertNil(edge.plane.channel("show"), "nobody is left in the channel here")
        XCTAssertEqual(edge.activities, [
            ChannelActivity(.broadcasterLeft, channel: "show", uid: 100, reason: .server, at: .seconds(3)),
            ChannelActivity(.audienceLeft, channel: "show", uid: 1, reason: .server, at: .seconds(3)),
            ChannelActivity(.channelDestroyed, channel: "show", at: .seconds(3)),
        ])
        XCTAssertEqual(out.events(to: guest), [], "another channel's connections are not touched")
        XCTAssertNotNil(edge.plane.connection(guest, channel: "other"))
    }

    func testAHostileAnswerIsRefusedWhole() {
        let good = RoomChannelElsewhere.with {
            $0.channel = "show"
            $0.placedOn = placedOn
        }
        XCTAssertEqual(try EdgeCodec.elsewhere([good]), [ChannelPlacedElsewhere(channel: "show", placedOn: placedOn)])
        var badName = good
        badName.channel = String(repeating: "x", count: 65)
        var noEndpoint = good
        noEndpoint.placedOn.clientEndpoint = ""
        var badKey = good
        badKey.placedOn.clientCurvePublicKey = "short"
        var longID = good
        longID.placedOn.edgeID = String(repeating: "e", count: 65)
        for hostile in [[good, badName], [noEndpoint], [badKey], [longID],
                        Array(repeating: good, count: EdgeCodec.maxChannelsElsewhere + 1)] {
            XCTAssertThrowsError(try EdgeCodec.elsewhere(hostile)) {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
            }
        }
    }
}
