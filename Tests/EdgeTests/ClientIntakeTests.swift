import Edge
import Foundation
import ShowroomWire
import XCTest

/// ``ClientIntake``: what an edge does with a client's message before the plane sees it, with
/// plain values; hostile sizes, shapes, versions, kinds and headers beside the happy path.
final class ClientIntakeTests: XCTestCase {
    private let session = SessionID(5)

    private func request(_ kind: WireMessageKind = .edgeHeartbeat, id: UInt64 = 3) -> WireEnvelope {
        var envelope = WireEnvelope()
        envelope.kind = kind
        envelope.requestID = id
        envelope.protocolVersion = WireEnvelope.currentProtocolVersion
        return envelope
    }

    /// A media frame's envelope: a good Opus frame of 1200 bytes in `show` unless changed (the
    /// publisher's uid is the plane's to check).
    private func frame(_ change: (inout WireMediaHeader) -> Void = { _ in }) throws -> WireEnvelope {
        var header = WireMediaHeader()
        header.channel = "show"
        header.track = .audio
        header.codec = .opus
        header.payloadSize = 1200
        change(&header)
        return try WireEnvelope(request: .mediaFrame, id: 0, body: header)
    }

    // MARK: Size

    func testAnOversizedMessageIsAnsweredFromItsHeadWithoutDecoding() {
        XCTAssertFalse(ClientIntake.isOversize(1000, maxMessageBytes: 1000))
        XCTAssertTrue(ClientIntake.isOversize(1001, maxMessageBytes: 1000))
        guard case .refuse(let head, let error) = ClientIntake.oversize(5000, maxMessageBytes: 1000, head: request(.joinChannel)) else {
            return XCTFail("a request over the limit is refused")
        }
        XCTAssertEqual(head.requestID, 3, "answered to its own request id")
        XCTAssertEqual(error.code, .tooLarge)
        XCTAssertTrue(error.message.hasPrefix("the message is 5000 bytes; this edge reads at most 1000 bytes per message"), error.message)
        guard case .refuseFrame(let frameError, "", nil) = ClientIntake.oversize(5000, maxMessageBytes: 1000, head: request(.mediaFrame, id: 0))
        else { return XCTFail("a frame over the limit is refused as frames are") }
        XCTAssertEqual(frameError.code, .tooLarge)
        var response = request(.joinChannel)
        response.isResponse = true
        XCTAssertEqual(ClientIntake.oversize(5000, maxMessageBytes: 1000, head: response), .drop, "a response is never answered")
    }

    // MARK: Envelope and shape

    func testAnUnreadableEnvelopeIsAnErrorEventAndAResponseIsDropped() {
        let broken = ShowroomError.malformed("not an envelope")
        XCTAssertEqual(ClientIntake.message(.failure(broken), attachments: 0), .refuse(WireEnvelope(), broken))
        XCTAssertEqual(ClientIntake.refusal(of: WireEnvelope(), broken, to: session),
                       .directive(.send(.error(broken, channel: "", track: nil), to: session)))
        var response = request()
        response.isResponse = true
        XCTAssertEqual(ClientIntake.message(.success(response), attachments: 4), .drop)
    }

    func testANewerProtocolVersionIsRefused() {
        var newer = request()
        newer.protocolVersion = WireEnvelope.currentProtocolVersion + 1
        guard case .refuse(_, let error) = ClientIntake.message(.success(newer), attachments: 0) else { return XCTFail("refused") }
        XCTAssertEqual(error.code, .unsupportedVersion)
        XCTAssertTrue(error.message.hasSuffix("upgrade the edge"), error.message)
        var older = request()
        older.protocolVersion = 0
        XCTAssertEqual(ClientIntake.message(.success(older), attachments: 0), .request(older), "an older client is served")
    }

    func testEachKindHasItsShape() {
        let heartbeat = request()
        XCTAssertEqual(ClientIntake.message(.success(heartbeat), attachments: 0), .request(heartbeat))
        guard case .refuse(_, let error) = ClientIntake.message(.success(heartbeat), attachments: 2) else { return XCTFail("refused") }
        XCTAssertEqual(error.code, .malformedMessage)
        XCTAssertTrue(error.message.hasSuffix("with no attachments; got 3 frames"), error.message)

        let media = request(.mediaFrame, id: 0)
        XCTAssertEqual(ClientIntake.message(.success(media), attachments: 1), .frame(media))
        for attachments in [0, 2, 1000] {
            guard case .refuseFrame(let error, "", nil) = ClientIntake.message(.success(media), attachments: attachments) else {
                return XCTFail("a frame with \(attachments) attachments is refused")
            }
            XCTAssertEqual(error.message, "a media frame is two frames, [envelope][payload]; got \(attachments + 1) frames")
        }
    }

    func testALongRoutingIDIsToldWhy() {
        let refusal = ClientIntake.longRoutingIDRefusal
        XCTAssertTrue(refusal.isResponse)
        XCTAssertEqual(refusal.error.message, "client routing ids longer than 7 bytes are not accepted; do not set ZMQ_ROUTING_ID")
    }

