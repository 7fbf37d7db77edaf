import Edge
import EdgeServer
import Logging
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import XCTest
import ZeroMQ

/// The edge shell with real sockets, for what crosses them: the fan-out by reference (payloads
/// byte for byte) and a GOP cache holding received buffers. An in-process ``EdgeServer`` and bare
/// DEALER clients; the shell's logic is tested in ``EdgeShellInProcessTests``.
final class EdgeShellTests: XCTestCase {
    private var context: Context!
    private var edge: EdgeServer!

    override func setUpWithError() throws {
        context = try Context()
        edge = try EdgeServer(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate),
            logger: LogCapture.logger(label: "edge"))
    }

    override func tearDown() {
        edge.shutdown()
        context.shutdown()
    }

    private func client() throws -> RawEdgeClient {
        let client = try RawEdgeClient(endpoint: edge.endpoint, context: context)
        try client.open()
        return client
    }

    func testFramesFanOutByteForByteAndAudienceCannotPublish() throws {
        let host = try client()
        XCTAssertNil(try host.join("show", uid: 1, token: TestApp.token(channel: "show", uid: 1), role: .broadcaster).failure)
        let viewers = try (0..<3).map { i -> RawEdgeClient in
            let viewer = try client()
            let uid = UInt32(100 + i)
            XCTAssertNil(try viewer.join("show", uid: uid, token: TestApp.token(channel: "show", uid: uid, role: .subscriber), role: .audience).failure)
            try viewer.waitForEvent("user joined") { $0 == .userJoined(channel: "show", uid: 1) }
            return viewer
        }
        let payloads = (0..<10).map { i in [UInt8](repeating: UInt8(i), count: 500 + i) }
        for (i, payload) in payloads.enumerated() {
            try host.publish(channel: "show", uid: 1, track: .video, sequence: UInt32(i), keyframe: i == 0, payload: payload)
        }
        for viewer in viewers {
            try viewer.waitForFrames(10)
            XCTAssertEqual(viewer.frames.map(\.payload), payloads)
            XCTAssertEqual(viewer.frames.map(\.header.sequence), Array(0..<10))
        }

        // The audience member's frame is refused with its code and reaches nobody.
        let intruder = viewers[0]
        try intruder.publish(channel: "show", uid: 100, track: .video, sequence: 0, keyframe: true, payload: [1, 2, 3])
        let refusal = try intruder.waitForEvent("refusal") { if case .error = $0 { true } else { false } }
        guard case .error(let error, let channel, _) = refusal else { return XCTFail("\(refusal)") }
        XCTAssertEqual(error.code, .roleForbidsPublish)
        XCTAssertEqual(channel, "show")
        try host.drain(for: .milliseconds(200))
        try viewers[1].drain(for: .milliseconds(100))
        XCTAssertTrue(host.frames.isEmpty)
        XCTAssertEqual(viewers[1].frames.count, 10)
    }

    func testALateJoinerGetsTheCurrentGOPAtOnce() throws {
        let host = try client()
        XCTAssertNil(try host.join("gop", uid: 1, token: TestApp.token(channel: "gop", uid: 1), role: .broadcaster).failure)
        for i in 0..<5 {
            try host.publish(channel: "gop", uid: 1, track: .video, sequence: UInt32(i), keyframe: i == 0 || i == 3, payload: [UInt8(i)])
        }
        // The host's own session answers in order, so its frames have been handled once this returns.
        _ = try host.request(.heartbeat(clientTime: 1))
        let late = try client()
        XCTAssertNil(try late.join("gop", uid: 9, token: TestApp.token(channel: "gop", uid: 9, role: .subscriber), role: .audience).failure)
        try late.waitForFrames(2)
        XCTAssertEqual(late.frames.map(\.header.sequence), [3, 4], "the cache starts at the latest keyframe")
        XCTAssertTrue(late.frames[0].header.keyframe)
    }
}
