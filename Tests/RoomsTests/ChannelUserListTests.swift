import Rooms
import ShowroomWire
import XCTest

/// The edges' answers of who is in a channel, merged as the server API shows them.
final class ChannelUserListTests: XCTestCase {
    private func user(_ uid: UInt32, host: Bool = false, at ms: Int64, on edge: String) -> RoomChannelUser {
        RoomChannelUser.with { $0.uid = uid; $0.broadcaster = host; $0.joinedAtMs = ms; $0.edge = edge }
    }

    private func answer(_ users: [RoomChannelUser], audience: UInt32? = nil) -> RoomChannelUsersResponse {
        RoomChannelUsersResponse.with {
            $0.exists = !users.isEmpty || (audience ?? 0) > 0
            $0.users = users
            $0.audienceTotal = audience ?? UInt32(users.count { !$0.broadcaster })
        }
    }

    func testHostsFirstThenAudienceByJoinTimeAndAUserOnTwoEdgesOnce() {
        let origin = answer([user(1, host: true, at: 50, on: "e1"), user(7, at: 10, on: "e1"), user(9, at: 30, on: "e1")])
        // A relay's viewers; uid 9 is moving over (on both edges), uid 7 turned host there.
        let relay = answer([user(8, at: 20, on: "e2"), user(9, at: 40, on: "e2"), user(7, host: true, at: 60, on: "e2")])
        let merged = ChannelUserList.merged([origin, relay], unanswered: ["e3"])
        XCTAssertTrue(merged.exists)
        XCTAssertEqual(merged.users.map(\.uid), [7, 1, 8, 9], "hosts by join time, then the audience by join time")
        XCTAssertEqual(merged.users.map(\.broadcaster), [true, true, false, false])
        XCTAssertEqual(merged.users.first { $0.uid == 9 }?.edge, "e1", "the earliest join is kept")
        XCTAssertEqual(merged.audienceTotal, 2, "8 and 9; 9 counted once, 7 is a host")
        XCTAssertEqual(merged.unansweredEdges, ["e3"])
    }

    func testTheAudienceListStopsAtTenThousandAndTheCountGoesOn() {
        let big = answer((0..<10_001).map { user(UInt32(100 + $0), at: Int64($0), on: "e1") }, audience: 25_000)
        let merged = ChannelUserList.merged([big], unanswered: [])
        XCTAssertEqual(merged.users.count, ChannelUserList.maxAudienceListed)
        XCTAssertEqual(merged.audienceTotal, 25_000)
    }

    func testNobodyAnywhereAndHostileCounts() {
        XCTAssertFalse(ChannelUserList.merged([], unanswered: []).exists)
        // Counts near the top do not trap.
        let merged = ChannelUserList.merged([answer([], audience: .max), answer([], audience: .max)], unanswered: [])
        XCTAssertGreaterThan(merged.audienceTotal, 0)
    }
}
