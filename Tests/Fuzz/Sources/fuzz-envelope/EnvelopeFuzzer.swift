import Edge
import Foundation
import FuzzDriver
import FuzzSupport
import Membership
import ShowroomWire
import SwiftProtobuf

// Frame 0 of every Showroom message, as any process receives it: the envelope decoded straight
// from the frame's memory, then its body decoded as its kind says. Properties checked beyond
// "does not crash":
// - a frame that does not decode fails with MALFORMED_MESSAGE, never another code;
// - what decodes re-encodes to something that decodes to the same envelope;
// - an edge request, event or reply that decodes re-encodes (the project's own encoder) to the
//   same value; a gossip message too;
// - a media header's audio level reaches the plane clamped to 0–100.
// Input: frames as in `FuzzFrames`; the control byte is unused.

@main
enum Fuzzer {
    static func main() {
        runFuzzer { data, size in fuzz(data, size) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    for frame in FuzzFrames(UnsafeRawBufferPointer(start: data, count: size)) {
        check(frame.bytes)
    }
    return 0
}

private func check(_ bytes: UnsafeRawBufferPointer) {
    let envelope: WireEnvelope
    do {
        envelope = try WireEnvelope.decode(frame: bytes)
    } catch {
        expect(error.code == .malformedMessage, "an undecodable frame fails with MALFORMED_MESSAGE, got \(error.code)")
        return
    }
    guard let again = try? WireEnvelope.decode(frame: envelope.serializedData()) else {
        expect(false, "a decoded envelope re-encodes to a decodable frame")
        return
    }
    expect(again == envelope, "an envelope survives re-encoding unchanged")
    if let failure = envelope.failure {
        _ = failure.description
        expect(WireEnvelope(responseTo: envelope, error: failure).failure == failure, "an error survives re-encoding")
    }
    body(of: envelope)
}

private func body(of envelope: WireEnvelope) {
    switch envelope.kind {
    case .gossip:
        guard let message = try? GossipCodec.decode(envelope.body) else { return }
        roundTrip(message)
    case .mediaFrame:
        guard let header = try? envelope.decodeBody(WireMediaHeader.self) else { return }
        guard let info = try? EdgeCodec.checkedFrameInfo(header: header, payloadSize: Int(header.payloadSize)) else { return }
        expect(info.audioLevel <= 100, "the audio level reaches the plane within 0–100")
        expect(info.channel == header.channel && info.publisherUID == header.publisherUid, "frame info names the header's track")
    case .roomCreate: decode(envelope, RoomCreateRoomRequest.self, RoomCreateRoomResponse.self)
    case .roomList: decode(envelope, RoomListRoomsRequest.self, RoomListRoomsResponse.self)
    case .roomGet: decode(envelope, RoomGetRoomRequest.self, RoomGetRoomResponse.self)
    case .roomJoin: decode(envelope, RoomJoinRoomRequest.self, RoomJoinRoomResponse.self)
    case .roomLeave: decode(envelope, RoomLeaveRoomRequest.self, RoomLeaveRoomResponse.self)
    case .roomClose: decode(envelope, RoomCloseRoomRequest.self, RoomCloseRoomResponse.self)
    case .roomChatSend: decode(envelope, RoomSendChatRequest.self, RoomSendChatResponse.self)
    case .roomChatHistory: decode(envelope, RoomChatHistoryRequest.self, RoomChatHistoryResponse.self)
    case .channelPlace: decode(envelope, RoomPlaceChannelRequest.self, RoomPlaceChannelResponse.self)
    case .channelClaim: decode(envelope, RoomClaimChannelRequest.self, RoomClaimChannelResponse.self)
    case .edgeChannelReport: decode(envelope, RoomEdgeChannelReport.self, RoomEdgeChannelReportResponse.self)
    case .kick: decode(envelope, RoomKickRequest.self, RoomKickResponse.self)
    case .coordinatorState: decode(envelope, RoomStateBatch.self, RoomStateBatchResponse.self)
    case .edgeBans:
        guard !envelope.isResponse, let request = try? envelope.decodeBody(RoomEdgeBansRequest.self) else { return }
        // Whatever the clock values, placing bans on the plane's clock must not trap.
        for (now, unixNowMs) in [(Duration.zero, Int64(0)), (.seconds(1_000_000), Int64.max), (.seconds(-5), Int64.min)] {
            if let bans = try? EdgeCodec.bans(request.bans, now: now, unixNowMs: unixNowMs) {
                expect(bans.count == request.bans.count, "every ban is checked and kept, or all are refused")
            }
        }
    case .nodeInfo: decode(envelope, WireNodeInfoRequest.self, WireNodeInfo.self)
    default:
        edgeMessage(envelope)
    }
}

private func decode<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    _ envelope: WireEnvelope, _ request: Request.Type, _ response: Response.Type
) {
    if envelope.isResponse {
        _ = try? envelope.decodeBody(Response.self)
    } else {
        _ = try? envelope.decodeBody(Request.self)
    }
}

/// Client requests, their replies and the edge's events: decoded, re-encoded, decoded again.
private func edgeMessage(_ envelope: WireEnvelope) {
    if EdgeCodec.requestKind(of: envelope.kind) != nil {
        if envelope.isResponse {
            guard let reply = try? EdgeCodec.reply(from: envelope) else { return }
            guard let encoded = try? EdgeCodec.envelope(reply: reply) else {
                expect(false, "a decoded reply re-encodes: \(reply)")
                return
            }
            expect((try? EdgeCodec.reply(from: encoded)) == reply, "a reply survives re-encoding: \(reply)")
        } else {
            guard let request = try? EdgeCodec.request(from: envelope) else { return }
            guard let encoded = try? EdgeCodec.envelope(request: request, id: envelope.requestID) else {
                expect(false, "a decoded request re-encodes: \(request)")
                return
            }
            expect((try? EdgeCodec.request(from: encoded)) == request, "a request survives re-encoding: \(request)")
        }
        return
    }
    guard let event = try? EdgeCodec.event(from: envelope) else { return }
    guard let encoded = try? EdgeCodec.envelope(event: event) else {
        expect(false, "a decoded event re-encodes: \(event)")
        return
    }
    expect((try? EdgeCodec.event(from: encoded)) == event, "an event survives re-encoding: \(event)")
}

/// A gossip message the decoder accepted is one the encoder can send and the decoder accepts
/// again, unchanged (compared as bytes: a load's CPU figure may be NaN).
private func roundTrip(_ message: GossipMessage) {
    guard let bytes = try? GossipCodec.encode(message) else {
        expect(false, "a decoded gossip \(message.kind) message re-encodes")
        return
    }
    guard let again = try? GossipCodec.decode(bytes) else {
        expect(false, "a re-encoded gossip \(message.kind) message decodes")
        return
    }
    expect((try? GossipCodec.encode(again)) == bytes, "a gossip \(message.kind) message survives re-encoding")
}
