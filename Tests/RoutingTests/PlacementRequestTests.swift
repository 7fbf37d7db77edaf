import Routing
import ShowroomWire
import XCTest

/// What a placement or claim request is checked for, and what a placement naming an edge its
/// client could not reach needs first (``ChannelDirectory/probe(for:endpoint:linkBroken:)``).
final class PlacementRequestTests: XCTestCase {
    private func placement(_ channel: String = "show", preferring: [String] = [], unreachable: String = "") -> RoomPlaceChannelRequest {
        RoomPlaceChannelRequest.with {
            $0.channel = channel
            $0.preferredEdges = preferring
            $0.unreachableEdge = unreachable
        }
    }

    private func code(_ body: () throws -> Void) -> ShowroomError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? ShowroomError)?.code ?? .unrecognized
        }
    }

    func testAPlacementPrefersAtMostFourEdgesEachANodeID() {
        XCTAssertNil(code { try ChannelDirectory.check(placement(preferring: ["e1", "e2", "e3", "e4"])) })
        XCTAssertEqual(code { try ChannelDirectory.check(placement(preferring: ["e1", "e2", "e3", "e4", "e5"])) }, .invalidArgument)
        XCTAssertEqual(code { try ChannelDirectory.check(placement(preferring: [""])) }, .invalidArgument, "an empty id")
        XCTAssertNil(code { try ChannelDirectory.check(placement(preferring: [String(repeating: "e", count: 64)])) })
        XCTAssertEqual(code { try ChannelDirectory.check(placement(preferring: [String(repeating: "e", count: 65)])) }, .invalidArgument)
        XCTAssertEqual(code { try ChannelDirectory.check(placement("")) }, .invalidArgument, "no channel")
        XCTAssertEqual(code { try ChannelDirectory.check(placement(String(repeating: "c", count: 65))) }, .invalidArgument)
    }

    func testAClaimNamesTheClaimingEdge() {
        let claim = { (channel: String, edge: String) in RoomClaimChannelRequest.with {
            $0.channel = channel
            $0.edgeID = edge
        } }
        XCTAssertNil(code { try ChannelDirectory.check(claim("show", "edge-1")) })
        XCTAssertEqual(code { try ChannelDirectory.check(claim("show", "")) }, .invalidArgument)
        XCTAssertEqual(code { try ChannelDirectory.check(claim("show", String(repeating: "é", count: 33))) }, .invalidArgument,
                       "64 bytes at most, not characters")
        XCTAssertEqual(code { try ChannelDirectory.check(claim("", "edge-1")) }, .invalidArgument)
    }

    func testAnEdgeTheClientCouldNotReachIsProbedUnlessItsLinkBrokeOrItIsUnknown() {
        let endpoints = ["edge-1": "tcp://e1", "edge-2": "tcp://e2"]
        let broken: Set<String> = ["tcp://e2"]
        let probe = { (request: RoomPlaceChannelRequest) in
            ChannelDirectory.probe(for: request, endpoint: { endpoints[$0] }, linkBroken: { broken.contains($0) })
        }
        XCTAssertEqual(probe(placement()), .none, "the client reached its edges")
        XCTAssertEqual(probe(placement(unreachable: "edge-9")), .none, "an edge not known here is placed around as usual")
        XCTAssertEqual(probe(placement(unreachable: "edge-2")), .avoid(edge: "edge-2"), "its process died: no probe needed")
        XCTAssertEqual(probe(placement(unreachable: "edge-1")), .probe(edge: "edge-1", endpoint: "tcp://e1"))
    }
}
