import Routing
@testable import ShowroomKit
import ShowroomWire
import XCTest

/// The SDK's side of `CHANNEL_PLACE` against stand-in coordinators.
final class CoordinatorPlacementTests: XCTestCase {
    private var coordinators: [FakeCoordinator] = []
    private var loop: EngineLoop?

    override func tearDown() async throws {
        await loop?.shutdown()
        for coordinator in coordinators { coordinator.stop() }
        coordinators = []
    }

    private func start(_ ids: String...) throws -> [FakeCoordinator] {
        let started = try ids.map { try FakeCoordinator(id: $0) }
        coordinators += started
        return started
    }

    private func engineLoop() throws -> EngineLoop {
        let made = try EngineLoop(name: "placement-test")
        loop = made
        return made
    }

    /// Answers CHANNEL_PLACE with `edge`, or with `error` when given.
    private static func placing(on edge: EdgeAddress, orFailWith error: ShowroomError? = nil) -> FakeCoordinator.Handler {
        { request in
            guard request.kind == .channelPlace else { return WireEnvelope(responseTo: request, error: .unknownKind("\(request.kind)")) }
            if let error { return WireEnvelope(responseTo: request, error: error) }
            var response = RoomPlaceChannelResponse()
            response.edgeID = edge.id
            response.clientEndpoint = edge.endpoint
            return try? WireEnvelope(responseTo: request, body: response)
        }
    }

    func testPlacementAsksACoordinatorAndReportsTheFailedEdge() async throws {
        let coordinator = try start("coord-a")[0]
        let edgeB = EdgeAddress(id: "edge-b", endpoint: "tcp://127.0.0.1:7002")
        coordinator.answerStatus(with: [coordinator.member, member(id: "edge-a", role: "edge", client: "tcp://127.0.0.1:7001")])
        coordinator.answer(with: Self.placing(on: edgeB))
        let placement = CoordinatorPlacement(seeds: [coordinator.clusterEndpoint], loop: try engineLoop(), timeout: .seconds(2))

        let first = try await placement.edge(for: "show")
        XCTAssertEqual(first, edgeB)
        let again = try await placement.edge(for: "show", avoiding: EdgeAddress(id: "edge-a", endpoint: "tcp://127.0.0.1:7001"))
        XCTAssertEqual(again, edgeB)

        let requests = try coordinator.requests.map { try $0.decodeBody(RoomPlaceChannelRequest.self) }
        XCTAssertEqual(requests.map(\.channel), ["show", "show"])
        XCTAssertEqual(requests.map(\.unreachableEdge), ["", "edge-a"])
        let alive = try await placement.aliveCoordinators()
        XCTAssertEqual(alive.map(\.id), ["coord-a"])
        XCTAssertEqual(alive.first?.eventsEndpoint, coordinator.eventsEndpoint)
    }

    func testADeadSeedIsAskedAfterTheOneThatAnsweredAndTheListedCoordinatorsBecomeSeeds() async throws {
        let (alive, gone, later) = try { let started = try start("coord-a", "coord-b", "coord-c"); return (started[0], started[1], started[2]) }()
        alive.answerStatus(with: [alive.member, later.member])
        later.answerStatus(with: [later.member])
        gone.stop()
        let directory = ClusterDirectory(seeds: [gone.clusterEndpoint, alive.clusterEndpoint], loop: try engineLoop(),
                                         timeout: .milliseconds(500), cacheDuration: .zero)
        XCTAssertEqual(directory.candidates(), [gone.clusterEndpoint, alive.clusterEndpoint], "at first: the configured seeds in order")
        let status = try await directory.status()
        XCTAssertEqual(status.reporter, "coord-a")
        XCTAssertEqual(directory.candidates(), [alive.clusterEndpoint, gone.clusterEndpoint, later.clusterEndpoint],
                       "the seed that answered first, then the others, then the coordinators it listed")
        // The configured seeds all gone: a listed coordinator answers.
        alive.stop()
        let next = try await directory.status()
        XCTAssertEqual(next.reporter, "coord-c")
        XCTAssertEqual(directory.candidates().first, later.clusterEndpoint)
    }

    func testRefusalsPassThroughWithTheirCodesWithoutRetrying() async throws {
        let pair = try start("coord-a", "coord-b")
        let channel = key(ownedBy: "coord-a", among: ["coord-a", "coord-b"], prefix: "show")
        for coordinator in pair {
            coordinator.answerStatus(with: pair.map(\.member))
        }
        pair[0].answer(with: Self.placing(on: EdgeAddress(id: "x", endpoint: "x"), orFailWith: ShowroomError(.noEdgeAvailable, "no edge is alive")))
        pair[1].answer(with: Self.placing(on: EdgeAddress(id: "edge-b", endpoint: "tcp://127.0.0.1:7002")))
        let placement = CoordinatorPlacement(seeds: [pair[0].clusterEndpoint], loop: try engineLoop(), timeout: .seconds(2))
        do {
            _ = try await placement.edge(for: channel)
            XCTFail("placed although the owning coordinator refused")
        } catch {
            XCTAssertEqual(error.code, .noEdgeAvailable)
            XCTAssertEqual(error.code.rawValue, 4005)
            XCTAssertEqual(error.message, "no edge is alive")
        }
        XCTAssertEqual(pair[0].requests.count, 1, "the channel's owner is asked first")
        XCTAssertEqual(pair[1].requests.count, 0, "a refusal is an answer: nobody else is asked")
    }

