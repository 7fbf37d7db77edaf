import Edge
import Foundation
import ServerAPI
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import Webhooks
import XCTest
import ZeroMQ

/// Channels on a real cluster (a coordinator and three edges): placement over the edges, channel
/// events to a webhook receiver (signed, in order, once after de-duplication, through an outage),
/// kick and ban enforced by the edges.
final class ChannelClusterTests: XCTestCase {
    nonisolated(unsafe) static var cluster: TestCluster?
    nonisolated(unsafe) static var receiver: WebhookReceiver?
    static let secret = "test-webhook-secret"
    static let apiSecret = "hooks-api-secret-0123456789"
    /// While true the receiver answers 503 (a business server outage).
    static let outage = Mutex(false)

    override class func setUp() {
        super.setUp()
        let started = Mutex<Result<(TestCluster, WebhookReceiver), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let receiver = try await WebhookReceiver.start(secret: secret) { _ in outage.withLock { $0 } ? 503 : 200 }
                let cluster = try TestCluster(coordinators: 1, edges: 3,
                                              webhookURLs: [receiver.url], webhookSecret: secret, coordinatorSettings: [
                                                  "apiKeys": [["id": "hooks", "secretSHA256": Hex.encode(CustomerKey.hash(secret: apiSecret)),
                                                               "scopes": ["read", "rooms"]]],
                                              ])
                started.withLock { $0 = .success((cluster, receiver)) }
            } catch {
                started.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        if case .success(let (cluster, receiver)) = started.withLock({ $0 }) {
            self.cluster = cluster
            self.receiver = receiver
        }
    }

    override class func tearDown() {
        cluster?.down()
        cluster = nil
        let done = DispatchSemaphore(value: 0)
        Task {
            await receiver?.stop()
            done.signal()
        }
        done.wait()
        super.tearDown()
    }

    private var seed: String { get throws { try XCTUnwrap(Self.cluster).endpoint("coordinator-1") } }

    func testTwentyChannelsSpreadOverThreeEdgesAndStay() async throws {
        let seed = try self.seed
        var placed: [String: String] = [:]
        for i in 0..<20 {
            var place = RoomPlaceChannelRequest()
            place.channel = "spread-\(i)"
            place.uid = 1
            place.token = try TestApp.token(channel: place.channel, uid: 1)
            let answer = try await request(.channelPlace, place, to: seed, expecting: RoomPlaceChannelResponse.self)
            XCTAssertTrue(answer.clientEndpoint.hasPrefix("tcp://"))
            placed[place.channel] = answer.edgeID
        }
        let perEdge = Dictionary(grouping: placed.values, by: { $0 }).mapValues(\.count)
        print("channels per edge: \(perEdge.sorted { $0.key < $1.key })")
        XCTAssertEqual(Set(perEdge.keys), ["edge-1", "edge-2", "edge-3"])
        // Sticky: asking again gives the same edge.
        for (channel, edge) in placed {
            var place = RoomPlaceChannelRequest()
            place.channel = channel
            place.uid = 1
            place.token = try TestApp.token(channel: channel, uid: 1)
            let again = try await request(.channelPlace, place, to: seed, expecting: RoomPlaceChannelResponse.self)
            XCTAssertEqual(again.edgeID, edge, channel)
        }
        var empty = RoomPlaceChannelRequest()
        empty.channel = ""
        await assertFails(.invalidArgument, "placing a nameless channel") {
            try await request(.channelPlace, empty, to: seed, expecting: RoomPlaceChannelResponse.self)
        }
    }

