import Edge
import ShowroomTesting
import ShowroomWire
import XCTest

/// Bad names and media headers from a client written from `proto/` alone, refused by the edge's
/// shell on the in-process network (what only sockets carry is in ``HostileInputTests``).
final class HostileInputInProcessTests: XCTestCase {
    private var harness: InProcessEdgeHarness!

    override func setUp() {
        var settings = EdgeSettings()
        // Every refusal reported, so each hostile case gets its own answer.
        settings.refusalReportInterval = .zero
        harness = InProcessEdgeHarness(settings: settings)
    }

    private func header(channel: String = "show", uid: UInt32 = 1, track: WireTrackKind = .video, codec: WireCodec = .vp8, size: Int) -> WireMediaHeader {
        HostileInputTests.header(channel: channel, uid: uid, track: track, codec: codec, size: size)
    }

    func testChannelNamesAreValidatedBeforeAnythingElse() throws {
        let peer = try harness.client()
        let wildcard = try TestApp.token(channel: "", uid: 0)
        for channel in [String(repeating: "a", count: 1 << 20), "a\u{0}b", "", String(repeating: "x", count: 65), "a/b"] {
            let join = try peer.request(.join(channel: channel, uid: 5, token: wildcard, role: .audience, options: .defaults(for: .audience)))
            XCTAssertEqual(join.failure?.code, .invalidArgument, "join \(channel.prefix(10))")
            XCTAssertTrue(join.failure?.message.hasPrefix("channel ") == true)
            XCTAssertLessThan(join.failure?.message.utf8.count ?? 0, 400)
            XCTAssertEqual(try peer.request(.leave(channel: channel)).failure?.code, .invalidArgument)
            XCTAssertEqual(try peer.request(.subscribe(TrackID(channel: channel, uid: 1, kind: .video))).failure?.code, .invalidArgument)
            XCTAssertEqual(try peer.request(.sendStreamMessage(channel: channel, streamID: 1, data: [1])).failure?.code, .invalidArgument)
        }
        XCTAssertTrue(harness.claimed.isEmpty, "no bad name reached the coordinators")
        XCTAssertNil(try peer.request(.join(channel: "ok", uid: 5, token: wildcard, role: .audience, options: .defaults(for: .audience))).failure)
    }

    func testMediaHeadersAreCheckedBeforeForwarding() throws {
        let host = try harness.client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewer = try harness.client()
        XCTAssertNil(try viewer.join("show", uid: 2, token: TestApp.token(channel: "show", uid: 2, role: .subscriber), role: .audience).failure)

        var cases: [(String, WireMediaHeader, ShowroomError.Code)] = []
        cases.append(("NUL channel", header(channel: "sh\u{0}w", size: 3), .invalidArgument))
        cases.append(("Opus on video", header(codec: .opus, size: 3), .invalidArgument))
        cases.append(("VP8 on audio", header(track: .audio, codec: .vp8, size: 3), .invalidArgument))
        cases.append(("unknown codec", header(codec: .UNRECOGNIZED(9), size: 3), .invalidArgument))
        cases.append(("payload_size", header(size: 4), .malformedMessage))
        var wide = header(size: 3)
        wide.width = 9000
        cases.append(("width", wide, .invalidArgument))
        var tiny = header(size: 3)
        tiny.height = 15
        cases.append(("height", tiny, .invalidArgument))
        cases.append(("someone else's uid", header(uid: 3, size: 3), .invalidArgument))
        cases.append(("unknown track", header(track: .UNRECOGNIZED(7), size: 3), .unknownTrack))
        var riding = header(size: 3)
        riding.alsoChannels = ["other"]
        cases.append(("also_channels from a client (edge-to-edge links only)", riding, .invalidArgument))
        for (what, header, code) in cases {
            try host.publish(header, payload: [1, 2, 3])
            let errors = host.take { if case .error = $0 { true } else { false } }
            guard case .error(let error, _, _) = errors.first, errors.count == 1 else {
                XCTFail("\(what): \(errors)")
                continue
            }
            XCTAssertEqual(error.code, code, what)
            // The session is alive and in order after each refusal.
            XCTAssertNil(try host.request(.heartbeat(clientTime: 0)).failure)
        }
        // A good frame still goes out, and it is the only one the viewer got.
        try host.publish(header(size: 3), payload: [7, 8, 9])
        viewer.collect()
        XCTAssertEqual(viewer.frames.map(\.payload), [[7, 8, 9]])
    }
}
