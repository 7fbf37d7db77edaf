import Edge
import Foundation
@testable import EdgeServer
import Logging
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import XCTest
import ZeroMQ

/// A relay edge pulling a channel from its origin edge: two in-process ``EdgeServer``s on
/// 127.0.0.1, bare DEALER clients, the relay told it hosts the channel as a relay of the origin
/// (as a coordinator's claim answer with `relay_of_*` does).
final class RelayEdgeTests: XCTestCase {
    private var context: Context!
    private var origin: EdgeServer!
    private var relay: EdgeServer!

    override func setUpWithError() throws {
        context = try Context()
        origin = try EdgeServer(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate),
            logger: LogCapture.logger(label: "origin"))
        var configuration = EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate)
        configuration.relay.releaseDelay = .milliseconds(300)
        relay = try EdgeServer(configuration: configuration, logger: LogCapture.logger(label: "relay"))
    }

    override func tearDown() {
        relay.shutdown()
        origin.shutdown()
        context.shutdown()
    }

    private func client(of edge: EdgeServer, clientID: String = UUID().uuidString) throws -> RawEdgeClient {
        let client = try RawEdgeClient(endpoint: edge.endpoint, context: context)
        try client.open(clientID: clientID)
        return client
    }

    private func publish(_ host: RawEdgeClient, _ sequences: Range<UInt32>) throws {
        for sequence in sequences {
            try host.publish(channel: "show", uid: 1, track: .video, sequence: sequence, keyframe: sequence == 0, payload: [UInt8(sequence), 7])
        }
        // The host's own session is answered in order: its frames have been handled once this returns.
        _ = try host.request(.heartbeat(clientTime: 1))
    }

    /// Runs an edge query from this (socket-owning) thread.
    private func query<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.result = Result<T, any Error>.success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    /// Looks at edge state until `condition` holds, up to `timeout`.
    private func eventually(_ what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.01)  // poll period for state that can only be looked at
        }
        XCTFail("\(what) did not happen within \(timeout)")
    }

    func testARelayPullsOnceForAllItsViewersRefusesBroadcastersAndLetsGoAfterTheLastViewer() throws {
        let (origin, relay) = (self.origin!, self.relay!)
        let reported = Reported()
        for (edge, name) in [(origin, "origin"), (relay, "relay")] {
            edge.setCoordinatorReports(CoordinatorReports(
                activities: { reported.add(name, $0) }, summary: { _ in },
                claim: { channel in edge.claimAnswered(channel, .admit) }, place: { _ in }))
        }
        let host = try client(of: origin)
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        try publish(host, 0..<3)
        try query { try await relay.hostAsRelay("show", of: RelayOrigin(id: "origin-edge", endpoint: origin.endpoint)) }

        var viewers: [RawEdgeClient] = []
        for i in 0..<3 {
            let viewer = try client(of: relay)
            let uid = UInt32(100 + i)
            XCTAssertNil(try viewer.join("show", uid: uid, token: TestApp.token(channel: "show", uid: uid, role: .subscriber), role: .audience).failure)
            try viewer.waitForEvent("the origin's host") { $0 == .userJoined(channel: "show", uid: 1) }
            try viewer.waitForFrames(3)
            viewers.append(viewer)
        }
        try publish(host, 3..<6)
        for viewer in viewers {
            try viewer.waitForFrames(6)
            XCTAssertEqual(viewer.frames.map(\.header.sequence), Array(0..<6), "from the keyframe, in order")
            XCTAssertTrue(viewer.frames[0].header.keyframe)
            XCTAssertEqual(viewer.frames.last?.payload, [5, 7])
        }

        // One subscriber connection from the relay on the origin, counted nowhere.
        let onOrigin = try query { try await origin.channel("show") }
        XCTAssertEqual(onOrigin?.connections.count, 2, "the host and the relay's one link")
        let originSummary = try query { try await origin.channelSummaries() }.first
        XCTAssertEqual(originSummary?.connections, 1)
        let summary = try query { try await relay.channelSummaries() }.first
        XCTAssertEqual(summary?.name, "show")
        XCTAssertEqual(summary?.originEdge, "origin-edge")
        XCTAssertEqual(summary?.connections, 3, "the local viewers")
        XCTAssertEqual(summary?.broadcasters, [])

        // Broadcasting on the relay: sent to the origin.
        let intruder = try client(of: relay)
        let refused = try intruder.join("show", uid: 2, token: TestApp.token(channel: "show", uid: 2), role: .broadcaster).failure
        XCTAssertEqual(refused?.code, .channelElsewhere)
        XCTAssertEqual(refused?.redirect?.edgeID, "origin-edge")
        XCTAssertEqual(refused?.redirect?.clientEndpoint, origin.endpoint)
        let promoted = try viewers[0].request(.setRole(channel: "show", role: .broadcaster)).failure
        XCTAssertEqual(promoted?.code, .channelElsewhere)
        XCTAssertEqual(promoted?.redirect?.clientEndpoint, origin.endpoint)

        // The last viewer gone: the link leaves after the grace, the local channel goes.
        for viewer in viewers {
            XCTAssertNil(try viewer.request(.leave(channel: "show")).failure)
        }
        try eventually("the relay link closed") {
            let count = try query { try await origin.channel("show")?.connections.count }
            return count == 1
        }
        // The relay reported its viewers only; the origin its host only (not the link).
        try eventually("the viewers' leaves reported") { reported.kinds("relay").count == 6 }
        XCTAssertEqual(reported.kinds("relay"), Array(repeating: .audienceJoined, count: 3) + Array(repeating: .audienceLeft, count: 3))
        XCTAssertEqual(reported.kinds("origin"), [.channelCreated, .broadcasterJoined])
        try eventually("the relayed channel released") {
            try query {
                let relayed = try await relay.relayedChannels()
                let local = try await relay.channel("show")
                return relayed.isEmpty && local == nil
            }
        }
    }

    func testWhenTheOriginDiesTheViewersStayAndTheRelayPullsFromTheOriginTheClaimNames() throws {
        let (origin, relay) = (self.origin!, self.relay!)
        let successor = try EdgeServer(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate),
            logger: LogCapture.logger(label: "successor"))
        defer { successor.shutdown() }
        let claims = ClaimCounter()
        // The coordinator's part: every claim for the channel is answered "relay of the successor".
        relay.setCoordinatorReports(CoordinatorReports(
            activities: { _ in }, summary: { _ in },
            claim: { channel in
                claims.add()
                relay.claimAnswered(channel, .relay(RelayOrigin(id: "successor-edge", endpoint: successor.endpoint)))
            },
            place: { _ in }))
        let host = try client(of: origin)
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        try publish(host, 0..<3)
        try query { try await relay.hostAsRelay("show", of: RelayOrigin(id: "origin-edge", endpoint: origin.endpoint)) }
        let viewer = try client(of: relay)
        XCTAssertNil(try viewer.join("show", uid: 100, token: TestApp.token(channel: "show", uid: 100, role: .subscriber), role: .audience).failure)
        try viewer.waitForFrames(3)
        // The host is on the successor already (its SDK moved first): the successor has its GOP.
        let moved = try client(of: successor)
        XCTAssertNil(try moved.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        for sequence in UInt32(10)..<13 {
            try moved.publish(channel: "show", uid: 1, track: .video, sequence: sequence, keyframe: sequence == 10, payload: [UInt8(sequence), 9])
        }
        _ = try moved.request(.heartbeat(clientTime: 1))

        origin.shutdown()
        try eventually("the successor serves the relay") {
            try query { try await successor.channel("show")?.connections.count } == 2
        }
        try viewer.waitForFrames(6, timeout: .seconds(10))
        XCTAssertEqual(viewer.frames.map(\.header.sequence), [0, 1, 2, 10, 11, 12], "the successor's GOP, from its keyframe")
        XCTAssertGreaterThanOrEqual(claims.count, 1)
        // Still in the channel, never told to leave, and the host never went offline for it.
        XCTAssertNil(try viewer.request(.heartbeat(clientTime: 2)).failure)
        XCTAssertFalse(viewer.events.contains { if case .userOffline = $0 { true } else { false } }, "\(viewer.events)")
        XCTAssertFalse(viewer.events.contains { if case .connectionClosed = $0 { true } else { false } })
        let summary = try query { try await relay.channelSummaries() }.first
        XCTAssertEqual(summary?.originEdge, "successor-edge")
    }

    func testOnlyARelayLinkThatSubscribesGetsItsKeyframeRequestsPassedOn() throws {
        let host = try client(of: origin)
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        try publish(host, 0..<1)
        let before = host.keyframeRequests
        var body = EdgeRelayKeyframeRequest()
        body.channel = "show"
        body.uid = 1
        body.track = .video
        let request = try WireEnvelope(request: .relayKeyframeRequest, id: 0, body: body)

        // An ordinary viewer sending it, and garbage: ignored.
        let viewer = try client(of: origin)
        XCTAssertNil(try viewer.join("show", uid: 9, token: TestApp.token(channel: "show", uid: 9, role: .subscriber), role: .audience).failure)
        try viewer.send(request)
        var garbage = WireEnvelope()
        garbage.kind = .relayKeyframeRequest
        garbage.body = Data([0xFF, 0xFF, 0xFF])
        try viewer.send(garbage)
        _ = try viewer.request(.heartbeat(clientTime: 1))
        _ = try host.request(.heartbeat(clientTime: 1))
        XCTAssertEqual(host.keyframeRequests, before, "nothing passed on")

        // A relay link (its client id and a reserved uid) that subscribes: passed on.
        let linkUID = RelayLinkIdentity.firstUID + 7
        let link = try client(of: origin, clientID: RelayLinkIdentity.clientIDPrefix + "test")
        XCTAssertNil(try link.join("show", uid: linkUID, token: TestApp.token(channel: "show", uid: linkUID, role: .subscriber), role: .audience).failure)
        try link.waitForFrames(1)
        try link.send(request)
        try link.send(request)
        _ = try link.request(.heartbeat(clientTime: 1))
        _ = try host.request(.heartbeat(clientTime: 1))
        XCTAssertEqual(host.keyframeRequests, before + 1, "one, paced")
    }
}

/// A query's result, handed from its task to the waiting test thread (written before the
/// semaphore is signalled, read after).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Claims the relay made, counted from the edge's loop.
private final class ClaimCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var claims = 0
    var count: Int { lock.withLock { claims } }
    func add() { lock.withLock { claims += 1 } }
}

/// Channel activities the edges handed to their coordinator link, by edge.
private final class Reported: @unchecked Sendable {
    private let lock = NSLock()
    private var activities: [String: [RoomChannelActivity]] = [:]
    func add(_ edge: String, _ more: [RoomChannelActivity]) { lock.withLock { activities[edge, default: []] += more } }
    func kinds(_ edge: String) -> [RoomChannelEventType] { lock.withLock { (activities[edge] ?? []).map(\.type) } }
}
