import Foundation
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// Co-hosting and PK on real processes with real media: the coordinator seats a viewer, the edge
/// lets it publish and cuts it off when the seat ends; two rooms' audiences see both hosts of a PK.
final class CoHostAndPKTests: SharedClusterTestCase {
    /// Collects a room's events.
    final class RoomEvents: Sendable {
        final class Seen: Sendable {
            let events = Mutex<[RoomEvent]>([])
        }
        let seen = Seen()
        let reader: Task<Void, Never>

        init(_ rooms: RoomService, _ roomID: String) {
            let seen = self.seen
            reader = Task { for await event in rooms.events(for: roomID) { seen.events.withLock { $0.append(event) } } }
        }

        func interactions() -> [InteractionEvent] {
            seen.events.withLock { $0.compactMap { if case .interaction(let event) = $0 { event } else { nil } } }
        }

        /// Waits until the subscription is live: audience members join the room until a change is
        /// seen (the subscription reaches the coordinators in the background).
        func ready(_ rooms: RoomService, _ roomID: String) async throws {
            var uid: UInt32 = 90_000
            try await eventually("room \(roomID)'s events are seen") {
                uid += 1
                _ = try await rooms.joinRoom(roomID, uid: uid)
                return seen.events.withLock { $0.contains { if case .userCountChanged = $0 { true } else { false } } }
            }
        }

        func wait(_ kind: InteractionEvent.Kind) async throws -> InteractionEvent {
            var found: InteractionEvent?
            try await eventually("room event \(kind)") {
                found = interactions().first { $0.kind == kind }
                return found != nil
            }
            return found!
        }
    }

    func testAViewerSeatedByTheHostPublishesAndIsCutOffAtOnceWhenTheSeatEnds() async throws {
        let channel = "cohost-\(UInt32.random(in: 1...999_999))"
        let host = try await TestClient.join(channel, uid: 1, role: .broadcaster, camera: true)
        let rooms = RoomService(seeds: [SharedCluster.seed], loop: host.engine.loop)
        _ = try await rooms.createRoom(name: "co-host show", ownerUid: 1, roomID: channel)
        let events = RoomEvents(rooms, channel)
        defer { events.reader.cancel() }
        try await events.ready(rooms, channel)
        let watcherSink = CountingVideoSink()
        let watcher = try await TestClient.join(channel, uid: 7, role: .audience, videoFrom: 5, videoSink: watcherSink)
        // Viewer 5 holds a subscriber token only; viewer 6 a publisher token but no seat.
        let viewer = try await TestClient.join(channel, uid: 5, role: .audience, camera: true)
        let intruder = try await TestClient.join(channel, uid: 6, role: .audience, camera: true, tokenRole: .publisher)
        defer { Task { for client in [host, watcher, viewer, intruder] { await client.stop() } } }

        await assertFails(.notOnStage, "a publisher token without a seat") {
            try await intruder.engine.setClientRole(.broadcaster, connection: intruder.connection)
        }
        await assertFails(.notOnStage, "a subscriber token before its seat") {
            try await viewer.engine.setClientRole(.broadcaster, connection: viewer.connection)
        }

        let viewerToken = try TestApp.token(channel: channel, uid: 5, role: .subscriber)
        let hostToken = try TestApp.token(channel: channel, uid: 1)
        await assertFails(.interactionNotAllowed, "applying before joining the room") {
            try await rooms.applyForCoHosting(roomID: channel, uid: 5, token: viewerToken)
        }
        _ = try await rooms.joinRoom(channel, uid: 5)
        let application = try await rooms.applyForCoHosting(roomID: channel, uid: 5, token: viewerToken, userName: "five")
        await assertFails(.interactionNotAllowed, "a viewer seating itself") {
            try await rooms.answerCoHostRequest(roomID: channel, uid: 5, token: viewerToken, requestID: application.id, accept: true)
        }
        let seated = try await rooms.answerCoHostRequest(roomID: channel, uid: 1, token: hostToken, requestID: application.id, accept: true)
        guard case .coHosting(let seats) = seated.interaction, let seat = seats.first else { return XCTFail("\(seated.interaction)") }
        XCTAssertEqual(seat.uid, 5)
        _ = try await events.wait(.coHostStarted)

        // The seat reaches the edge at once: the subscriber token now broadcasts, and is seen.
        // (Going on stage as the seeds do: broadcaster, publishing camera and microphone.)
        var onStage = ChannelMediaOptions.broadcaster
        onStage.publishAudio = true
        onStage.publishVideo = true
        try await eventually("the seat lets viewer 5 broadcast") {
            (try? await viewer.engine.updateChannelEx(options: onStage, connection: viewer.connection)) != nil
        }
        try await eventually("the audience decodes the co-host") { watcherSink.statistics.frames > 0 }

        // The host ends the seat; viewer 5's client keeps sending, nothing of it reaches anyone.
        _ = try await rooms.stopCoHosting(roomID: channel, uid: 1, token: hostToken, seatID: seat.id)
        _ = try await watcher.log.wait("the audience sees the co-host become audience") {
            if case .userOffline(_, 5, .becameAudience) = $0 { true } else { false }
        }
        _ = try await viewer.log.wait("the co-host is told it is off stage") {
            if case .error(_, let error) = $0 { error.code == .notOnStage } else { false }
        }
        let framesAtCut = watcherSink.statistics.frames
        let sentAtCut = await viewer.engine.statistics().videoFramesSent
        try await eventually("viewer 5 keeps sending") { await viewer.engine.statistics().videoFramesSent >= sentAtCut + 10 }
        XCTAssertEqual(watcherSink.statistics.frames, framesAtCut, "no frame of the revoked co-host is forwarded")
        let stopped = try await events.wait(.coHostStopped)
        XCTAssertEqual(stopped.reason, .stopped)
        await rooms.shutdown()
    }

