import Edge
import Foundation
@testable import EdgeServer
import Logging
import NodeRuntime
import ShowroomTesting
import ShowroomWire
import XCTest

/// The edge's link to the room-coordinators on the in-process network: one thread, the clock
/// moved by hand, a coordinator that answers as the test says, and an edge that records what
/// the link hands it.
final class CoordinatorLinkInProcessTests: XCTestCase {
    /// What the link hands to the edge.
    private final class RecordingEdge: CoordinatorLinkEdge {
        var claims: [(channel: String, outcome: ClaimOutcome)] = []
        var bans: [[RoomBan]] = []
        var stages: [[RoomStage]] = []
        var elsewhere: [[String]] = []

        func claimAnswered(_ channel: String, _ outcome: ClaimOutcome) { claims.append((channel, outcome)) }
        func forwardPlaced(_ placement: ForwardPlacement, _ result: Result<ForwardEdge, ShowroomError>) {}
        func forwardCommand(_ command: EdgeForwardCommand, completion: @escaping (Result<[ForwardDestinationStatus], ShowroomError>) -> Void) {
            completion(.failure(.notJoined("nobody here")))
        }
        func forwardedPublishers(_ completion: @escaping ([EdgeForwardedPublisher]) -> Void) { completion([]) }
        func applyBans(_ bans: [RoomBan], completion: @escaping (Result<Int, ShowroomError>) -> Void) {
            self.bans.append(bans)
            completion(.success(bans.count))
        }
        func applyStages(_ stages: [RoomStage], completion: @escaping (Result<Int, ShowroomError>) -> Void) {
            self.stages.append(stages)
            completion(.success(0))
        }
        func channelsElsewhere(_ channels: [RoomChannelElsewhere]) { elsewhere.append(channels.map(\.channel)) }
        func applyRecordings(_ request: RoomEdgeRecordingsRequest, completion: @escaping (Result<Int, ShowroomError>) -> Void) {
            completion(.success(0))
        }
        func channelData(_ request: RoomChannelDataRequest, completion: @escaping (Result<RoomChannelDataResponse, ShowroomError>) -> Void) {
            completion(.success(RoomChannelDataResponse.with { $0.delivered = UInt32(request.uids.count) }))
        }
        func channelUsers(_ request: RoomChannelUsersRequest, completion: @escaping (Result<RoomChannelUsersResponse, ShowroomError>) -> Void) {
            guard request.channel == "show" else { return completion(.failure(.invalidArgument("no such channel here"))) }
            completion(.success(RoomChannelUsersResponse.with {
                $0.exists = true
                $0.users = [RoomChannelUser.with { $0.uid = 5; $0.broadcaster = true; $0.joinedAtMs = 1_000 }]
            }))
        }
    }

    private var network: InProcessNetwork!
    private var coordinator: InProcessNetwork.Node!
    private var edgeNode: InProcessNetwork.Node!
    private let edge = RecordingEdge()
    private var link: CoordinatorLink!
    private var reports: [RoomEdgeChannelReport] = []
    /// Reports the coordinator fails before it takes them.
    private var reportFailures = 0
    private var banListFailures = 0

    override func setUp() {
        network = InProcessNetwork(startMs: 1_700_000_000_000)
        coordinator = network.add("coord-1", role: .coordinator)
        edgeNode = network.add("edge-1", role: .edge)
        coordinator.serve(.edgeChannelReport) { [unowned self] request, respond in
            if reportFailures > 0 {
                reportFailures -= 1
                return respond(.failure(.unavailable("not now")))
            }
            let report = try! request.decodeBody(RoomEdgeChannelReport.self)
            reports.append(report)
            // A channel of the edge's that is placed on edge-2.
            respond(.success(RoomEdgeChannelReportResponse.with {
                guard report.hasChannels_p, report.channels.contains(where: { $0.name == "split" }) else { return }
                $0.elsewhere = [RoomChannelElsewhere.with {
                    $0.channel = "split"
                    $0.placedOn.edgeID = "edge-2"
                    $0.placedOn.clientEndpoint = "tcp://127.0.0.1:7002"
                }]
            }))
        }
        coordinator.serve(.banList) { [unowned self] _, respond in
            if banListFailures > 0 {
                banListFailures -= 1
                return respond(.failure(.unavailable("not now")))
            }
            var ban = RoomBan()
            ban.channel = "show"
            ban.uid = 8
            respond(.success(RoomBanListResponse.with { $0.bans = [ban] }))
        }
        coordinator.serve(.channelClaim) { request, respond in
            let body = try! request.decodeBody(RoomClaimChannelRequest.self)
            respond(.success(RoomClaimChannelResponse.with { $0.granted = body.channel != "taken" }))
        }
    }

    private func start() {
        link = CoordinatorLink.start(node: edgeNode, edge: edge, run: "run-1", logger: Logger(label: "test"))
    }

    private func activity(_ channel: String, uid: UInt32) -> RoomChannelActivity {
        var activity = RoomChannelActivity()
        activity.channel = channel
        activity.uid = uid
        activity.type = .audienceJoined
        return activity
    }

