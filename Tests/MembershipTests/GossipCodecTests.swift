import ShowroomWire
import Foundation
import XCTest

@testable import Membership

final class GossipCodecTests: XCTestCase {
    private let sender = MemberAddress(id: "edge-1", endpoint: "tcp://127.0.0.1:7101")
    private let metadata = MemberMetadata(
        role: "edge", clusterEndpoint: "tcp://127.0.0.1:7102", clientEndpoint: "tcp://127.0.0.1:7202",
        adminEndpoint: "http://127.0.0.1:8102", version: "0.1.0",
        load: MemberLoad(channels: 4, connections: 120, cpuPercent: 12.5))

    private var updates: [MemberUpdate] {
        [
            MemberUpdate(id: "edge-2", state: .alive, incarnation: 3, metadata: metadata),
            MemberUpdate(id: "coordinator-1", state: .suspect, incarnation: 7, from: "edge-1"),
            MemberUpdate(id: "callsignal-1", state: .dead, incarnation: 1, from: "edge-3"),
            MemberUpdate(id: "edge-9", state: .left, incarnation: 12, metadata: metadata, from: "edge-9"),
        ]
    }

    func testEveryMessageKindSurvivesARoundTrip() throws {
        let messages: [GossipMessage] = [
            .ping(.init(sender: sender, sequence: 1, target: "edge-2", updates: updates)),
            .ping(.init(sender: sender, sequence: .max, target: "edge-2")),
            .pingRequest(.init(
                sender: sender, sequence: 42, target: MemberAddress(id: "edge-2", endpoint: "tcp://127.0.0.1:7102"),
                wantsNack: true, updates: updates)),
            .pingRequest(.init(
                sender: sender, sequence: 43, target: MemberAddress(id: "edge-2", endpoint: "tcp://h:1"), wantsNack: false)),
            .ack(.init(sender: sender, sequence: 42, updates: updates)),
            .nack(.init(sender: sender, sequence: 42)),
            .pushPull(.init(
                sender: sender, isReply: false, isJoin: true,
                members: updates.map { var u = $0; u.metadata = metadata; return u })),
            .pushPull(.init(sender: sender, isReply: true, members: [MemberUpdate(id: "edge-2", state: .alive, incarnation: 0, metadata: metadata)])),
            .broadcast(.init(sender: sender, updates: updates)),
        ]
        XCTAssertEqual(Set(messages.map(\.kind)), Set(GossipMessage.Kind.allCases))
        for message in messages {
            let bytes = try GossipCodec.encode(message)
            XCTAssertEqual(try GossipCodec.decode(bytes), message, "\(message.kind)")
            XCTAssertEqual(try GossipCodec.decode(Data(bytes)), message, "\(message.kind) from Data")
        }
    }

    func testItTravelsAsTheBodyOfAGossipEnvelope() throws {
        let message = GossipMessage.ack(.init(sender: sender, sequence: 9, updates: updates))
        let envelope = try WireEnvelope(request: .gossip, id: 0, body: GossipCodec.packet(for: message), senderNode: "edge-1")
        let received = try WireEnvelope.decode(frame: try envelope.serializedBytes() as [UInt8])
        XCTAssertEqual(received.kind, .gossip)
        XCTAssertEqual(received.kind.rawValue, 100)
        XCTAssertEqual(try GossipCodec.decode(received.body), message)
    }

    func testGarbageIsAMalformedMessage() {
        assertMalformed([0xFF, 0xFF, 0xFF, 0xFF], "not protobuf")
        assertMalformed([0x0A, 0x10, 0x01], "truncated")
    }

    func testMissingPiecesAreMalformed() throws {
        var packet = GossipCodec.packet(for: .nack(.init(sender: sender, sequence: 1)))
        packet.clearSender()
        assertMalformed(try packet.serializedBytes(), "no sender")

        packet = GossipCodec.packet(for: .nack(.init(sender: sender, sequence: 1)))
        packet.sender.endpoint = ""
        assertMalformed(try packet.serializedBytes(), "no sender endpoint")

        packet = GossipCodec.packet(for: .nack(.init(sender: sender, sequence: 1)))
        packet.body = nil
        assertMalformed(try packet.serializedBytes(), "no body")

        packet = GossipCodec.packet(for: .ping(.init(sender: sender, sequence: 1, target: "x")))
        packet.ping.target = ""
        assertMalformed(try packet.serializedBytes(), "ping without target")

        packet = GossipCodec.packet(for: .broadcast(.init(sender: sender, updates: updates)))
        packet.broadcast.updates[0].clearMetadata()
        assertMalformed(try packet.serializedBytes(), "alive without metadata")

        packet = GossipCodec.packet(for: .broadcast(.init(sender: sender, updates: updates)))
        packet.broadcast.updates[1].state = .unspecified
        assertMalformed(try packet.serializedBytes(), "update without state")

        packet = GossipCodec.packet(for: .broadcast(.init(sender: sender, updates: updates)))
        packet.broadcast.updates[2].id = ""
        assertMalformed(try packet.serializedBytes(), "update without id")

        packet = GossipCodec.packet(for: .pushPull(.init(sender: sender, isReply: false, members: [updates[1]])))
        assertMalformed(try packet.serializedBytes(), "push-pull row without metadata")
    }

    func testUpdatesWithAStateFromANewerVersionAreSkipped() throws {
        var packet = GossipCodec.packet(for: .broadcast(.init(sender: sender, updates: updates)))
        packet.broadcast.updates[1].state = .UNRECOGNIZED(9)
        let decoded = try GossipCodec.decode(try packet.serializedBytes() as [UInt8])
        var expected = updates
        expected.remove(at: 1)
        XCTAssertEqual(decoded, .broadcast(.init(sender: sender, updates: expected)))
    }

    private func assertMalformed(_ bytes: [UInt8], _ what: String, line: UInt = #line) {
        do {
            let message = try GossipCodec.decode(bytes)
            XCTFail("\(what): decoded \(message)", line: line)
        } catch {
            XCTAssertEqual(error.code, .malformedMessage, "\(what): \(error)", line: line)
            XCTAssertFalse(error.message.isEmpty, line: line)
        }
    }
}