    func testAPKLetsEachAudienceSeeBothHostsAndStopEndsItInBothRooms() async throws {
        let suffix = UInt32.random(in: 1...999_999)
        let (a, b) = ("pka-\(suffix)", "pkb-\(suffix)")
        let hostA = try await TestClient.join(a, uid: 1, role: .broadcaster, camera: true)
        let hostB = try await TestClient.join(b, uid: 2, role: .broadcaster, camera: true)
        let rooms = RoomService(seeds: [SharedCluster.seed], loop: hostA.engine.loop)
        _ = try await rooms.createRoom(name: "A", ownerUid: 1, roomID: a)
        _ = try await rooms.createRoom(name: "B", ownerUid: 2, roomID: b)
        let eventsA = RoomEvents(rooms, a)
        let eventsB = RoomEvents(rooms, b)
        defer {
            eventsA.reader.cancel()
            eventsB.reader.cancel()
        }
        try await eventsA.ready(rooms, a)
        try await eventsB.ready(rooms, b)
        // An audience member of A sees its own host.
        let ownSink = CountingVideoSink()
        let viewer = try await TestClient.join(a, uid: 10, role: .audience, videoFrom: 1, videoSink: ownSink)
        defer { Task { for client in [hostA, hostB, viewer] { await client.stop() } } }

        let tokenA = try TestApp.token(channel: a, uid: 1)
        let tokenB = try TestApp.token(channel: b, uid: 2)
        let invitation = try await rooms.invitePK(roomID: a, uid: 1, token: tokenA, peerRoomID: b, mediaMode: .subscribe)
        let invited = try await eventsB.wait(.pkInvited)
        XCTAssertEqual(invited.request?.id, invitation.id, "room B hears the invitation")
        await assertFails(.requestPending, "a second invitation from A") {
            try await rooms.invitePK(roomID: a, uid: 1, token: tokenA, peerRoomID: "nowhere-\(suffix)")
        }
        let accepted = try await rooms.acceptPK(roomID: b, uid: 2, token: tokenB, invitationID: invitation.id)
        guard case .pk(let pk) = accepted.interaction else { return XCTFail("\(accepted.interaction)") }
        XCTAssertEqual(pk.peerRoomID, a)

        // Room A's audience follows the room's PK: the room layer joins the peer's channel for it
        // (its sink for host B is set first).
        let peerSink = CountingVideoSink()
        try await viewer.engine.setupRemoteVideo(uid: 2, connection: ChannelConnection(channel: b, uid: 10), sink: peerSink)
        let following = rooms.followPK(roomID: a, engine: viewer.engine, uid: 10) { channel in
            try TestApp.token(channel: channel, uid: 10, role: .subscriber)
        }
        defer { following.cancel() }
        let started = try await eventsA.wait(.pkStarted)
        guard case .pk(let seen) = started.room.interaction else { return XCTFail("\(started.room.interaction)") }
        XCTAssertEqual(seen.peerUid, 2)
        try await eventually("A's audience decodes host B") { peerSink.statistics.frames > 0 && ownSink.statistics.frames > 0 }

        await assertFails(.interactionNotFound, "a stale stop") {
            try await rooms.stopPK(roomID: a, uid: 1, token: tokenA, pkID: "pk-stale")
        }
        _ = try await rooms.stopPK(roomID: a, uid: 1, token: tokenA, pkID: pk.id)
        let endedInB = try await eventsB.wait(.pkEnded)
        XCTAssertEqual(endedInB.reason, .stopped)
        XCTAssertEqual(endedInB.byUid, 1)
        let endedInA = try await eventsA.wait(.pkEnded)
        XCTAssertEqual(endedInA.reason, .stopped)
        let afterStop = try await rooms.room(b)
        XCTAssertEqual(afterStop.interaction, .idle)
        try await eventually("the room layer leaves B's channel when the PK ends") { viewer.engine.view.connections.count == 1 }
        await rooms.shutdown()
    }

