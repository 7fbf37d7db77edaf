import Edge
import ShowroomWire
import XCTest

/// The edge's pure checks of hostile input: channel names in every request, media headers, the
/// envelope peek for oversize messages, the announced limits, and connections without a session.
final class InputValidationTests: XCTestCase {
    private func code(_ request: EdgeRequest) -> ShowroomError.Code? {
        do {
            _ = try EdgeCodec.request(from: EdgeCodec.envelope(request: request, id: 1))
            return nil
        } catch {
            return error.code
        }
    }

    // MARK: Channel names

    func testEveryRequestNamingAChannelRefusesABadName() {
        let track = { (channel: String) in TrackID(channel: channel, uid: 1, kind: .video) }
        for bad in ["", "a\u{0}", String(repeating: "x", count: 65), String(repeating: "x", count: 1 << 20), "a/b", "频道"] {
            let requests: [EdgeRequest] = [
                .join(channel: bad, uid: 1, token: "007", role: .audience, options: .defaults(for: .audience)),
                .leave(channel: bad),
                .updateOptions(channel: bad, update: MediaOptionsUpdate()),
                .setRole(channel: bad, role: .broadcaster),
                .renewToken(channel: bad, token: "007"),
                .subscribe(track(bad)),
                .unsubscribe(track(bad)),
                .muteRemote(track(bad), muted: true),
                .sendStreamMessage(channel: bad, streamID: 1, data: [1]),
            ]
            for request in requests {
                XCTAssertEqual(code(request), .invalidArgument, "\(request.kind) with \(bad.prefix(8).debugDescription)")
            }
        }
        XCTAssertNil(code(.join(channel: "room-1", uid: 1, token: "007", role: .audience, options: .defaults(for: .audience))))
        XCTAssertNil(code(.subscribe(track(String(repeating: "x", count: 64)))))
    }

    func testTheChannelIsCheckedBeforeTheOtherFields() throws {
        // A bad role and a bad channel: the channel is what is reported.
        var body = EdgeSetClientRoleRequest()
        body.channel = "a\u{0}"
        let envelope = try WireEnvelope(request: .setClientRole, id: 1, body: body)
        XCTAssertThrowsError(try EdgeCodec.request(from: envelope)) {
            let error = $0 as? ShowroomError
            XCTAssertEqual(error?.code, .invalidArgument)
            XCTAssertTrue(error?.message.hasPrefix("channel holds byte 0x00") == true, "\(String(describing: error))")
        }
    }

    // MARK: Media headers

    private func header(_ change: (inout WireMediaHeader) -> Void = { _ in }) -> WireMediaHeader {
        var header = WireMediaHeader()
        header.channel = "show"
        header.publisherUid = 7
        header.track = .video
        header.codec = .vp8
        header.keyframe = true
        header.width = 1280
        header.height = 720
        header.payloadSize = 1200
        change(&header)
        return header
    }

    private func refusal(_ header: WireMediaHeader, payload: Int = 1200) -> ShowroomError? {
        do {
            _ = try EdgeCodec.checkedFrameInfo(header: header, payloadSize: payload)
            return nil
        } catch {
            return error
        }
    }

    func testGoodHeadersPass() throws {
        XCTAssertEqual(
            try EdgeCodec.checkedFrameInfo(header: header(), payloadSize: 1200),
            MediaFrameInfo(channel: "show", publisherUID: 7, kind: .video, isKeyframe: true, payloadSize: 1200))
        XCTAssertNil(refusal(header { $0.codec = .vp9 }))
        XCTAssertNil(refusal(header { $0.width = 0; $0.height = 0 }))
        XCTAssertNil(refusal(header { $0.width = 16; $0.height = 8192 }))
        let audio = try EdgeCodec.checkedFrameInfo(header: header {
            $0.track = .audio; $0.codec = .opus; $0.width = 0; $0.height = 0; $0.audioLevel = 100; $0.payloadSize = 0
        }, payloadSize: 0)
        XCTAssertEqual(audio.kind, .audio)
        XCTAssertEqual(audio.audioLevel, 100)
    }

