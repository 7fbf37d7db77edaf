import Edge
import EdgeServer
import Foundation
import Logging
import NodeRuntime
import Routing
import ShowroomTesting
import ShowroomWire
import SwiftProtobuf
import Synchronization
import XCTest
import ZeroMQ

/// The edge and the room-coordinators with real sockets and gossip: an edge node
/// (``EdgeRoleService`` attached to an in-process ``Node``, its link hopping between the node's
/// loop and the edge's), coordinator nodes that record what they get, and bare clients. What the
/// edge reports and applies is tested on the in-process network (``EdgeShellInProcessTests``).
final class CoordinatorLinkTests: XCTestCase {
    private var context: Context!
    private var started: [() -> Void] = []

    override func setUpWithError() throws {
        context = try Context()
    }

    override func tearDown() {
        // Last started, first stopped.
        for stop in started.reversed() { stop() }
        started = []
        context.shutdown()
    }

    // MARK: - Scenarios

    func testQueuedActivitiesArriveAfterFailuresAndFollowANewCoordinator() async throws {
        let recorder = ReportRecorder()
        // No coordinator yet: the edge keeps what happens.
        let edge = try await startEdge("edge-c", seeds: [])
        let host = try client(edge)
        XCTAssertNil(try host.join("queue", uid: 1, token: TestApp.token(channel: "queue", uid: 1), role: .broadcaster).failure)
        let viewer = try client(edge)
        XCTAssertNil(try viewer.join("queue", uid: 2, token: TestApp.token(channel: "queue", uid: 2, role: .subscriber), role: .audience).failure)
        XCTAssertNil(try viewer.request(.leave(channel: "queue")).failure)

        // A coordinator appears that fails its first reports: they are retried, none lost.
        recorder.failuresLeft = 3
        _ = try startCoordinator("coord-c1", recorder: recorder, seeds: [edge.node.endpoint])
        try waitUntil("the queued activities", keepAlive: [host, viewer]) { recorder.activities.count >= 4 }
        XCTAssertEqual(recorder.failuresLeft, 0, "the failures were retried")
        XCTAssertEqual(recorder.activities.map(Self.describe), ["101 queue 0", "103 queue 1", "105 queue 2", "106 queue 2 quit"])

        // A second coordinator: the channel's activities go to whichever owns it now, in order.
        _ = try startCoordinator("coord-c2", recorder: recorder, seeds: [edge.node.endpoint])
        try waitUntil("both coordinators get summaries", keepAlive: [host, viewer]) {
            recorder.summaryReceivers == ["coord-c1", "coord-c2"]
        }
        XCTAssertNil(try viewer.join("queue", uid: 2, token: TestApp.token(channel: "queue", uid: 2, role: .subscriber), role: .audience).failure)
        XCTAssertNil(try host.request(.closeSession).failure)
        XCTAssertNil(try viewer.request(.closeSession).failure)
        try waitUntil("the rest") { recorder.activities.count >= 8 }
        XCTAssertEqual(recorder.activities.map(Self.describe), [
            "101 queue 0", "103 queue 1", "105 queue 2", "106 queue 2 quit",
            "105 queue 2", "104 queue 1 quit", "106 queue 2 quit", "102 queue 0",
        ])
        let owner = OwnerRing(.coordinator, memberIDs: ["coord-c1", "coord-c2"]).owner(of: "queue")
        XCTAssertEqual(Set(recorder.activityReceivers.suffix(4)), [owner])
    }

    // MARK: - Parts

    private struct StartedEdge {
        let node: Node
        let clientEndpoint: String
    }

    private func startEdge(_ id: String, seeds: [String]) async throws -> StartedEdge {
        var configuration = NodeConfiguration(role: .edge, nodeID: id)
        configuration.seeds = seeds
        configuration.appID = TestApp.appID
        configuration.appCertificate = TestApp.certificate
        configuration.admin = "off"
        configuration.leavePropagation = .milliseconds(50)
        let logger = LogCapture.logger(label: id)
        let service = try EdgeRoleService(configuration: configuration, logger: logger)
        let endpoints = try await service.start()
        let node: Node
        do {
            node = try Node(configuration: configuration, clientEndpoint: endpoints.client, logger: logger, events: .none)
        } catch {
            Self.blocking { await service.stop() }
            throw error
        }
        service.attach(to: node)
        node.join()
        started.append {
            Self.blocking {
                await node.stop()
                await service.stop()
            }
        }
        return StartedEdge(node: node, clientEndpoint: endpoints.client)
    }

    private func startCoordinator(_ id: String, recorder: ReportRecorder, seeds: [String] = []) throws -> FakeCoordinator {
        let coordinator = try FakeCoordinator(id: id, recorder: recorder, seeds: seeds)
        started.append { Self.blocking { await coordinator.node.stop() } }
        return coordinator
    }

    private func client(_ edge: StartedEdge) throws -> RawEdgeClient {
        let client = try RawEdgeClient(endpoint: edge.clientEndpoint, context: context)
        try client.open()
        return client
    }

