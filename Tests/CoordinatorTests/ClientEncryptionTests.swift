import Foundation
import NodeRuntime
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import XCTest
import ZeroMQ

/// Edges that encrypt client links (`--client-encryption curve`): the SDK learns the edge's key
/// from the placement and decodes real video over CURVE; a plain client gets nothing from such an
/// edge.
final class ClientEncryptionTests: XCTestCase {
    func testTheSDKDecodesVideoOverAnEncryptedClientLinkAndAPlainClientIsNotServed() async throws {
        let cluster = try TestCluster(coordinators: 1, edges: 1, clientEncryption: true)
        defer { cluster.down() }
        let seed = try cluster.endpoint("coordinator-1")
        let channel = "encrypted-\(UInt32.random(in: 0 ... .max))"

        // The placement names the edge's key.
        var place = RoomPlaceChannelRequest()
        place.channel = channel
        place.uid = 1
        place.token = try TestApp.token(channel: channel, uid: 1)
        let placed = try await request(.channelPlace, place, to: seed, expecting: RoomPlaceChannelResponse.self)
        XCTAssertTrue(CurveKey.isValid(placed.clientCurvePublicKey), "the placement carries the edge's CURVE key")

        let host = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])))
        await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        try await host.joinChannel(token: try TestApp.token(channel: channel, uid: 1), channel: channel, uid: 1, options: .broadcaster)
        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([seed])))
        let times = PictureTimes()
        try await viewer.setupRemoteVideo(uid: 1, connection: ChannelConnection(channel: channel, uid: 2),
                                          sink: DecodingVideoSink(readFrameCounters: false) { _ in times.record() })
        try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 2, role: .subscriber),
                                     channel: channel, uid: 2, options: .audience)
        try await eventually("the viewer decodes video over CURVE", timeout: .seconds(10)) { !times.isEmpty }

        // A plain ZeroMQ client cannot finish the handshake with the encrypting edge.
        let endpoint = placed.clientEndpoint
        let answered = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            Thread {
                continuation.resume(with: Result {
                    let context = try Context()
                    defer { context.shutdown() }
                    let socket = try Socket(.dealer, context: context)
                    try socket.set(.linger, 0)
                    try socket.connect(endpoint)
                    var open = WireEnvelope()
                    open.kind = .edgeOpenSession
                    open.requestID = 1
                    _ = try socket.send(try open.serializedBytes())
                    let ready = try socket.poll(.readable, timeout: .seconds(2)).contains(.readable)
                    socket.close()
                    return ready
                })
            }.start()
        }
        XCTAssertFalse(answered, "a plain client must get no answer from an encrypting edge")
        await viewer.shutdown()
        await host.shutdown()
    }
}