    func testActivitiesAreNumberedInTheRunAndAFailedReportIsSentAgainAfterTheRetryDelay() {
        reportFailures = 1
        start()
        link.add([activity("show", uid: 1), activity("show", uid: 2)])
        XCTAssertTrue(reports.isEmpty, "the coordinator failed the first report")
        XCTAssertEqual(link.pendingActivities, 2, "nothing is lost")

        // The retry waits 500 ms on the edge's clock, not on the wall's.
        network.advance(by: .milliseconds(400))
        XCTAssertTrue(reports.isEmpty)
        network.advance(by: .milliseconds(150))
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?.edgeID, "edge-1")
        XCTAssertEqual(reports.first?.activities.map(\.uid), [1, 2])
        XCTAssertEqual(reports.first?.activities.map(\.origin), ["edge-1/run-1", "edge-1/run-1"])
        XCTAssertEqual(reports.first?.activities.map(\.originSequence), [1, 2])
        XCTAssertEqual(link.pendingActivities, 0)
    }

    func testChannelsTheAnswerSaysArePlacedElsewhereReachTheEdge() {
        start()
        link.add([activity("split", uid: 1)])
        XCTAssertEqual(edge.elsewhere, [], "a report without the edge's channels is not answered so")
        link.setSummary([ChannelSummary(name: "split", broadcasters: [], connections: 1), ChannelSummary(name: "show", broadcasters: [], connections: 1)])
        network.advance(by: .milliseconds(50))
        XCTAssertEqual(reports.last?.channels.map(\.name), ["split", "show"])
        XCTAssertEqual(edge.elsewhere, [["split"]])
    }

    func testTheBanListIsAskedUntilACoordinatorAnswersAndAppliedOnce() {
        banListFailures = 2
        start()
        network.advance(by: .milliseconds(100))
        XCTAssertTrue(edge.bans.isEmpty, "the first answer failed: asked again a second later")
        network.advance(by: .seconds(1))
        XCTAssertTrue(edge.bans.isEmpty)
        network.advance(by: .seconds(1))
        XCTAssertEqual(edge.bans.map { $0.map(\.uid) }, [[8]])
        network.advance(by: .seconds(5))
        XCTAssertEqual(edge.bans.count, 1, "asked once it is answered")
    }

    func testClaimsGoToTheOwnerAndWithNoCoordinatorAliveTheJoinIsAdmitted() {
        start()
        link.claim("show")
        link.claim("taken")
        network.run()
        XCTAssertEqual(edge.claims.map(\.channel), ["show", "taken"])
        XCTAssertEqual(edge.claims.first?.outcome, .placed)
        guard case .refuse(let error) = edge.claims.last?.outcome else { return XCTFail("\(edge.claims)") }
        XCTAssertEqual(error.code, .unavailable, "refused and nowhere to go: not reachable now")

        // A coordinator that died before the membership says so: the claim times out, refused.
        network.hold("coord-1")
        link.claim("late")
        network.run()
        XCTAssertEqual(network.heldCount(for: "coord-1"), 1)
        network.dropHeld("coord-1")
        guard case .refuse(let late) = edge.claims.last?.outcome else { return XCTFail("\(edge.claims)") }
        XCTAssertEqual(late.code, .unavailable)

        network.kill("coord-1")
        network.membershipChanged()
        link.claim("alone")
        XCTAssertEqual(edge.claims.last?.channel, "alone")
        XCTAssertEqual(edge.claims.last?.outcome, .admit)
    }

    func testEdgeBansAndStagesFromACoordinatorReachTheEdgeAndGarbageIsRefused() throws {
        start()
        var ban = RoomBan()
        ban.channel = "show"
        ban.uid = 3
        let answer = try edgeNode.ask(.edgeBans, RoomEdgeBansRequest.with { $0.bans = [ban, ban] }, as: RoomEdgeBansResponse.self)
        XCTAssertEqual(answer.connectionsClosed, 2)
        XCTAssertEqual(edge.bans.last?.count, 2)
        _ = try edgeNode.ask(.edgeStage, RoomEdgeStageRequest(), as: RoomEdgeStageResponse.self)
        XCTAssertEqual(edge.stages.count, 1)

        var garbage = try WireEnvelope(request: .edgeBans, id: 99, body: RoomEdgeBansRequest())
        garbage.body = Data([0xFF, 0xFF, 0xFF])
        XCTAssertNotNil(try edgeNode.request(garbage).failure)
        XCTAssertEqual(edge.bans.count, 1, "nothing applied from garbage")
    }

    func testTheLinkAnswersWhoIsInAChannelNamingItsEdge() throws {
        start()
        let answer = try edgeNode.ask(.channelUsers, RoomChannelUsersRequest.with { $0.channel = "show" }, as: RoomChannelUsersResponse.self)
        XCTAssertEqual(answer.users.map(\.uid), [5])
        XCTAssertEqual(answer.users.map(\.edge), ["edge-1"])
        var garbage = try WireEnvelope(request: .channelUsers, id: 98, body: RoomChannelUsersRequest())
        garbage.body = Data([0xFF, 0xFF, 0xFF])
        XCTAssertEqual(try edgeNode.request(garbage).failure?.code, .malformedMessage)
    }
}