    func testChannelEventsReachTheWebhookSignedInOrderOnceThroughAnOutage() async throws {
        let receiver = try XCTUnwrap(Self.receiver)
        let seed = try self.seed
        let channel = "webhook-\(UInt32.random(in: 0 ... .max))"
        let host = try await joinedEngine(seed: seed, channel: channel, uid: 11, broadcaster: true)
        let viewer = try await joinedEngine(seed: seed, channel: channel, uid: 12, broadcaster: false)
        try await eventually("the first events posted") {
            receiver.events(channel: channel).count >= 3
        }
        // The receiver goes down; events keep happening; it comes back.
        Self.outage.withLock { $0 = true }
        try await viewer.leaveChannel()
        await viewer.shutdown()
        try await host.leaveChannel()
        await host.shutdown()
        try await eventually("posts refused during the outage") {
            receiver.refused(channel: channel) > 0
        }
        Self.outage.withLock { $0 = false }
        try await eventually("every event delivered after the outage", timeout: .seconds(30)) {
            receiver.events(channel: channel).count >= 6
        }
        let events = receiver.events(channel: channel)
        XCTAssertEqual(events.map(\.sequence), Array(1...UInt64(events.count)), "in order, each once")
        XCTAssertEqual(events.map(\.type), [.channelCreated, .broadcasterJoined, .audienceJoined, .audienceLeft,
                                            .broadcasterLeft, .channelDestroyed])
        XCTAssertEqual(events[2].uid, 12)
        XCTAssertEqual(events[3].reason, .quit)
        XCTAssertTrue(receiver.allSignaturesValid, "every post carries a valid signature")
        XCTAssertGreaterThan(receiver.duplicatesOrRetries, 0, "the outage made the coordinator retry")
    }

    /// An edge sends a report again when its answer was lost: the coordinator numbers each
    /// activity once, so the business server never gets one event twice under two numbers.
    func testAReportSentAgainIsNumberedOnce() async throws {
        let receiver = try XCTUnwrap(Self.receiver)
        let seed = try self.seed
        let channel = "resent-\(UInt32.random(in: 0 ... .max))"
        func activity(_ type: RoomChannelEventType, uid: UInt32, _ number: UInt64) -> RoomChannelActivity {
            var activity = RoomChannelActivity()
            activity.type = type
            activity.channel = channel
            activity.uid = uid
            activity.atMs = Int64(Date().timeIntervalSince1970 * 1000)
            activity.origin = "edge-under-test/1"
            activity.originSequence = number
            return activity
        }
        let joined = [activity(.broadcasterJoined, uid: 21, 1), activity(.audienceJoined, uid: 22, 2)]
        var report = RoomEdgeChannelReport()
        report.edgeID = "edge-under-test"
        report.activities = joined
        for _ in 0..<2 {
            _ = try await request(.edgeChannelReport, report, to: seed, expecting: RoomEdgeChannelReportResponse.self)
        }
        report.activities = [joined[1], activity(.audienceLeft, uid: 22, 3)]
        _ = try await request(.edgeChannelReport, report, to: seed, expecting: RoomEdgeChannelReportResponse.self)
        try await eventually("the events posted") {
            receiver.events(channel: channel).contains { $0.type == .audienceLeft }
        }
        let events = receiver.events(channel: channel)
        XCTAssertEqual(events.map(\.type), [.broadcasterJoined, .audienceJoined, .audienceLeft])
        XCTAssertEqual(events.map(\.sequence), [1, 2, 3], "numbered once each")
    }

