import Foundation
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import XCTest

/// The demo's sequence that lost two live shows, on real processes: a viewer calls host A (the
/// call's channel on A's edge, sealed by a kick at its end), then rooms A and B start and stop a
/// forwarded PK within a second, three times. Each PK's end reaches the destination edges as a
/// stage change and as the forward links' own leaves, in either order. Both shows must go on for
/// their viewers, and neither host may be refused or reconnect.
final class CallThenPKTests: XCTestCase {
    func testAfterACallAndQuickPKsBothShowsPlayForTheirViewers() async throws {
        let cluster = try TestCluster(coordinators: 1, callsignals: 1, edges: 2)
        defer { cluster.down() }
        let seeds = [try cluster.clientEndpoint(of: "coordinator-1")]
        let suffix = UInt32.random(in: 1...999_999)
        let a = "cpk-a-\(suffix)", b = "cpk-b-\(suffix)"
        let loop = try EngineLoop(name: "call-then-pk")
        var engines: [ShowroomEngine] = []

        var hostLogs: [EventLog] = []
        var lives: [ChannelConnection] = []
        for (room, uid) in [(a, UInt32(1001)), (b, UInt32(1002))] {
            let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop)
            engines.append(host)
            hostLogs.append(EventLog(host))
            await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            lives.append(try await host.joinChannel(token: try TestApp.token(channel: room, uid: uid), channel: room, uid: uid,
                                                    options: .broadcaster))
        }
        var pictures: [PictureTimes] = []
        var viewers: [ShowroomEngine] = []
        for (room, host, uid) in [(a, UInt32(1001), UInt32(2011)), (b, UInt32(1002), UInt32(2021))] {
            let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loop)
            engines.append(viewer)
            viewers.append(viewer)
            await viewer.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            let times = PictureTimes()
            pictures.append(times)
            try await viewer.setupRemoteVideo(uid: host, connection: ChannelConnection(channel: room, uid: uid),
                                              sink: DecodingVideoSink(readFrameCounters: false) { _ in times.record() })
            try await viewer.joinChannel(token: try TestApp.token(channel: room, uid: uid, role: .subscriber), channel: room, uid: uid,
                                         options: .audience)
        }
        try await eventually("both viewers decode their hosts") { pictures.allSatisfy { !$0.isEmpty } }

        let rooms = RoomService(seeds: seeds, loop: loop)
        _ = try await rooms.createRoom(name: "A", ownerUid: 1001, roomID: a)
        _ = try await rooms.createRoom(name: "B", ownerUid: 1002, roomID: b)

        // A's viewer calls host A, they talk, the viewer hangs up.
        let parties = try await ShowCallParties.start(host: 1001, engines[0], viewer: 2011, viewers[0], seeds: seeds, live: lives[0])
        defer { parties.stop() }
        try await parties.viewerCalls.call(remoteUserId: 1001)
        try await parties.hostLog.wait("the host connected") { if case .connected = $0 { true } else { false } }
        try await parties.viewerCalls.hangup(remoteUserId: 1001, reason: "bye")
        try await parties.hostLog.wait("the host's call ended") { if case .disconnected = $0 { true } else { false } }
        let hungUp = ContinuousClock.now
        try await eventually("A's viewer decodes host A again after the call") { pictures[0].count(after: hungUp) > 0 }

        // Three PKs, each stopped as soon as it started.
        for _ in 0..<3 {
            let invitation = try await rooms.invitePK(roomID: a, uid: 1001, token: try TestApp.token(channel: a, uid: 1001), peerRoomID: b)
            let accepted = try await rooms.acceptPK(roomID: b, uid: 1002, token: try TestApp.token(channel: b, uid: 1002),
                                                    invitationID: invitation.id)
            guard case .pk(let pk) = accepted.interaction else { return XCTFail("not in a PK: \(accepted.interaction)") }
            _ = try await rooms.stopPK(roomID: a, uid: 1001, token: try TestApp.token(channel: a, uid: 1001), pkID: pk.id)
            try await eventually("both rooms idle again") {
                let roomA = try await rooms.room(a), roomB = try await rooms.room(b)
                return roomA.interaction == .idle && roomB.interaction == .idle
            }
        }
        let stopped = ContinuousClock.now
        try await eventually("three seconds of both hosts after the last PK", timeout: .seconds(15)) {
            pictures.allSatisfy { $0.count(after: stopped + .seconds(3)) > 0 }
        }
        for (index, times) in pictures.enumerated() {
            let gap = times.longestGap(after: stopped)
            XCTAssertLessThan(gap, .seconds(1), "viewer \(index) kept seeing its host (longest gap \(gap))")
        }
        for (index, log) in hostLogs.enumerated() {
            let live = lives[index].channel
            let trouble = log.all.filter { event in
                switch event {
                case .error(let connection?, let error): connection.channel == live && error.code == .notJoined
                case .connectionStateChanged(let connection, .reconnecting, _), .connectionClosed(let connection, _): connection.channel == live
                default: false
                }
            }
            XCTAssertEqual(trouble, [], "host \(index + 1) was never refused nor reconnected on its live channel")
        }
        // The status view lists both live channels.
        try await eventually("the status view lists both live channels") {
            let status = try cluster.status(json: true)
            return status.contains("\"\(a)\"") && status.contains("\"\(b)\"")
        }
        await rooms.shutdown()
        await parties.hostCalls.close()
        await parties.viewerCalls.close()
        for engine in engines { await engine.shutdown() }
        await loop.shutdown()
    }
}
