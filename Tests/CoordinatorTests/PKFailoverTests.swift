import Foundation
import Routing
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import XCTest

/// The coordinator owning a room in a forwarded PK is SIGKILLed: its successor serves the room,
/// the audience never stops seeing the peer host, and the PK stops normally.
final class PKFailoverTests: XCTestCase {
    func testAPKOutlivesTheCoordinatorOwningOneOfItsRooms() async throws {
        let cluster = try TestCluster(coordinators: 2, edges: 2)
        defer { cluster.down() }
        let seeds = try ["coordinator-1", "coordinator-2"].map { try cluster.endpoint($0) }
        let ring = OwnerRing(.coordinator, memberIDs: ["coordinator-1", "coordinator-2"])
        let suffix = UInt32.random(in: 1...999_999)
        let a = (0..<1000).lazy.map { "pkf-a\($0)-\(suffix)" }.first { ring.owner(of: $0) == "coordinator-1" }!
        let b = (0..<1000).lazy.map { "pkf-b\($0)-\(suffix)" }.first { ring.owner(of: $0) == "coordinator-2" }!

        let loop = try EngineLoop(name: "pk-failover")
        var engines: [ShowroomEngine] = []
        for (room, uid) in [(a, UInt32(1)), (b, UInt32(2))] {
            let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop)
            await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            try await host.joinChannel(token: try TestApp.token(channel: room, uid: uid), channel: room, uid: uid, options: .broadcaster)
            engines.append(host)
        }
        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop)
        engines.append(viewer)
        let peerPictures = PictureTimes()
        try await viewer.setupRemoteVideo(uid: 2, connection: ChannelConnection(channel: a, uid: 10),
                                          sink: DecodingVideoSink(readFrameCounters: false) { _ in peerPictures.record() })
        try await viewer.joinChannel(token: try TestApp.token(channel: a, uid: 10, role: .subscriber), channel: a, uid: 10,
                                     options: .audience)
        let log = EventLog(viewer)

        let rooms = RoomService(seeds: seeds, loop: loop)
        _ = try await rooms.createRoom(name: "A", ownerUid: 1, roomID: a)
        _ = try await rooms.createRoom(name: "B", ownerUid: 2, roomID: b)
        let invitation = try await rooms.invitePK(roomID: a, uid: 1, token: try TestApp.token(channel: a, uid: 1), peerRoomID: b)
        let accepted = try await rooms.acceptPK(roomID: b, uid: 2, token: try TestApp.token(channel: b, uid: 2),
                                                invitationID: invitation.id)
        guard case .pk(let pk) = accepted.interaction else { return XCTFail("\(accepted.interaction)") }
        try await eventually("A's audience decodes host B in A's channel") { !peerPictures.isEmpty }

        let killedAt = ContinuousClock.now
        try cluster.kill("coordinator-1")
        // The successor serves room A, still in the PK.
        try await eventually("coordinator-2 serves room A in its PK", timeout: .seconds(20)) {
            let room = try await rooms.room(a)
            guard case .pk(let held) = room.interaction else { return false }
            return held.id == pk.id
        }
        // Three more seconds of the peer host, measured from the kill, with no gap of a second.
        try await eventually("three seconds of pictures after the kill", timeout: .seconds(20)) {
            peerPictures.count(after: killedAt + .seconds(3)) > 0
        }
        let gap = peerPictures.longestGap(after: killedAt)
        XCTAssertLessThan(gap, .seconds(1), "the audience never stopped seeing the peer host (longest gap \(gap))")

        _ = try await rooms.stopPK(roomID: a, uid: 1, token: try TestApp.token(channel: a, uid: 1), pkID: pk.id)
        _ = try await log.wait("A's audience sees host B go offline when the PK stops") {
            if case .userOffline(_, 2, .forwardStopped) = $0 { true } else { false }
        }
        // The end reaches room B's owner as a delivery of its own, which the stop does not wait for.
        try await eventually("room B is idle again") { try await rooms.room(b).interaction == .idle }
        await rooms.shutdown()
        for engine in engines { await engine.shutdown() }
    }
}
