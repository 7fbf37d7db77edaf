import Foundation
import ShowroomWire
import SwiftProtobuf
import XCTest

final class EnvelopeRoundTripTests: XCTestCase {
    private func roundTrip(_ envelope: WireEnvelope) throws -> WireEnvelope {
        let frame: Data = try envelope.serializedBytes()
        return try WireEnvelope.decode(frame: frame)
    }

    func testRequestWithBodyRoundTrips() throws {
        let request = try WireEnvelope(
            request: .nodeInfo, id: 42, body: WireNodeInfoRequest(), senderNode: "edge-1", deadlineMs: 1500)
        let decoded = try roundTrip(request)

        XCTAssertEqual(decoded, request)
        XCTAssertEqual(decoded.kind, .nodeInfo)
        XCTAssertEqual(decoded.requestID, 42)
        XCTAssertFalse(decoded.isResponse)
        XCTAssertEqual(decoded.senderNode, "edge-1")
        XCTAssertEqual(decoded.deadlineMs, 1500)
        XCTAssertEqual(decoded.protocolVersion, WireEnvelope.currentProtocolVersion)
        XCTAssertEqual(decoded.protocolVersion, 1)
        XCTAssertFalse(decoded.hasError)
        XCTAssertNil(decoded.failure)
        XCTAssertEqual(try decoded.decodeBody(WireNodeInfoRequest.self), WireNodeInfoRequest())
    }

    func testResponseWithBodyRoundTrips() throws {
        let request = try WireEnvelope(request: .nodeInfo, id: 7, body: WireNodeInfoRequest())
        var info = WireNodeInfo()
        info.nodeID = "coordinator-1"
        info.role = .coordinator
        info.version = "0.1.0"
        info.clusterEndpoint = "tcp://10.0.0.5:7100"
        info.uptimeMs = 123_456_789
        info.pid = 4242

        let response = try WireEnvelope(responseTo: request, body: info, senderNode: "coordinator-1")
        XCTAssertEqual(response.kind, .nodeInfo)
        XCTAssertEqual(response.requestID, 7)
        XCTAssertTrue(response.isResponse)

        let decoded = try roundTrip(response)
        XCTAssertEqual(decoded, response)
        XCTAssertNil(decoded.failure)
        XCTAssertEqual(try decoded.decodeBody(WireNodeInfo.self), info)
    }

    func testErrorResponseRoundTrips() throws {
        let request = try WireEnvelope(request: .nodeInfo, id: 9, body: WireNodeInfoRequest())
        let error = ShowroomError.unavailable("edge-2 is draining; reconnect to another edge")
        let response = WireEnvelope(responseTo: request, error: error, senderNode: "edge-2")

        let decoded = try roundTrip(response)
        XCTAssertEqual(decoded, response)
        XCTAssertTrue(decoded.isResponse)
        XCTAssertEqual(decoded.requestID, 9)
        XCTAssertTrue(decoded.hasError)
        XCTAssertTrue(decoded.body.isEmpty)
        XCTAssertEqual(decoded.error.code, .unavailable)
        XCTAssertEqual(decoded.failure, error)
        XCTAssertEqual(decoded.protocolVersion, WireEnvelope.currentProtocolVersion)
    }

    func testGarbageFrameIsMalformed() {
        let garbage: [[UInt8]] = [
            [0xFF, 0xFF, 0xFF],  // truncated varint
            [0x0F],  // field 1, wire type 7 (invalid)
            [0x32, 0x10, 0x01],  // body: length 16, one byte present
            Array("not protobuf at all".utf8),
        ]
        for bytes in garbage {
            XCTAssertThrowsError(try WireEnvelope.decode(frame: bytes), "\(bytes)") { error in
                guard let error = error as? ShowroomError else {
                    return XCTFail("expected ShowroomError, got \(type(of: error)): \(error)")
                }
                XCTAssertEqual(error.code, .malformedMessage)
                XCTAssertTrue(error.description.hasPrefix("E1000 malformed message: "), error.description)
                XCTAssertTrue(error.message.contains("Envelope"), error.message)
            }
        }
    }

    func testEmptyFrameDecodesAsDefaultEnvelope() throws {
        // Proto3: every field at its default. Receivers must then reject kind UNSPECIFIED themselves.
        let envelope = try WireEnvelope.decode(frame: Data())
        XCTAssertEqual(envelope.kind, .unspecified)
        XCTAssertEqual(envelope.protocolVersion, 0)
    }

