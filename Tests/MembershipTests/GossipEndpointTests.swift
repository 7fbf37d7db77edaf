import Foundation
import ShowroomWire
import XCTest

@testable import Membership

/// Found by fuzzing: an update whose metadata names no cluster endpoint made the member send
/// gossip to "" later. The decoder refuses it.
final class GossipEndpointTests: XCTestCase {
    func testMetadataWithoutAClusterEndpointIsMalformed() throws {
        var packet = GossipPacket()
        packet.sender.id = "edge-1"
        packet.sender.endpoint = "tcp://127.0.0.1:7101"
        var update = GossipMemberUpdate()
        update.id = "edge-2"
        update.state = .alive
        update.incarnation = 1
        update.metadata.role = "edge"
        packet.ping.sequence = 1
        packet.ping.target = "edge-1"
        packet.ping.updates = [update]
        XCTAssertThrowsError(try GossipCodec.decode(try packet.serializedData())) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .malformedMessage)
        }
        packet.ping.updates[0].metadata.clusterEndpoint = "tcp://127.0.0.1:7102"
        XCTAssertNoThrow(try GossipCodec.decode(try packet.serializedData()))
    }
}
