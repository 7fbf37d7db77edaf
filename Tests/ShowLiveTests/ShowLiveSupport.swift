import Edge
import Foundation
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest
import ZeroMQ

/// One cluster of real processes (a coordinator and two edges) shared by the show-live tests;
/// each test uses channels of its own.
enum SharedCluster {
    nonisolated(unsafe) private static var cluster: TestCluster?
    nonisolated(unsafe) private(set) static var seed = ""
    nonisolated(unsafe) private(set) static var edges: [String: String] = [:]
    nonisolated(unsafe) private(set) static var edgeAdmins: [String: String] = [:]

    /// Starts the cluster once; later calls return at once.
    static func start() throws {
        guard cluster == nil else { return }
        let cluster = try TestCluster(coordinators: 1, edges: 2)
        self.cluster = cluster
        seed = try cluster.clientEndpoint(of: "coordinator-1")
        for id in ["edge-1", "edge-2"] {
            edges[id] = try cluster.clientEndpoint(of: id)
            edgeAdmins[id] = try cluster.adminEndpoint(of: id)
        }
    }

    static func stop() {
        cluster?.down()
        cluster = nil
    }
}

/// A test case on the shared cluster: started before its first test, stopped after its last.
class SharedClusterTestCase: XCTestCase {
    override class func setUp() {
        super.setUp()
        do { try SharedCluster.start() } catch { XCTFail("cluster did not start: \(error)") }
    }

    override class func tearDown() {
        SharedCluster.stop()
        super.tearDown()
    }
}

/// A client of the shared cluster: an engine, its event log, and the connection it joined.
struct TestClient {
    let engine: ShowroomEngine
    let log: EventLog
    var connection: ChannelConnection

    /// Makes an engine (on `loop` if given) and joins `channel` as `uid`.
    static func join(
        _ channel: String, uid: UInt32, role: ShowroomKit.ClientRole, loop: EngineLoop? = nil, camera: Bool = false,
        microphone: Bool = false, fps: Int = 15, gop: Duration = .seconds(2), bitrateKbps: Int = 200,
        width: Int = 160, height: Int = 120, videoFrom: UInt32? = nil, videoSink: (any RemoteVideoSink)? = nil,
        audioSink: (any RemoteAudioSink)? = nil, tokenRole: RTCRole? = nil
    ) async throws -> TestClient {
        var configuration = EngineConfiguration(entry: .seeds([SharedCluster.seed]))
        configuration.media = LocalMediaConfiguration(videoBitrateKbps: bitrateKbps, keyframeInterval: gop)
        let engine = try await ShowroomEngine(configuration: configuration, loop: loop)
        let log = EventLog(engine)
        if camera { await engine.setLocalVideoSource(TestPatternCamera(width: width, height: height, framesPerSecond: fps)) }
        if microphone { await engine.setLocalAudioSource(ToneMicrophone()) }
        let connection = ChannelConnection(channel: channel, uid: uid)
        if let videoFrom, let videoSink {
            try await engine.setupRemoteVideo(uid: videoFrom, connection: connection, sink: videoSink)
        }
        if let videoFrom, let audioSink {
            try await engine.setupRemoteAudio(uid: videoFrom, connection: connection, sink: audioSink)
        }
        let token = try TestApp.token(channel: channel, uid: uid, role: tokenRole ?? (role == .broadcaster ? .publisher : .subscriber))
        let joined = try await engine.joinChannel(
            token: token, channel: channel, uid: uid, options: role == .broadcaster ? .broadcaster : .audience)
        return TestClient(engine: engine, log: log, connection: joined)
    }

    func stop() async {
        try? await engine.leaveChannel()
        await engine.shutdown()
    }
}

/// A bare edge client (``RawEdgeClient``) for async tests: it lives on a loop thread of its own
/// (ZeroMQ sockets stay on one thread) and every call runs there.
final class RawClientThread: Sendable {
    private let loop: EventLoop
    private let client: LoopBound<RawEdgeClient>

    init(endpoint: String, receiveHighWaterMark: Int32 = 1000, receiveBufferBytes: Int32? = nil) async throws {
        let loop = try EventLoop.start(name: "raw-client", context: Context())
        self.loop = loop
        client = try await loop.submit {
            LoopBound(try RawEdgeClient(endpoint: endpoint, context: loop.context, receiveHighWaterMark: receiveHighWaterMark,
                                        receiveBufferBytes: receiveBufferBytes), loop: loop)
        }
    }

    /// Runs `body` with the client on its thread.
    func run<T: Sendable>(_ body: @escaping @Sendable (RawEdgeClient) throws -> T) async throws -> T {
        let client = self.client
        return try await loop.submit { try body(client.value) }
    }

    func stop() async {
        let loop = self.loop
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                loop.shutdown()
                loop.context.shutdown()
                continuation.resume()
            }.start()
        }
    }
}

/// A gauge (or counter) of every edge of the shared cluster, summed, as their admin ports'
/// `/metrics` say (`showroom_edge_sessions`, `showroom_edge_connections` …).
func edgeGauge(_ name: String) async throws -> Double {
    var total = 0.0
    for endpoint in SharedCluster.edgeAdmins.values { total += try await adminMetric(name, at: endpoint) }
    return total
}
