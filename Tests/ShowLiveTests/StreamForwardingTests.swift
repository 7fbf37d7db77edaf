import Foundation
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import XCTest

/// Forwarding a host's stream into other channels (`startForwardStreamToRooms`), against real
/// processes: a coordinator and two edges, real VP8 decoded by the destinations' viewers.
final class StreamForwardingTests: SharedClusterTestCase {
    func testFourDestinationsOnThisAndTheOtherEdgeDecodeTheForwardedHost() async throws {
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        let host = try await TestClient.join("fwd-src-\(tag)", uid: 1, role: .broadcaster, camera: true)
        let destinations = try await destinationsSpread(from: host, count: 4, tag: tag)
        var viewers: [(TestClient, DecodingVideoSink)] = []
        for (i, channel) in destinations.enumerated() {
            let sink = DecodingVideoSink()
            viewers.append((try await TestClient.join(channel, uid: 100 + UInt32(i), role: .audience, videoFrom: 1, videoSink: sink), sink))
        }
        let started = try await host.engine.startForwardStream(to: destinations.map { try forwardTo($0) }, connection: host.connection)
        XCTAssertEqual(started.map(\.channel), destinations)
        for channel in destinations {
            try await host.log.wait("\(channel) running") { event in
                if case .forwardStateChanged(_, let d) = event { d.channel == channel && d.state == .running } else { false }
            }
        }
        try await eventually("every destination's viewer decodes the forwarded host", timeout: .seconds(15)) {
            viewers.allSatisfy { $0.1.statistics.framesDecoded >= 15 }
        }
        for (viewer, sink) in viewers {
            XCTAssertTrue(viewer.log.all.contains { if case .userJoined(_, 1) = $0 { true } else { false } }, "the forwarded host is an ordinary remote user")
            XCTAssertEqual(sink.statistics.decodeErrors, 0)
            XCTAssertEqual(sink.statistics.width, 160)
        }
        try await host.engine.stopForwardStream(connection: host.connection)
        for (viewer, _) in viewers {
            let offline = try await viewer.log.first("the host offline") { event -> UserOfflineReason? in
                if case .userOffline(_, 1, let reason) = event { reason } else { nil }
            }
            XCTAssertEqual(offline, .forwardStopped)
        }
        for client in [host] + viewers.map(\.0) { await client.stop() }
    }

    func testABadTokenFailsItsDestinationAndTheOtherThreeRun() async throws {
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        let host = try await TestClient.join("fwd-src-\(tag)", uid: 1, role: .broadcaster, camera: true)
        let channels = (0..<4).map { "fwd-bad-\(tag)-\($0)" }
        var destinations = try channels.map { try forwardTo($0) }
        // A token for another uid: refused by the coordinator's placement or the edge's join.
        destinations[2].token = try TestApp.token(channel: channels[2], uid: 99)
        try await host.engine.startForwardStream(to: destinations, connection: host.connection)
        let failure = try await host.log.first("the bad destination failed") { event -> ForwardDestinationStatus? in
            if case .forwardStateChanged(_, let d) = event, d.channel == channels[2], d.state == .failure { d } else { nil }
        }
        XCTAssertEqual(failure.reason, .invalidToken)
        XCTAssertEqual(failure.error?.code, .tokenUidMismatch)
        for channel in channels where channel != channels[2] {
            try await host.log.wait("\(channel) running") { event in
                if case .forwardStateChanged(_, let d) = event { d.channel == channel && d.state == .running } else { false }
            }
        }
        let sink = DecodingVideoSink()
        let viewer = try await TestClient.join(channels[0], uid: 100, role: .audience, videoFrom: 1, videoSink: sink)
        try await eventually("a running destination's viewer decodes") { sink.statistics.framesDecoded >= 5 }
        // Hostile and wrong requests are refused with their codes and change nothing.
        await assertRefused(.forwardAlreadyStarted) { try await host.engine.startForwardStream(to: destinations, connection: host.connection) }
        await assertRefused(.forwardTooManyDestinations) {
            try await host.engine.updateForwardStream(to: (0..<5).map { try forwardTo("fwd-many-\(tag)-\($0)") }, connection: host.connection)
        }
        await assertRefused(.forwardInvalidDestination) {
            try await host.engine.updateForwardStream(to: [try forwardTo(host.connection.channel)], connection: host.connection)
        }
        await assertRefused(.invalidArgument) {
            try await host.engine.updateForwardStream(to: [ForwardDestination(channel: "bad/name", token: "x")], connection: host.connection)
        }
        await assertRefused(.invalidArgument) {
            try await host.engine.updateForwardStream(
                to: [ForwardDestination(channel: channels[0], token: String(repeating: "0", count: 4096))], connection: host.connection)
        }
        XCTAssertGreaterThanOrEqual(sink.statistics.framesDecoded, 5)
        await viewer.stop()
        await host.stop()
    }

    func testTheSourceLeavingStopsEveryForward() async throws {
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        let host = try await TestClient.join("fwd-src-\(tag)", uid: 1, role: .broadcaster, camera: true)
        let channels = (0..<2).map { "fwd-leave-\(tag)-\($0)" }
        var viewers: [(TestClient, DecodingVideoSink)] = []
        for (i, channel) in channels.enumerated() {
            let sink = DecodingVideoSink()
            viewers.append((try await TestClient.join(channel, uid: 100 + UInt32(i), role: .audience, videoFrom: 1, videoSink: sink), sink))
        }
        try await host.engine.startForwardStream(to: channels.map { try forwardTo($0) }, connection: host.connection)
        try await eventually("the viewers decode") { viewers.allSatisfy { $0.1.statistics.framesDecoded >= 5 } }
        try await host.engine.leaveChannel()
        for (viewer, _) in viewers {
            let offline = try await viewer.log.first("the host offline") { event -> UserOfflineReason? in
                if case .userOffline(_, 1, let reason) = event { reason } else { nil }
            }
            XCTAssertEqual(offline, .forwardStopped)
        }
        for client in [host] + viewers.map(\.0) { await client.stop() }
    }

