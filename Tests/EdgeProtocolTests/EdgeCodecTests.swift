import EdgeProtocol
import Foundation
import ShowroomWire
import XCTest

/// The wire side: every request, reply and event survives encoding and decoding (through bytes),
/// and bad input becomes the right error.
final class EdgeCodecTests: XCTestCase {
    /// Serializes and parses an envelope, as it travels.
    private func travel(_ envelope: WireEnvelope) throws -> WireEnvelope {
        try WireEnvelope(serializedBytes: try envelope.serializedBytes() as [UInt8])
    }

    func testEveryRequestRoundTrips() throws {
        let requests: [EdgeRequest] = [
            .openSession(clientID: "phone-1", sdkVersion: "1.0"),
            .closeSession,
            .heartbeat(clientTime: 123_456),
            .join(channel: "room", uid: 7, token: "007abc", role: .broadcaster, options: MediaOptions(publishAudio: true, publishVideo: false, publishData: true, autoSubscribeAudio: false, autoSubscribeVideo: true)),
            .join(channel: "room", uid: 0, token: "", role: .audience, options: .defaults(for: .audience)),
            .leave(channel: "room"),
            .updateOptions(channel: "room", update: MediaOptionsUpdate(role: .broadcaster, publishVideo: true)),
            .updateOptions(channel: "room", update: MediaOptionsUpdate(autoSubscribeAudio: false)),
            .setRole(channel: "room", role: .audience),
            .renewToken(channel: "room", token: "007def"),
            .subscribe(video("room", 9)),
            .unsubscribe(audio("room", 9)),
            .muteRemote(video("room", 9), muted: true),
            .enableVolumeIndication(VolumeIndicationConfig(interval: .milliseconds(300), smoothing: 3, reportVAD: true)),
            .enableVolumeIndication(nil),
            .sendStreamMessage(channel: "room", streamID: 2, data: [0, 1, 255]),
        ]
        for (i, request) in requests.enumerated() {
            let envelope = try travel(try EdgeCodec.envelope(request: request, id: UInt64(i + 1)))
            XCTAssertEqual(envelope.requestID, UInt64(i + 1))
            XCTAssertEqual(envelope.kind, EdgeCodec.messageKind(of: request.kind))
            XCTAssertEqual(try EdgeCodec.request(from: envelope), request)
        }
    }

    func testJoinOptionsLeftUnsetTakeTheRolesDefaults() throws {
        var body = EdgeJoinChannelRequest()
        body.channel = "room"
        body.options.clientRole = .broadcaster
        body.options.publishVideo = false
        let request = try EdgeCodec.request(from: try WireEnvelope(request: .joinChannel, id: 1, body: body))
        XCTAssertEqual(request, .join(channel: "room", uid: 0, token: "", role: .broadcaster,
                                      options: MediaOptions(publishAudio: true, publishVideo: false, publishData: true)))
        // No role at all: audience.
        var bare = EdgeJoinChannelRequest()
        bare.channel = "room"
        let audience = try EdgeCodec.request(from: try WireEnvelope(request: .joinChannel, id: 1, body: bare))
        XCTAssertEqual(audience, .join(channel: "room", uid: 0, token: "", role: .audience, options: .defaults(for: .audience)))
    }