    func testHostileHeadersAreRefusedWithTheirCodes() {
        let cases: [(String, WireMediaHeader, Int, ShowroomError.Code, String)] = [
            ("NUL channel", header { $0.channel = "sh\u{0}w" }, 1200, .invalidArgument, "media header channel holds byte 0x00"),
            ("1 MB channel", header { $0.channel = String(repeating: "c", count: 1 << 20) }, 1200, .invalidArgument, "is 1048576 bytes"),
            ("empty channel", header { $0.channel = "" }, 1200, .invalidArgument, "media header channel is empty"),
            ("no track", header { $0.track = .unspecified }, 1200, .unknownTrack, "neither audio nor video"),
            ("no codec", header { $0.codec = .unspecified }, 1200, .invalidArgument, "codec unspecified (0) does not fit a video track"),
            ("Opus video", header { $0.codec = .opus }, 1200, .invalidArgument, "codec Opus does not fit a video track"),
            ("VP9 audio", header { $0.track = .audio; $0.codec = .vp9 }, 1200, .invalidArgument, "codec VP9 does not fit a audio track"),
            ("unknown codec", header { $0.codec = .UNRECOGNIZED(42) }, 1200, .invalidArgument, "codec 42 (unknown)"),
            ("size claim", header { $0.payloadSize = 1201 }, 1200, .malformedMessage, "payload_size is 1201 but the payload frame is 1200 bytes"),
            ("size claim max", header { $0.payloadSize = .max }, 0, .malformedMessage, "payload_size is 4294967295"),
            ("width 15", header { $0.width = 15 }, 1200, .invalidArgument, "width is 15"),
            ("height 8193", header { $0.height = 8193 }, 1200, .invalidArgument, "height is 8193"),
            ("width max", header { $0.width = .max }, 1200, .invalidArgument, "width is 4294967295"),
            ("audio level", header { $0.track = .audio; $0.codec = .opus; $0.audioLevel = 101 }, 1200, .invalidArgument, "audio_level is 101"),
        ]
        for (what, header, payload, code, text) in cases {
            let error = refusal(header, payload: payload)
            XCTAssertEqual(error?.code, code, what)
            XCTAssertTrue(error?.message.contains(text) == true, "\(what): \(String(describing: error))")
            XCTAssertLessThan(error?.message.utf8.count ?? 0, 400, what)
        }
    }

    // MARK: Frames refused before the plane

    func testShellRefusalsOfFramesAreReportedLikeThePlanesOwn() {
        var edge = TestEdge()
        let session = host
        _ = edge.open(session)
        var directives = edge.plane.refuseFrame(.malformed("a media frame is two frames; got 3 frames"), channel: "show", track: .video, from: session, now: edge.now)
        XCTAssertEqual(directives.compactMap(\.sentEvent), [.error(.malformed("a media frame is two frames; got 3 frames"), channel: "show", track: .video)])
        // The same code on the same channel within the interval: not reported again.
        directives = edge.plane.refuseFrame(.malformed("again"), channel: "show", track: .video, from: session, now: edge.now)
        XCTAssertEqual(directives.compactMap(\.sentEvent), [])
        // A hostile channel name is not echoed.
        directives = edge.plane.refuseFrame(.invalidArgument("bad"), channel: "a\u{0}", track: nil, from: session, now: edge.now)
        XCTAssertEqual(directives.compactMap(\.sentEvent), [.error(.invalidArgument("bad"), channel: "", track: nil)])
        // A connection without a session gets nothing (it learns NO_SESSION from its requests).
        XCTAssertEqual(edge.plane.refuseFrame(.invalidArgument("bad"), channel: "", track: nil, from: SessionID(999), now: edge.now), [])
        XCTAssertEqual(edge.plane.statistics.framesRefused, 4)
    }

    // MARK: Oversize messages

    func testPeekReadsKindAndRequestIDWithoutTheBody() throws {
        var envelope = try EdgeCodec.envelope(request: .renewToken(channel: "show", token: String(repeating: "7", count: 100_000)), id: 77)
        envelope.senderNode = "x"
        envelope.deadlineMs = 5
        let bytes: [UInt8] = try envelope.serializedBytes()
        let peeked = bytes.withUnsafeBytes { EdgeCodec.peekEnvelope($0) }
        XCTAssertEqual(peeked.kind, .renewChannelToken)
        XCTAssertEqual(peeked.requestID, 77)
        XCTAssertFalse(peeked.isResponse)
        XCTAssertTrue(peeked.body.isEmpty)

        // Cut short, garbage, or empty: whatever was read before, never a crash.
        let cut = Array(bytes.prefix(6)).withUnsafeBytes { EdgeCodec.peekEnvelope($0) }
        XCTAssertEqual(cut.kind, .renewChannelToken)
        XCTAssertEqual(cut.requestID, 77)
        let garbage = [UInt8](repeating: 0xFF, count: 64).withUnsafeBytes { EdgeCodec.peekEnvelope($0) }
        XCTAssertEqual(garbage.requestID, 0)
        XCTAssertEqual([UInt8]().withUnsafeBytes { EdgeCodec.peekEnvelope($0) }.kind, .unspecified)
        // A length that points past the end stops the walk.
        let pastEnd: [UInt8] = [0x32, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x10, 0x05]
        XCTAssertEqual(pastEnd.withUnsafeBytes { EdgeCodec.peekEnvelope($0) }.requestID, 0)
    }

