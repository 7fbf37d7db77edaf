import Edge
import ShowroomWire
import XCTest

/// ``EdgeCodec/channelUsers(_:_:now:unixNowMs:)``: who of a channel's users a coordinator's
/// `CHANNEL_USERS` asks for, built from the plane's connections.
final class ChannelUsersAnswerTests: XCTestCase {
    /// A channel with host 1 (joined at 0 s) and viewers 2 and 3 (joined at 2 s); now is 5 s.
    private func show() -> TestEdge {
        var edge = TestEdge()
        edge.open(SessionID(1))
        edge.join(SessionID(1), "show", uid: 1, as: .broadcaster)
        edge.now = .seconds(2)
        for uid: UInt32 in [2, 3] {
            edge.open(SessionID(UInt64(uid)))
            edge.join(SessionID(UInt64(uid)), "show", uid: uid, as: .audience)
        }
        edge.now = .seconds(5)
        return edge
    }

    private func request(uid: UInt32 = 0, hostsOnly: Bool = false) -> RoomChannelUsersRequest {
        RoomChannelUsersRequest.with {
            $0.channel = "show"
            $0.uid = uid
            $0.hostsOnly = hostsOnly
        }
    }

    func testEveryUserIsListedWithTheirJoinOnTheWallClock() {
        let edge = show()
        let answer = EdgeCodec.channelUsers(edge.plane.users(in: "show"), request(), now: edge.now, unixNowMs: 1_000_000)
        XCTAssertTrue(answer.exists)
        XCTAssertEqual(answer.audienceTotal, 2)
        XCTAssertEqual(answer.users.map(\.uid), [1, 2, 3])
        XCTAssertEqual(answer.users.map(\.broadcaster), [true, false, false])
        XCTAssertEqual(answer.users.map(\.joinedAtMs), [995_000, 997_000, 997_000])
    }

    func testOneUidOrTheHostsOnlyAreListedButEveryViewerCounted() {
        let edge = show()
        let users = edge.plane.users(in: "show")
        let hosts = EdgeCodec.channelUsers(users, request(hostsOnly: true), now: edge.now, unixNowMs: 0)
        XCTAssertEqual(hosts.users.map(\.uid), [1])
        XCTAssertEqual(hosts.audienceTotal, 2, "counted, not listed")
        XCTAssertEqual(EdgeCodec.channelUsers(users, request(uid: 3), now: edge.now, unixNowMs: 0).users.map(\.uid), [3])
        XCTAssertEqual(EdgeCodec.channelUsers(users, request(uid: 3, hostsOnly: true), now: edge.now, unixNowMs: 0).users, [])
    }

    /// The request comes from another process: any uid, any clock.
    func testAnyRequestIsAnsweredWithoutTrapping() {
        let edge = show()
        let users = edge.plane.users(in: "show")
        XCTAssertEqual(EdgeCodec.channelUsers(users, request(uid: .max), now: edge.now, unixNowMs: .min).users, [])
        let early = EdgeCodec.channelUsers(users, request(uid: 2), now: .zero, unixNowMs: 7)
        XCTAssertEqual(early.users.map(\.joinedAtMs), [7], "a join after now is now")
        let none = EdgeCodec.channelUsers(edge.plane.users(in: "nowhere"), request(), now: edge.now, unixNowMs: 0)
        XCTAssertFalse(none.exists)
        XCTAssertEqual(none.audienceTotal, 0)
    }

    func testTheChannelIsCheckedBeforeThePlaneIsAsked() throws {
        let edge = show()
        let asked = try EdgeCodec.channelUsers(request(), in: edge.plane, now: edge.now, unixNowMs: 9)
        XCTAssertEqual(asked, EdgeCodec.channelUsers(edge.plane.users(in: "show"), request(), now: edge.now, unixNowMs: 9))
        for bad in ["", "sh\u{0}w", String(repeating: "c", count: 65)] {
            var hostile = request()
            hostile.channel = bad
            XCTAssertThrowsError(try EdgeCodec.channelUsers(hostile, in: edge.plane, now: edge.now, unixNowMs: 9)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, bad.debugDescription)
            }
        }
    }
}