    /// Polls `condition` until it holds (10 s at most), keeping the clients' sessions alive.
    private func waitUntil(_ what: String, keepAlive: [RawEdgeClient] = [], _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try condition() { return }
            for client in keepAlive { _ = try client.request(.heartbeat(clientTime: 0)) }
            Thread.sleep(forTimeInterval: 0.02)  // poll period
        }
        XCTFail("timed out waiting for \(what)")
        throw ShowroomError.deadlineExceeded("waiting for \(what)")
    }

    /// Runs async work to its end from a test's thread.
    private static func blocking(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }

    static func describe(_ activity: RoomChannelActivity) -> String {
        var text = "\(activity.type.rawValue) \(activity.channel) \(activity.uid)"
        if activity.reason != .unspecified { text += " \(activity.reason)" }
        return text
    }

    static func ban(_ channel: String, uid: UInt32, privileges: [UInt32], untilMs: Int64) -> RoomBan {
        var ban = RoomBan()
        ban.channel = channel
        ban.uid = uid
        ban.privileges = privileges
        ban.untilMs = untilMs
        return ban
    }

    static func bans(_ bans: [RoomBan]) -> RoomEdgeBansRequest {
        var request = RoomEdgeBansRequest()
        request.bans = bans
        return request
    }
}

/// What the test coordinators received, in the order they received it (shared by all of them).
final class ReportRecorder: Sendable {
    private struct State {
        var reports: [(receiver: String, report: RoomEdgeChannelReport)] = []
        var failuresLeft = 0
        var banList: [RoomBan] = []
        var banListRequests = 0
    }
    private let state = Mutex(State())

    var reports: [RoomEdgeChannelReport] { state.withLock { $0.reports.map(\.report) } }
    var activities: [RoomChannelActivity] { state.withLock { $0.reports.flatMap(\.report.activities) } }
    /// The coordinator that received each activity.
    var activityReceivers: [String] {
        state.withLock { $0.reports.flatMap { entry in entry.report.activities.map { _ in entry.receiver } } }
    }
    var failuresLeft: Int {
        get { state.withLock { $0.failuresLeft } }
        set { state.withLock { $0.failuresLeft = newValue } }
    }
    var banList: [RoomBan] {
        get { state.withLock { $0.banList } }
        set { state.withLock { $0.banList = newValue } }
    }
    var banListRequests: Int { state.withLock { $0.banListRequests } }

    /// The channel lists an edge reported, oldest first.
    func summaries(from edge: String) -> [[RoomChannelStatus]] {
        state.withLock { $0.reports.map(\.report).filter { $0.edgeID == edge && $0.hasChannels_p }.map(\.channels) }
    }

    /// The coordinators that received a channel summary.
    var summaryReceivers: Set<String> {
        state.withLock { Set($0.reports.filter(\.report.hasChannels_p).map(\.receiver)) }
    }

    /// Records a report, or refuses it while failures are left.
    func receive(_ report: RoomEdgeChannelReport, by receiver: String) throws(ShowroomError) {
        try state.withLock { (state) throws(ShowroomError) in
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                throw ShowroomError.unavailable("coordinator \(receiver) is not ready")
            }
            state.reports.append((receiver, report))
        }
    }

    func listBans() -> [RoomBan] {
        state.withLock {
            $0.banListRequests += 1
            return $0.banList
        }
    }
}

/// A coordinator node that answers EDGE_CHANNEL_REPORT and BAN_LIST from a recorder.
final class FakeCoordinator: Sendable {
    let node: Node

    init(id: String, recorder: ReportRecorder, seeds: [String]) throws {
        var configuration = NodeConfiguration(role: .coordinator, nodeID: id)
        configuration.seeds = seeds
        configuration.admin = "off"
        configuration.leavePropagation = .milliseconds(50)
        node = try Node(configuration: configuration, logger: LogCapture.logger(label: id), events: .none)
        let node = self.node
        try node.loop.submitAndWait {
            node.handle(.edgeChannelReport) { request, _ in
                try recorder.receive(try request.decodeBody(RoomEdgeChannelReport.self), by: id)
                return RoomEdgeChannelReportResponse()
            }
            node.handle(.banList) { _, _ in
                var response = RoomBanListResponse()
                response.bans = recorder.listBans()
                return response
            }
        }
        node.join()
    }

    /// Sends a request from this coordinator and waits for the answer envelope.
    func send(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message & Sendable, to endpoint: String) throws -> WireEnvelope {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<WireEnvelope, ShowroomError>?>(nil)
        let node = self.node
        node.loop.execute {
            node.send(kind, body: body, to: endpoint, timeout: .seconds(3)) { answer in
                result.withLock { $0 = answer }
                done.signal()
            }
        }
        _ = done.wait(timeout: .now() + 5)
        guard let answer = result.withLock({ $0 }) else { throw ShowroomError.deadlineExceeded("no answer to \(kind)") }
        return try answer.get()
    }
}