    func testTheServerAPIShowsTheWebhooksAndPostsASignedTestEvent() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let receiver = try XCTUnwrap(Self.receiver)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: (id: "hooks", secret: Self.apiSecret))
        let shown = try await api.send("GET", "/v1/webhooks")
        XCTAssertEqual(shown.status, 200, shown.text)
        XCTAssertEqual(try shown.object()["urls"] as? [String], [receiver.url])
        XCTAssertEqual(try shown.object()["signed"] as? Bool, true)
        XCTAssertFalse(shown.text.contains(Self.secret), "the secret is never shown")
        let test = try await api.send("POST", "/v1/webhooks/test")
        XCTAssertEqual(test.status, 202, test.text)
        let notice = try XCTUnwrap(try test.object()["notice_id"] as? String)
        try await eventually("the test event arrives, signed") {
            receiver.posts.contains { post in
                post.signatureValid && String(decoding: post.body, as: UTF8.self).contains(notice)
            }
        }
        await api.shutdown()
    }

    func testKickClosesTheConnectionAndTheBanRefusesARejoin() async throws {
        let seed = try self.seed
        let channel = "kick-\(UInt32.random(in: 0 ... .max))"
        let viewer = try await joinedEngine(seed: seed, channel: channel, uid: 31, broadcaster: false)
        let log = EventLog(viewer)
        // The status view lists the channel with its edge and subscriber.
        let cluster = try XCTUnwrap(Self.cluster)
        try await eventually("the channel in the status view") {
            let output = try cluster.status(json: true)
            guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
                  let status = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let channels = status["channels"] as? [[String: Any]],
                  let entry = channels.first(where: { $0["name"] as? String == channel })
            else { return false }
            return (entry["edge"] as? String)?.hasPrefix("edge-") == true && entry["subscribers"] as? Int == 1
                && (entry["publishers"] as? [Any])?.isEmpty == true
        }
        var kick = RoomKickRequest()
        kick.channel = channel
        kick.uid = 31
        kick.banSeconds = 30
        // Unsigned or wrongly signed: refused.
        await assertFails(.adminUnauthorized, "an unsigned kick") {
            try await request(.kick, kick, to: seed, expecting: RoomKickResponse.self)
        }
        kick.admin = AdminSigner.sign(action: "kick", target: channel, uid: 31,
                                      issuedAtMs: Int64(Date().timeIntervalSince1970 * 1000), appCertificate: String(repeating: "0", count: 32))
        await assertFails(.adminUnauthorized, "a kick signed with another certificate") {
            try await request(.kick, kick, to: seed, expecting: RoomKickResponse.self)
        }
        kick.admin = AdminSigner.sign(action: "kick", target: channel, uid: 31,
                                      issuedAtMs: Int64(Date().timeIntervalSince1970 * 1000), appCertificate: TestApp.certificate)
        let answer = try await request(.kick, kick, to: seed, expecting: RoomKickResponse.self)
        XCTAssertEqual(answer.edges, 3, "every edge enforces the ban")
        try await log.wait("the connection closed as banned") { event in
            if case .connectionClosed(_, let error) = event { return error.code == .banned }
            return false
        }
        // A rejoin during the ban is refused, on whichever edge.
        let again = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])))
        await assertFails(.banned, "a rejoin during the ban") {
            try await again.joinChannel(token: try TestApp.token(channel: channel, uid: 31, role: .subscriber),
                                        channel: channel, uid: 31, options: .audience)
        }
        // Others are not affected.
        let other = try await joinedEngine(seed: seed, channel: channel, uid: 32, broadcaster: false)
        try await other.leaveChannel()
        await other.shutdown()
        await again.shutdown()
        await viewer.shutdown()
    }

    /// The split finding: channels joined directly on one edge (not through placement) are then
    /// placed on that edge, every one of them, and listed once.
    func testChannelsJoinedDirectlyOnAnEdgeArePlacedThere() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let seed = try self.seed
        let direct = try cluster.clientEndpoint(of: "edge-2")
        let channels = (0..<12).map { "direct-\($0)-\(UInt32.random(in: 0 ... .max))" }
        var engines: [ShowroomEngine] = []
        for channel in channels {
            let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])),
                                                  placement: FixedEdgePlacement(endpoint: direct))
            try await engine.joinChannel(token: try TestApp.token(channel: channel, uid: 5, role: .subscriber),
                                         channel: channel, uid: 5, options: .audience)
            engines.append(engine)
        }
        for channel in channels {
            let placed = try await request(.channelPlace, try Self.placeRequest(channel, uid: 6), to: seed,
                                           expecting: RoomPlaceChannelResponse.self)
            XCTAssertEqual(placed.edgeID, "edge-2", channel)
            XCTAssertEqual(placed.clientEndpoint, direct, channel)
        }
        try await eventually("every channel listed once, on edge-2") {
            let listed = try await request(.channelList, RoomListChannelsRequest(), to: seed, expecting: RoomListChannelsResponse.self)
            return channels.allSatisfy { channel in listed.channels.filter { $0.name == channel }.map(\.edge) == ["edge-2"] }
        }
        for engine in engines { await engine.shutdown() }
    }

    /// A join on an edge that does not host the channel while another does: refused E3017 naming
    /// that edge; the SDK follows it and the app sees only the successful join.
    func testAJoinOnTheWrongEdgeIsSentToTheRightOne() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let seed = try self.seed
        let channel = "wrong-edge-\(UInt32.random(in: 0 ... .max))"
        let host = try await joinedEngine(seed: seed, channel: channel, uid: 41, broadcaster: false)
        let placed = try await request(.channelPlace, try Self.placeRequest(channel, uid: 41), to: seed,
                                       expecting: RoomPlaceChannelResponse.self)
        let wrong = try XCTUnwrap(["edge-1", "edge-2", "edge-3"].first { $0 != placed.edgeID })
        let wrongEndpoint = try cluster.clientEndpoint(of: wrong)

        let token = try TestApp.token(channel: channel, uid: 42, role: .subscriber)
        let reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<EdgeReply, any Error>) in
            // A raw client owns a ZeroMQ socket: a thread of its own, not the cooperative pool.
            Thread {
                continuation.resume(with: Result {
                    let context = try Context()
                    defer { context.shutdown() }
                    let raw = try RawEdgeClient(endpoint: wrongEndpoint, context: context)
                    try raw.open()
                    return try raw.join(channel, uid: 42, token: token, role: .audience)
                })
            }.start()
        }
        let refusal = try XCTUnwrap(reply.failure, "a join on \(wrong) is refused")
        XCTAssertEqual(refusal.code, .channelElsewhere)
        XCTAssertEqual(refusal.redirect?.edgeID, placed.edgeID)
        XCTAssertEqual(refusal.redirect?.clientEndpoint, placed.clientEndpoint)

        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])),
                                              placement: FixedEdgePlacement(endpoint: wrongEndpoint))
        let log = EventLog(viewer)
        try await viewer.joinChannel(token: token, channel: channel, uid: 42, options: .audience)
        try await log.wait("joined") { if case .joined = $0 { true } else { false } }
        try await eventually("the channel listed on one edge with both users") {
            let listed = try await request(.channelList, RoomListChannelsRequest(), to: seed, expecting: RoomListChannelsResponse.self)
            let entries = listed.channels.filter { $0.name == channel }
            return entries.map(\.edge) == [placed.edgeID] && entries.first?.subscribers == 2
        }
        XCTAssertFalse(log.all.contains { if case .error = $0 { true } else { false } }, "the app saw no refusal")
        await viewer.shutdown()
        await host.shutdown()
    }

    func testPlacementsNeedATokenOrAnAdminSignature() async throws {
        let seed = try self.seed
        let channel = "unauthorized-\(UInt32.random(in: 0 ... .max))"
        var bare = RoomPlaceChannelRequest()
        bare.channel = channel
        await assertFails(.tokenMalformed, "a placement without a token") {
            try await request(.channelPlace, bare, to: seed, expecting: RoomPlaceChannelResponse.self)
        }
        var other = try Self.placeRequest(channel, uid: 7)
        other.token = try TestApp.token(channel: "another-channel", uid: 7)
        await assertFails(.tokenChannelMismatch, "a token for another channel") {
            try await request(.channelPlace, other, to: seed, expecting: RoomPlaceChannelResponse.self)
        }
        var forged = try Self.placeRequest(channel, uid: 7)
        forged.token = try RTCTokenBuilder.buildToken(appID: TestApp.appID, appCertificate: String(repeating: "0", count: 32),
                                                      channelName: channel, uid: 7, role: .publisher, tokenExpire: 600)
        await assertFails(.tokenBadSignature, "a token signed with another certificate") {
            try await request(.channelPlace, forged, to: seed, expecting: RoomPlaceChannelResponse.self)
        }
        var unsigned = bare
        unsigned.admin = AdminSigner.sign(action: "place", target: channel, uid: 0,
                                          issuedAtMs: Int64(Date().timeIntervalSince1970 * 1000), appCertificate: String(repeating: "0", count: 32))
        await assertFails(.adminUnauthorized, "an admin placement signed with another certificate") {
            try await request(.channelPlace, unsigned, to: seed, expecting: RoomPlaceChannelResponse.self)
        }
        var admin = bare
        admin.admin = AdminSigner.sign(action: "place", target: channel, uid: 0,
                                       issuedAtMs: Int64(Date().timeIntervalSince1970 * 1000), appCertificate: TestApp.certificate)
        let placed = try await request(.channelPlace, admin, to: seed, expecting: RoomPlaceChannelResponse.self)
        XCTAssertTrue(placed.edgeID.hasPrefix("edge-"))
        let withToken = try await request(.channelPlace, try Self.placeRequest(channel, uid: 7), to: seed,
                                          expecting: RoomPlaceChannelResponse.self)
        XCTAssertEqual(withToken.edgeID, placed.edgeID)
    }

    /// The database finding: 300 placements with 100 KB names are refused and leave the
    /// coordinator's database as it was.
    func testLongChannelNamesAreRefusedAndTheDatabaseDoesNotGrow() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let seed = try self.seed
        let data = cluster.runDirectory.appendingPathComponent("data")
        func databaseBytes() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: data.path).filter { $0.hasPrefix("coordinator-1.sqlite") }
                .reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: data.appendingPathComponent($1).path)[.size] as? Int) ?? 0) }
        }
        let before = try databaseBytes()
        for index in 0..<300 {
            let channel = String(repeating: "x", count: 100_000) + "\(index)"
            // With a token or with an admin signature, no matter: the name is refused first.
            var place = RoomPlaceChannelRequest()
            place.channel = channel
            if index.isMultiple(of: 2) {
                place.uid = 1
                place.token = try RTCTokenBuilder.buildToken(appID: TestApp.appID, appCertificate: TestApp.certificate,
                                                             channelName: "", uid: 1, role: .publisher, tokenExpire: 600)
            }
            await assertFails(.invalidArgument, "a 100 KB channel name") {
                try await request(.channelPlace, place, to: seed, expecting: RoomPlaceChannelResponse.self)
            }
        }
        let after = try databaseBytes()
        print("coordinator database: \(before) bytes before, \(after) after 300 refused placements")
        XCTAssertLessThan(after - before, 64 << 10, "nothing of the refused placements was stored")
    }

    /// A placement request with the demo app's token for `channel` and `uid`.
    static func placeRequest(_ channel: String, uid: UInt32) throws -> RoomPlaceChannelRequest {
        var place = RoomPlaceChannelRequest()
        place.channel = channel
        place.uid = uid
        place.token = try TestApp.token(channel: channel, uid: uid)
        return place
    }

    /// An engine joined to `channel`.
    private func joinedEngine(seed: String, channel: String, uid: UInt32, broadcaster: Bool) async throws -> ShowroomEngine {
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])))
        if broadcaster { await engine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15)) }
        try await engine.joinChannel(
            token: try TestApp.token(channel: channel, uid: uid, role: broadcaster ? .publisher : .subscriber),
            channel: channel, uid: uid, options: broadcaster ? .broadcaster : .audience)
        return engine
    }
}