    func testADeadCoordinatorIsSkippedForTheNextOne() async throws {
        let alive = try start("coord-b")[0]
        let ids = ["coord-a", "coord-b"]
        let channel = key(ownedBy: "coord-a", among: ids, prefix: "show")
        // coord-a is alive in the membership's eyes but nothing listens there.
        alive.answerStatus(with: [member(id: "coord-a", role: "coordinator", client: "tcp://127.0.0.1:1"), alive.member])
        let edge = EdgeAddress(id: "edge-b", endpoint: "tcp://127.0.0.1:7002")
        alive.answer(with: Self.placing(on: edge))
        let placement = CoordinatorPlacement(seeds: [alive.clusterEndpoint], loop: try engineLoop(), timeout: .milliseconds(300))
        let started = ContinuousClock.now
        let placed = try await placement.edge(for: channel)
        XCTAssertEqual(placed, edge)
        XCTAssertGreaterThanOrEqual(started.duration(to: .now), .milliseconds(300), "the dead owner was asked first")
        XCTAssertEqual(alive.requests.count, 1)
    }

    func testUnavailableCoordinatorIsSkippedForTheNextOne() async throws {
        let pair = try start("coord-a", "coord-b")
        let channel = key(ownedBy: "coord-a", among: ["coord-a", "coord-b"], prefix: "show")
        for coordinator in pair { coordinator.answerStatus(with: pair.map(\.member)) }
        pair[0].answer(with: Self.placing(on: EdgeAddress(id: "x", endpoint: "x"), orFailWith: .unavailable("shutting down")))
        let edge = EdgeAddress(id: "edge-b", endpoint: "tcp://127.0.0.1:7002")
        pair[1].answer(with: Self.placing(on: edge))
        let placement = CoordinatorPlacement(seeds: [pair[1].clusterEndpoint], loop: try engineLoop(), timeout: .seconds(2))
        let placed = try await placement.edge(for: channel)
        XCTAssertEqual(placed, edge)
        XCTAssertEqual(pair[0].requests.count, 1)
        XCTAssertEqual(pair[1].requests.count, 1)
    }

    func testWithoutCoordinatorsEdgesArePlacedByHashingOrRefused() async throws {
        // A plain member (an edge's node) answers the status: no coordinator in the cluster.
        let seed = try start("edge-node")[0]
        let edges = [member(id: "edge-a", role: "edge", client: "tcp://127.0.0.1:7001"),
                     member(id: "edge-b", role: "edge", client: "tcp://127.0.0.1:7002")]
        seed.answerStatus(with: edges)
        let loop = try engineLoop()
        let fallback = CoordinatorPlacement(seeds: [seed.clusterEndpoint], loop: loop, timeout: .seconds(2))
        let placed = try await fallback.edge(for: "show")
        XCTAssertEqual(placed.id, RendezvousHashing.owner(key: "show", among: ["edge-a", "edge-b"]))
        // Avoiding that edge gives the other one.
        let other = try await fallback.edge(for: "show", avoiding: placed)
        XCTAssertNotEqual(other.id, placed.id)

        let strict = CoordinatorPlacement(seeds: [seed.clusterEndpoint], loop: loop, timeout: .seconds(2), fallbackToEdges: false)
        do {
            _ = try await strict.edge(for: "show")
            XCTFail("placed without a coordinator")
        } catch {
            XCTAssertEqual(error.code, .noCoordinator)
            XCTAssertEqual(error.code.rawValue, 4007)
        }
        XCTAssertEqual(seed.requests.count, 0, "nothing but the status was asked")
    }

    func testClusterPlacementAvoidsTheFailedEdgeUnlessItIsTheOnlyOne() async throws {
        let seed = try start("edge-node")[0]
        let loop = try engineLoop()
        seed.answerStatus(with: [member(id: "edge-a", role: "edge", client: "tcp://127.0.0.1:7001"),
                                 member(id: "edge-b", role: "edge", client: "tcp://127.0.0.1:7002")])
        let placement = ClusterPlacement(seeds: [seed.clusterEndpoint], loop: loop, timeout: .seconds(2), cacheDuration: .zero)
        let first = try await placement.edge(for: "show")
        let second = try await placement.edge(for: "show", avoiding: first)
        XCTAssertNotEqual(first.id, second.id)
        seed.answerStatus(with: [member(id: "edge-a", role: "edge", client: "tcp://127.0.0.1:7001")])
        let only = try await placement.edge(for: "show", avoiding: EdgeAddress(id: "edge-a", endpoint: "tcp://127.0.0.1:7001"))
        XCTAssertEqual(only.id, "edge-a", "the only edge is tried again")
    }
}
