import Foundation
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// An edge dies: the coordinator places its channels again and the SDK's clients rejoin there on
/// their own, decoding video again.
final class EdgeFailoverTests: XCTestCase {
    func testKilledEdgesChannelsArePlacedAgainAndItsAudienceDecodesAgain() async throws {
        let cluster = try TestCluster(coordinators: 1, edges: 3)
        defer { cluster.down() }
        let seed = try cluster.endpoint("coordinator-1")
        let loop = try EngineLoop(name: "failover-test")
        let channels = (0..<4).map { "failover-\($0)-\(UInt32.random(in: 0 ... .max))" }
        var engines: [ShowroomEngine] = []
        var pictures: [String: [PictureTimes]] = [:]
        for (c, channel) in channels.enumerated() {
            let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])), loop: loop)
            await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            try await host.joinChannel(token: try TestApp.token(channel: channel, uid: 1), channel: channel, uid: 1,
                                       options: .broadcaster)
            engines.append(host)
            for v in 0..<3 {
                let uid = UInt32(100 + 10 * c + v)
                let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])), loop: loop)
                let times = PictureTimes()
                try await engine.setupRemoteVideo(uid: 1, connection: ChannelConnection(channel: channel, uid: uid),
                                                  sink: DecodingVideoSink(readFrameCounters: false) { _ in times.record() })
                try await engine.joinChannel(token: try TestApp.token(channel: channel, uid: uid, role: .subscriber),
                                             channel: channel, uid: uid, options: .audience)
                engines.append(engine)
                pictures[channel, default: []].append(times)
            }
        }
        try await eventually("every viewer decodes video") {
            pictures.values.joined().allSatisfy { !$0.isEmpty }
        }
        // Where each channel is.
        var placement: [String: String] = [:]
        for channel in channels {
            var place = RoomPlaceChannelRequest()
            place.channel = channel
            place.uid = 1
            place.token = try TestApp.token(channel: channel, uid: 1)
            placement[channel] = try await request(.channelPlace, place, to: seed, expecting: RoomPlaceChannelResponse.self).edgeID
        }
        let victim = try XCTUnwrap(Dictionary(grouping: placement.keys, by: { placement[$0]! }).max { $0.value.count < $1.value.count }?.key)
        let moved = channels.filter { placement[$0] == victim }

        try cluster.kill(victim)
        let killedAt = ContinuousClock.now
        let after = killedAt + .milliseconds(50)
        try await eventually("the victim's audience decodes again", timeout: .seconds(15)) {
            moved.allSatisfy { channel in pictures[channel]!.allSatisfy { $0.first(after: after) != nil } }
        }
        let recovery = moved.flatMap { channel in
            pictures[channel]!.map { times in killedAt.duration(to: times.first(after: after)!) }
        }
        print("edge \(victim) killed: \(recovery.count) viewers of \(moved.count) channels decode again after max \(recovery.max()!) (p50 \(recovery.sorted()[recovery.count / 2]))")
        for channel in moved {
            var place = RoomPlaceChannelRequest()
            place.channel = channel
            place.uid = 1
            place.token = try TestApp.token(channel: channel, uid: 1)
            let now = try await request(.channelPlace, place, to: seed, expecting: RoomPlaceChannelResponse.self)
            XCTAssertNotEqual(now.edgeID, victim, "\(channel) placed again")
        }
        // Channels on the other edges never stopped: each viewer's next picture comes within a
        // frame or two (the victim's audience may have recovered faster than that).
        try await eventually("the other channels' audiences decode on", timeout: .seconds(1)) {
            channels.filter { !moved.contains($0) }.allSatisfy { channel in pictures[channel]!.allSatisfy { $0.first(after: after) != nil } }
        }
        for engine in engines { await engine.shutdown() }
        await loop.shutdown()
    }
}