    func testAForwardedPKShowsThePeerHostInEachRoomsOwnChannelAndStopTakesItAway() async throws {
        let suffix = UInt32.random(in: 1...999_999)
        let (a, b) = ("fwa-\(suffix)", "fwb-\(suffix)")
        let hostA = try await TestClient.join(a, uid: 1, role: .broadcaster, camera: true)
        let hostB = try await TestClient.join(b, uid: 2, role: .broadcaster, camera: true)
        let rooms = RoomService(seeds: [SharedCluster.seed], loop: hostA.engine.loop)
        _ = try await rooms.createRoom(name: "A", ownerUid: 1, roomID: a)
        _ = try await rooms.createRoom(name: "B", ownerUid: 2, roomID: b)
        // Each audience has one connection, to its own room's channel, with a sink for the peer host.
        let peerInA = CountingVideoSink()
        let peerInB = CountingVideoSink()
        let viewerA = try await TestClient.join(a, uid: 10, role: .audience, videoFrom: 2, videoSink: peerInA)
        let viewerB = try await TestClient.join(b, uid: 20, role: .audience, videoFrom: 1, videoSink: peerInB)
        defer { Task { for client in [hostA, hostB, viewerA, viewerB] { await client.stop() } } }

        let tokenA = try TestApp.token(channel: a, uid: 1)
        let tokenB = try TestApp.token(channel: b, uid: 2)
        let invitation = try await rooms.invitePK(roomID: a, uid: 1, token: tokenA, peerRoomID: b)
        XCTAssertEqual(invitation.mediaMode, .forward)
        let accepted = try await rooms.acceptPK(roomID: b, uid: 2, token: tokenB, invitationID: invitation.id)
        guard case .pk(let pk) = accepted.interaction else { return XCTFail("\(accepted.interaction)") }
        try await eventually("each audience decodes the peer host in its own channel") {
            peerInA.statistics.frames > 0 && peerInB.statistics.frames > 0
        }
        let connections = viewerA.engine.view.connections.count
        XCTAssertEqual(connections, 1, "no extra connection")

        _ = try await rooms.stopPK(roomID: b, uid: 2, token: tokenB, pkID: pk.id)
        _ = try await viewerA.log.wait("A's audience sees host B go offline") {
            if case .userOffline(_, 2, .forwardStopped) = $0 { true } else { false }
        }
        _ = try await viewerB.log.wait("B's audience sees host A go offline") {
            if case .userOffline(_, 1, .forwardStopped) = $0 { true } else { false }
        }
        await rooms.shutdown()
    }
}