    func testSessionLimitsAnnounceMessageAndChannelNameBounds() throws {
        let limits = EdgeLimits()
        XCTAssertEqual(limits.maxMessageBytes, 1_572_864)
        XCTAssertEqual(limits.connectionCloseBytes, 4 * 1_572_864)
        XCTAssertGreaterThan(limits.maxMessageBytes, limits.maxFrameBytes, "a largest frame and its header fit in a message")
        XCTAssertEqual(EdgeLimits(maxMessageBytes: .max).connectionCloseBytes, .max)

        let reply = EdgeReply(requestID: 1, kind: .openSession, result: .success(.sessionOpened(
            session: SessionID(1), heartbeatInterval: .seconds(1), heartbeatTimeout: .seconds(5),
            limits: EdgeLimits(maxMessageBytes: 100_000))))
        let envelope = try EdgeCodec.envelope(reply: reply)
        let wire = try envelope.decodeBody(EdgeOpenSessionResponse.self)
        XCTAssertEqual(wire.limits.maxMessageBytes, 100_000)
        XCTAssertEqual(wire.limits.maxChannelNameBytes, 64)
        XCTAssertEqual(try EdgeCodec.reply(from: envelope), reply)
    }

    // MARK: Connections without a session

    func testConnectionsWithoutASessionTimeOut() {
        var table = UnopenedConnections<String>(timeout: .seconds(5), maxCount: 100)
        XCTAssertEqual(table.accepted(10, peer: "a", now: .zero), [])
        XCTAssertEqual(table.accepted(11, peer: "b", now: .seconds(1)), [])
        XCTAssertEqual(table.accepted(12, peer: "c", now: .seconds(2)), [])
        table.opened(11)
        XCTAssertEqual(table.expired(now: .milliseconds(4999)), [])
        XCTAssertEqual(table.expired(now: .seconds(5)), [.init(descriptor: 10, peer: "a", reason: .timedOut)])
        table.disconnected(12)
        XCTAssertEqual(table.expired(now: .seconds(60)), [])
        XCTAssertEqual(table.count, 0)
    }

    func testAReusedDescriptorIsANewConnection() {
        var table = UnopenedConnections<String>(timeout: .seconds(5), maxCount: 100)
        _ = table.accepted(10, peer: "old", now: .zero)
        // The old connection went and its descriptor came back before its DISCONNECTED was read.
        _ = table.accepted(10, peer: "new", now: .seconds(4))
        XCTAssertEqual(table.expired(now: .seconds(5)), [])
        XCTAssertEqual(table.expired(now: .seconds(9)), [.init(descriptor: 10, peer: "new", reason: .timedOut)])
    }

    func testTooManyConnectionsWithoutASessionCloseTheOldest() {
        var table = UnopenedConnections<Int>(timeout: .seconds(5), maxCount: 3)
        for fd in Int32(20)..<23 { XCTAssertEqual(table.accepted(fd, peer: Int(fd), now: .zero), []) }
        table.opened(21)
        XCTAssertEqual(table.accepted(23, peer: 23, now: .seconds(1)), [])
        XCTAssertEqual(table.accepted(24, peer: 24, now: .seconds(1)), [.init(descriptor: 20, peer: 20, reason: .tooMany)])
        XCTAssertEqual(table.accepted(25, peer: 25, now: .seconds(1)), [.init(descriptor: 22, peer: 22, reason: .tooMany)])
        XCTAssertEqual(table.count, 3)
        XCTAssertTrue(table.isWaiting(23))
        XCTAssertFalse(table.isWaiting(20))
    }
}

private extension EdgeDirective {
    var sentEvent: EdgeEvent? {
        if case .send(let event, _) = self { return event }
        return nil
    }
}
