import Edge
import ShowroomWire
import XCTest

/// A draining edge tells its clients to move and waits for its viewers, not its broadcasters or
/// edge-to-edge links.
final class DrainingTests: XCTestCase {
    private let host = SessionID(1)
    private let viewer = SessionID(2)
    private let link = SessionID(3)
    private let coHost = SessionID(4)

    private func drainingTargets(_ directives: [EdgeDirective]) -> [SessionID] {
        directives.compactMap { if case .send(.draining(let within), let to) = $0, within == .seconds(5) { to } else { nil } }
    }

    func testEveryClientSessionIsToldAndTheLinksAreNot() {
        var edge = TestEdge()
        edge.open(host)
        edge.join(host, "show", uid: 1, as: .broadcaster)
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        edge.open(link, client: RelayLinkIdentity.clientIDPrefix + "abc")
        edge.join(link, "show", uid: RelayLinkIdentity.firstUID + 1, as: .audience)
        edge.open(SessionID(5))  // a session with no channel yet (a preload): told too
        XCTAssertEqual(drainingTargets(edge.plane.drainingNotices(within: .seconds(5))), [host, viewer, SessionID(5)])
    }

    func testTheEdgeWaitsForEveryClientUntilItLeftOrMovedOutButNotForLinks() {
        var edge = TestEdge()
        edge.open(link, client: RelayLinkIdentity.clientIDPrefix + "abc")
        edge.join(link, "show", uid: RelayLinkIdentity.firstUID + 1, as: .audience)
        edge.open(SessionID(5))  // a preloaded session, no channel
        XCTAssertFalse(edge.plane.awaitsMovingClients, "a relay link and an empty session: nobody to wait for")
        edge.open(host)
        edge.join(host, "show", uid: 1, as: .broadcaster)
        edge.open(viewer)
        edge.join(viewer, "show", uid: 9, as: .audience)
        XCTAssertTrue(edge.plane.awaitsMovingClients)
        _ = edge.run(edge.plane.leave(viewer, channel: "show", now: edge.now))
        XCTAssertTrue(edge.plane.awaitsMovingClients, "the host has not said it publishes elsewhere")
        edge.plane.movedOut(host)
        XCTAssertFalse(edge.plane.awaitsMovingClients, "the viewer left and the host moved out (it stays joined)")
        XCTAssertEqual(edge.plane.channel("show")?.broadcasters, [1])
        edge.plane.movedOut(SessionID(99))  // unknown: nothing
    }

    func testABorrowedLinkPrefixIsNotWaitedFor() {
        // A client posing as a relay link is not told and not waited for: it is closed at the end.
        var edge = TestEdge()
        edge.open(viewer, client: RelayLinkIdentity.clientIDPrefix + "sneaky")
        edge.join(viewer, "show", uid: 9, as: .audience)
        XCTAssertEqual(drainingTargets(edge.plane.drainingNotices(within: .seconds(5))), [])
        XCTAssertFalse(edge.plane.awaitsMovingClients)
    }
}