    // MARK: Media headers

    func testAGoodFrameIsForwardedWithItsInfo() throws {
        guard case .forward(let header, let info) = ClientIntake.frame(try frame(), payloadSize: 1200, fromForwardLink: false) else {
            return XCTFail("forwarded")
        }
        XCTAssertEqual(header.channel, "show")
        XCTAssertEqual(info, MediaFrameInfo(channel: "show", publisherUID: 0, kind: .audio, isKeyframe: false, payloadSize: 1200))
    }

    func testHostileHeadersAreRefusedNamingWhatIsKnown() throws {
        var garbage = WireEnvelope()
        garbage.kind = .mediaFrame
        garbage.body = Data([0xFF, 0xFF, 0xFF])
        guard case .refuse(let error, "", nil) = ClientIntake.frame(garbage, payloadSize: 0, fromForwardLink: true) else {
            return XCTFail("an undecodable header is refused naming no channel")
        }
        XCTAssertEqual(error.code, .malformedMessage)
        guard case .refuse(let sizeError, "show", .audio) = ClientIntake.frame(try frame(), payloadSize: 1199, fromForwardLink: false) else {
            return XCTFail("a payload of another size than announced is refused in its channel and track")
        }
        XCTAssertEqual(sizeError.code, .malformedMessage)
        guard case .refuse(let trackError, "show", nil) = ClientIntake.frame(try frame { $0.track = .unspecified }, payloadSize: 1200,
                                                                               fromForwardLink: false)
        else { return XCTFail("an unknown track is refused naming no track") }
        XCTAssertEqual(trackError.code, .unknownTrack)
    }

    func testOnlyAnEdgeToEdgeLinkMayNameOtherChannels() throws {
        let also = try frame { $0.alsoChannels = ["pk-2"] }
        guard case .refuse(let error, "show", .audio) = ClientIntake.frame(also, payloadSize: 1200, fromForwardLink: false) else {
            return XCTFail("a client's also_channels is refused")
        }
        XCTAssertEqual(error.code, .invalidArgument)
        XCTAssertTrue(error.message.hasPrefix("media header also_channels is for edge-to-edge links only"), error.message)
        guard case .forward = ClientIntake.frame(also, payloadSize: 1200, fromForwardLink: true) else { return XCTFail("a link's is taken") }
        var asked = false
        _ = ClientIntake.frame(try frame(), payloadSize: 1200, fromForwardLink: { asked = true; return false }())
        XCTAssertFalse(asked, "who sent a frame naming no other channel is not looked up")
    }

    // MARK: Routing and refusals

    func testOneFrameMessagesGoWhereTheirKindSays() throws {
        XCTAssertEqual(ClientIntake.route(request(.startForward)), .forward)
        guard case .refuse(let oneWay) = ClientIntake.route(request(.stopForward, id: 0)) else {
            return XCTFail("a forwarding request without a request id is refused: its answer carries the destinations")
        }
        XCTAssertEqual(oneWay.code, .invalidArgument)
        XCTAssertEqual(ClientIntake.route(request(.relayKeyframeRequest, id: 0)), .relayKeyframeRequest)
        XCTAssertEqual(ClientIntake.route(request(.edgeMovedOut, id: 0)), .movedOut)
        var body = EdgeLeaveChannelRequest()
        body.channel = "show"
        XCTAssertEqual(ClientIntake.route(try WireEnvelope(request: .leaveChannel, id: 1, body: body)), .plane(.leave(channel: "show")))
        body.channel = "sh\u{0}w"
        guard case .refuse(let error) = ClientIntake.route(try WireEnvelope(request: .leaveChannel, id: 1, body: body)) else {
            return XCTFail("a hostile channel name is refused")
        }
        XCTAssertEqual(error.code, .invalidArgument)
        guard case .refuse(let kindError) = ClientIntake.route(request(.coordinatorState)) else {
            return XCTFail("a kind no client sends an edge is refused")
        }
        XCTAssertEqual(kindError.code, .unknownKind)
    }

    func testARefusalAnswersAsTheMessageAsks() {
        let error = ShowroomError.unavailable("no")
        XCTAssertEqual(ClientIntake.refusal(of: request(.joinChannel, id: 9), error, to: session),
                       .directive(.reply(EdgeReply(requestID: 9, kind: .join, result: .failure(error)), to: session)))
        XCTAssertEqual(ClientIntake.refusal(of: request(.joinChannel, id: 0), error, to: session),
                       .directive(.send(.error(error, channel: "", track: nil), to: session)), "one-way: an error event")
        let forward = request(.startForward, id: 4)
        XCTAssertEqual(ClientIntake.refusal(of: forward, error, to: session), .response(WireEnvelope(responseTo: forward, error: error)),
                       "a kind the plane has no reply for: a failed response")
    }
}
