import Edge
import EdgeServer
import Foundation
import Logging
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// An in-process edge and the engines of one test, all stopped at the end.
final class TestStage: @unchecked Sendable {
    // @unchecked: used from one test at a time.
    let edge: EdgeServer
    private(set) var engines: [ShowroomEngine] = []

    init(settings: EdgeSettings = EdgeSettings()) throws {
        edge = try EdgeServer(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate, settings: settings),
            logger: LogCapture.logger(label: "edge"))
    }

    /// A new engine connected straight to the edge.
    func engine(
        requestTimeout: Duration = .seconds(3), camera: (any VideoSource)? = nil, microphone: (any AudioSource)? = nil,
        loop: EngineLoop? = nil, rejoinWindow: Duration = .seconds(30)
    ) async throws -> (ShowroomEngine, EventLog) {
        let engine = try await ShowroomEngine(
            configuration: EngineConfiguration(entry: .edge(edge.endpoint), requestTimeout: requestTimeout, rejoinWindow: rejoinWindow),
            loop: loop)
        engines.append(engine)
        if let camera { await engine.setLocalVideoSource(camera) }
        if let microphone { await engine.setLocalAudioSource(microphone) }
        return (engine, EventLog(engine))
    }

    func stop() async {
        for engine in engines { await engine.shutdown() }
        engines = []
        await edge.stop()
    }

    /// Stops the edge alone (a vanished edge), leaving the engines running.
    func stopEdge() async {
        await edge.stop()
    }
}