    func testBadRequestsBecomeTheRightErrors() throws {
        var subscribe = EdgeSubscribeTrackRequest()
        subscribe.channel = "room"
        subscribe.track = .unspecified
        XCTAssertThrowsError(try EdgeCodec.request(from: try WireEnvelope(request: .subscribeTrack, id: 1, body: subscribe))) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .unknownTrack)
        }
        var role = EdgeSetClientRoleRequest()
        role.channel = "room"
        XCTAssertThrowsError(try EdgeCodec.request(from: try WireEnvelope(request: .setClientRole, id: 1, body: role))) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument)
        }
        var garbage = WireEnvelope()
        garbage.kind = .joinChannel
        garbage.body = Data([0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try EdgeCodec.request(from: garbage)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .malformedMessage)
        }
        var other = WireEnvelope()
        other.kind = .gossip
        XCTAssertThrowsError(try EdgeCodec.request(from: other)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .unknownKind)
        }
        // A client sending the edge's own drain notice is asking nothing the edge does.
        XCTAssertThrowsError(try EdgeCodec.request(from: try EdgeCodec.envelope(event: .draining(within: .seconds(5))))) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .unknownKind)
        }
        XCTAssertEqual(try EdgeCodec.movedOut().kind, .edgeMovedOut)
        // A drain notice with a hostile body is malformed, not a trap.
        var notice = WireEnvelope()
        notice.kind = .edgeDraining
        notice.body = Data([0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try EdgeCodec.event(from: notice)) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .malformedMessage)
        }
    }

    func testEveryReplyRoundTrips() throws {
        let replies: [EdgeReply] = [
            EdgeReply(requestID: 1, kind: .openSession, result: .success(.sessionOpened(
                session: SessionID(42), heartbeatInterval: .seconds(1), heartbeatTimeout: .seconds(5),
                // Only the limits a session meets travel; the per-channel ones keep their defaults.
                limits: EdgeLimits(maxFrameBytes: 5000, maxChannelsPerSession: 3, maxStreamMessageBytes: 10)))),
            EdgeReply(requestID: 2, kind: .closeSession, result: .success(.sessionClosed)),
            EdgeReply(requestID: 3, kind: .heartbeat, result: .success(.heartbeat(clientTime: 99))),
            EdgeReply(requestID: 4, kind: .join, result: .success(.joined(channel: "room", uid: 7, connection: ConnectionID(3), role: .broadcaster))),
            EdgeReply(requestID: 5, kind: .leave, result: .success(.left(channel: "room"))),
            EdgeReply(requestID: 6, kind: .updateOptions, result: .success(.optionsUpdated(channel: "room"))),
            EdgeReply(requestID: 7, kind: .setRole, result: .success(.roleSet(channel: "room", role: .audience))),
            EdgeReply(requestID: 8, kind: .renewToken, result: .success(.tokenRenewed(channel: "room"))),
            EdgeReply(requestID: 9, kind: .subscribe, result: .success(.done)),
            EdgeReply(requestID: 10, kind: .unsubscribe, result: .success(.done)),
            EdgeReply(requestID: 11, kind: .muteRemote, result: .success(.done)),
            EdgeReply(requestID: 12, kind: .enableVolumeIndication, result: .success(.done)),
            EdgeReply(requestID: 13, kind: .sendStreamMessage, result: .success(.streamMessageSent(sequence: 5))),
            EdgeReply(requestID: 14, kind: .join, result: .failure(.channelFull("channel room is full"))),
        ]
        for reply in replies {
            let envelope = try travel(try EdgeCodec.envelope(reply: reply))
            XCTAssertTrue(envelope.isResponse)
            XCTAssertEqual(envelope.kind, EdgeCodec.messageKind(of: reply.kind))
            XCTAssertEqual(try EdgeCodec.reply(from: envelope), reply)
        }
        // A failed response carries the error and an empty body, and prints as E<code>.
        let failed = try EdgeCodec.envelope(reply: replies.last!)
        XCTAssertTrue(failed.body.isEmpty)
        XCTAssertEqual(failed.failure?.description, "E3006 channel full: channel room is full")
    }

    func testEveryEventRoundTrips() throws {
        let events: [EdgeEvent] = [
            .userJoined(channel: "room", uid: 1),
            .userOffline(channel: "room", uid: 1, reason: .quit),
            .userOffline(channel: "room", uid: 1, reason: .dropped),
            .userOffline(channel: "room", uid: 1, reason: .becameAudience),
            .remoteTrackPublished(audio("room", 1)),
            .remoteTrackUnpublished(video("room", 1)),
            .remoteVideoStateChanged(video("room", 1), state: .frozen, reason: .networkCongestion),
            .remoteVideoStateChanged(video("room", 1), state: .decoding, reason: .networkRecovery),
            .remoteVideoStateChanged(video("room", 1), state: .stopped, reason: .remoteOffline),
            .volumeIndication(channel: "room", speakers: [SpeakerVolume(uid: 1, volume: 80, voiceActive: true), SpeakerVolume(uid: 2, volume: 3)]),
            .volumeIndication(channel: "room", speakers: []),
            .streamMessage(channel: "room", uid: 1, streamID: 2, sequence: 3, data: [9, 8, 7]),
            .tokenWillExpire(channel: "room", expiresIn: .seconds(30)),
            .privilegeExpired(channel: "room", privilege: .publishVideo),
            .connectionClosed(channel: "room", reason: .uidReplaced("uid 1 joined from another session")),
            .sessionClosed(reason: .sessionTimedOut("silent")),
            .draining(within: .seconds(5)),
            .error(.roleForbidsPublish("audience"), channel: "room", track: .video),
            .error(.noSession("open one"), channel: "", track: nil),
        ]
        for event in events {
            let envelope = try travel(try EdgeCodec.envelope(event: event))
            XCTAssertEqual(envelope.requestID, 0, "events are one-way")
            XCTAssertEqual(try EdgeCodec.event(from: envelope), event)
        }
        let keyframe = try travel(try EdgeCodec.keyframeRequest(for: video("room", 7)))
        XCTAssertEqual(keyframe.kind, .keyframeRequest)
        XCTAssertEqual(try EdgeCodec.keyframeRequest(from: keyframe, uid: 7), video("room", 7))
    }

    func testMessageKindsAndErrorCodesStayInTheEdgeRanges() {
        for kind in EdgeRequestKind.allCases {
            XCTAssertTrue((201...299).contains(EdgeCodec.messageKind(of: kind).rawValue), "\(kind)")
            XCTAssertEqual(EdgeCodec.requestKind(of: EdgeCodec.messageKind(of: kind)), kind)
        }
        let codes: [ShowroomError.Code] = [
            .notJoined, .roleForbidsPublish, .privilegeExpired, .trackNotPublished, .frameTooLarge,
            .tooManyChannels, .channelFull, .tooManyPublishers, .unknownTrack, .streamMessageTooLarge,
            .streamMessageRateLimited, .alreadyJoined, .noSession, .uidReplaced, .sessionTimedOut, .sessionReplaced,
        ]
        XCTAssertEqual(codes.map(\.rawValue), Array(3000...3015))
        XCTAssertEqual(ShowroomError.roleForbidsPublish("x").description, "E3001 role forbids publish: x")
    }

    func testFrameInfoFromAMediaHeader() throws {
        var header = WireMediaHeader()
        header.channel = "room"
        header.publisherUid = 7
        header.track = .video
        header.codec = .vp8
        header.keyframe = true
        header.audioLevel = 100
        header.payloadSize = 1200
        let info = try EdgeCodec.checkedFrameInfo(header: header, payloadSize: 1200)
        XCTAssertEqual(info, MediaFrameInfo(channel: "room", publisherUID: 7, kind: .video, isKeyframe: true, audioLevel: 100, payloadSize: 1200))
        header.track = .unspecified
        XCTAssertThrowsError(try EdgeCodec.checkedFrameInfo(header: header, payloadSize: 1200)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .unknownTrack)
        }
    }
}

private func video(_ channel: String, _ uid: UInt32) -> TrackID { TrackID(channel: channel, uid: uid, kind: .video) }
private func audio(_ channel: String, _ uid: UInt32) -> TrackID { TrackID(channel: channel, uid: uid, kind: .audio) }