    // MARK: - Helpers

    private func forwardTo(_ channel: String) throws -> ForwardDestination {
        ForwardDestination(channel: channel, token: try TestApp.token(channel: channel, uid: 1))
    }

    /// `count` destination channels, at least one placed on the host's edge and one elsewhere.
    private func destinationsSpread(from host: TestClient, count: Int, tag: String) async throws -> [String] {
        let source = try await edge(of: host.connection.channel, host: host)
        var same: [String] = []
        var other: [String] = []
        for i in 0..<40 where same.isEmpty || other.isEmpty || same.count + other.count < count {
            let channel = "fwd-dst-\(tag)-\(i)"
            if try await edge(of: channel, host: host) == source { same.append(channel) } else { other.append(channel) }
        }
        let chosen = Array((Array(same.prefix(1)) + Array(other.prefix(1)) + same.dropFirst() + other.dropFirst()).prefix(count))
        XCTAssertEqual(chosen.count, count)
        XCTAssertFalse(same.isEmpty, "a destination on the source edge")
        XCTAssertFalse(other.isEmpty, "a destination on another edge")
        return chosen
    }

    private func edge(of channel: String, host: TestClient) async throws -> String {
        try await host.engine.placement.edge(
            for: channel, avoiding: nil, joiningAs: PlacementCredentials(uid: 1, token: try TestApp.token(channel: channel, uid: 1))).id
    }
}

/// Awaits `body` and checks it fails with `code`.
func assertRefused(_ code: ShowroomError.Code, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void) async {
    do {
        try await body()
        XCTFail("expected \(code), got success", file: file, line: line)
    } catch let error as ShowroomError {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
    } catch {
        XCTFail("expected \(code), got \(error)", file: file, line: line)
    }
}

/// A destination's edge dies while the host's stream is forwarded there: the destination fails
/// (destination unreachable), its channel is placed again, and the forward runs there again.
final class StreamForwardingFailoverTests: XCTestCase {
    func testAKilledDestinationEdgeFailsItsDestinationUntilItsChannelIsPlacedElsewhere() async throws {
        let cluster = try TestCluster(coordinators: 1, edges: 3)
        defer { cluster.down() }
        let seed = try cluster.clientEndpoint(of: "coordinator-1")
        let loop = try EngineLoop(name: "forward-failover")
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        let source = "fwd-src-\(tag)"
        let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])), loop: loop)
        let hostLog = EventLog(host)
        await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        let connection = try await host.joinChannel(token: try TestApp.token(channel: source, uid: 1), channel: source, uid: 1, options: .broadcaster)
        func edge(of channel: String) async throws -> String {
            try await host.placement.edge(
                for: channel, avoiding: nil, joiningAs: PlacementCredentials(uid: 1, token: try TestApp.token(channel: channel, uid: 1))).id
        }
        let sourceEdge = try await edge(of: source)
        var destination = ""
        for i in 0..<40 {
            let channel = "fwd-failover-\(tag)-\(i)"
            if try await edge(of: channel) != sourceEdge {
                destination = channel
                break
            }
        }
        XCTAssertFalse(destination.isEmpty)
        let victim = try await edge(of: destination)
        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])), loop: loop)
        let times = PictureTimes()
        try await viewer.setupRemoteVideo(uid: 1, connection: ChannelConnection(channel: destination, uid: 100),
                                          sink: DecodingVideoSink(readFrameCounters: false) { _ in times.record() })
        try await viewer.joinChannel(token: try TestApp.token(channel: destination, uid: 100, role: .subscriber),
                                     channel: destination, uid: 100, options: .audience)
        try await host.startForwardStream(to: [ForwardDestination(channel: destination, token: try TestApp.token(channel: destination, uid: 1))],
                                          connection: connection)
        try await eventually("the viewer decodes the forwarded host") { !times.isEmpty }

        try cluster.kill(victim)
        let killedAt = ContinuousClock.now
        let failure = try await hostLog.first("the destination failed") { event -> ForwardDestinationStatus? in
            if case .forwardStateChanged(_, let d) = event, d.state == .failure { d } else { nil }
        }
        XCTAssertEqual(failure.reason, .destinationUnreachable)
        XCTAssertEqual(failure.error?.code, .forwardDestinationUnreachable)
        let failedAt = hostLog.all.count
        try await eventually("the destination runs again", timeout: .seconds(20)) {
            hostLog.all.dropFirst(failedAt).contains { event in
                if case .forwardStateChanged(_, let d) = event { d.state == .running } else { false }
            }
        }
        let after = killedAt + .milliseconds(50)
        try await eventually("the viewer decodes again on the channel's new edge", timeout: .seconds(20)) {
            times.first(after: after) != nil
        }
        let now = try await edge(of: destination)
        XCTAssertNotEqual(now, victim, "the destination channel is placed on a live edge")
        print("destination edge \(victim) killed: the viewer decodes again after \(killedAt.duration(to: times.first(after: after)!)) on \(now)")
        await viewer.shutdown()
        await host.shutdown()
        await loop.shutdown()
    }
}