    func testBodyOfWrongShapeIsMalformedAndNamesTheKind() throws {
        var envelope = WireEnvelope()
        envelope.kind = .mediaFrame
        envelope.requestID = 3
        envelope.body = Data([0xFF, 0xFF, 0xFF])

        XCTAssertThrowsError(try envelope.decodeBody(WireMediaHeader.self)) { error in
            guard let error = error as? ShowroomError else {
                return XCTFail("expected ShowroomError, got \(type(of: error)): \(error)")
            }
            XCTAssertEqual(error.code, .malformedMessage)
            XCTAssertTrue(error.message.contains("mediaFrame"), error.message)
            XCTAssertTrue(error.message.contains("showroom.wire.MediaHeader"), error.message)
        }
    }

    func testUnknownEnumValuesSurviveRoundTrip() throws {
        // Proto3 enums are open: a value from a newer peer must pass through unchanged.
        var envelope = WireEnvelope()
        envelope.kind = .UNRECOGNIZED(377)
        envelope.requestID = 1
        envelope.isResponse = true
        envelope.error.code = .UNRECOGNIZED(4321)
        envelope.error.message = "room is full"

        var header = WireMediaHeader()
        header.track = .UNRECOGNIZED(9)
        header.codec = .UNRECOGNIZED(17)
        envelope.body = try header.serializedBytes()

        let decoded = try roundTrip(envelope)
        XCTAssertEqual(decoded.kind, .UNRECOGNIZED(377))
        XCTAssertEqual(decoded.kind.rawValue, 377)
        XCTAssertEqual(decoded.error.code, .UNRECOGNIZED(4321))

        let failure = try XCTUnwrap(decoded.failure)
        XCTAssertEqual(failure.code, .unrecognized)
        XCTAssertEqual(failure.number, 4321)
        XCTAssertEqual(failure.wire, decoded.error)
        XCTAssertEqual(failure.description, "E4321 unrecognized error: room is full")

        let decodedHeader = try decoded.decodeBody(WireMediaHeader.self)
        XCTAssertEqual(decodedHeader.track, .UNRECOGNIZED(9))
        XCTAssertEqual(decodedHeader.codec, .UNRECOGNIZED(17))
        // And re-encoding keeps the numbers, so an older relay forwards them intact.
        XCTAssertEqual(try decodedHeader.serializedBytes() as Data, envelope.body)
    }

    func testUnknownFieldsSurviveRoundTrip() throws {
        // A newer peer may add fields; an older relay must forward them untouched.
        var envelope = try WireEnvelope(request: .nodeInfo, id: 5, body: WireNodeInfoRequest())
        var frame: Data = try envelope.serializedBytes()
        frame.append(contentsOf: [0xA0, 0x06, 0x2A])  // field 100 (varint) = 42
        envelope = try WireEnvelope.decode(frame: frame)
        XCTAssertEqual(try envelope.serializedBytes() as Data, frame)
    }

    func testMediaHeaderRoundTrips() throws {
        var header = WireMediaHeader()
        header.channel = "live/alice"
        header.publisherUid = 1001
        header.track = .video
        header.codec = .vp8
        header.sequence = .max
        header.captureTimeUs = 1_700_000_000_123_456
        header.keyframe = true
        header.audioLevel = 0
        header.width = 1280
        header.height = 720
        header.payloadSize = 48_213

        let envelope = try WireEnvelope(request: .mediaFrame, id: 0, body: header, senderNode: "edge-3")
        XCTAssertEqual(envelope.requestID, 0, "media frames are one-way")

        let decoded = try roundTrip(envelope)
        XCTAssertEqual(decoded.kind, .mediaFrame)
        let decodedHeader = try decoded.decodeBody(WireMediaHeader.self)
        XCTAssertEqual(decodedHeader, header)
        XCTAssertEqual(decodedHeader.sequence, UInt32.max)
        XCTAssertEqual(decodedHeader.captureTimeUs, 1_700_000_000_123_456)

        var audio = WireMediaHeader()
        audio.channel = "live/alice"
        audio.track = .audio
        audio.codec = .opus
        audio.sequence = 17
        audio.audioLevel = 63
        audio.payloadSize = 160
        let audioFrame = try WireEnvelope(request: .mediaFrame, id: 0, body: audio)
        XCTAssertEqual(try roundTrip(audioFrame).decodeBody(WireMediaHeader.self), audio)
    }
}
