import Edge
import EdgeServer
import Foundation
import Logging
import ShowroomAuth
import ShowroomKit
import ShowroomWire
import Synchronization
import XCTest

/// The test app's credentials and tokens.
enum TestApp {
    static let appID = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    /// A publisher token (join, publish audio, video, data) for one channel and uid.
    static func token(channel: String, uid: UInt32, certificate: String = certificate) throws -> String {
        try RTCTokenBuilder.buildToken(
            appID: appID, appCertificate: certificate, channelName: channel, uid: uid, role: .publisher, tokenExpire: 3600)
    }
}

/// Everything an engine reported, kept for the test to wait on.
final class EventRecorder: Sendable {
    private final class Store: Sendable {
        let events = Mutex<[EngineEvent]>([])
    }

    private let store = Store()
    private let task: Task<Void, Never>

    init(_ engine: ShowroomEngine) {
        let store = self.store
        task = Task {
            for await event in engine.events { store.events.withLock { $0.append(event) } }
        }
    }

    deinit { task.cancel() }

    /// Everything so far.
    var all: [EngineEvent] { store.events.withLock { $0 } }

    /// The first event `match` maps to a value, waiting up to `timeout` for it.
    func first<T>(
        within timeout: Duration = .seconds(5), _ what: String, file: StaticString = #filePath, line: UInt = #line,
        _ match: (EngineEvent) -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = all.lazy.compactMap(match).first { return found }
            guard ContinuousClock.now < deadline else {
                XCTFail("no \(what) within \(timeout); events: \(all.suffix(20))", file: file, line: line)
                throw ShowroomError.deadlineExceeded(what)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Waits until `condition` holds, up to `timeout`.
func eventually(
    within timeout: Duration = .seconds(5), _ what: String, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () async -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !(await condition()) {
        guard ContinuousClock.now < deadline else {
            XCTFail("not \(what) within \(timeout)", file: file, line: line)
            throw ShowroomError.deadlineExceeded(what)
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// An in-process edge and the engines of one test, all stopped at the end.
final class TestStage: @unchecked Sendable {
    // @unchecked: used from one test at a time.
    let edge: EdgeServer
    private(set) var engines: [ShowroomEngine] = []

    init(settings: EdgeSettings = EdgeSettings()) throws {
        edge = try EdgeServer(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate, settings: settings),
            logger: Logger(label: "edge-test"))
    }

    /// A new engine connected straight to the edge.
    func engine(
        requestTimeout: Duration = .seconds(3), camera: (any VideoSource)? = nil, microphone: (any AudioSource)? = nil,
        loop: EngineLoop? = nil, rejoinWindow: Duration = .seconds(30)
    ) async throws -> (ShowroomEngine, EventRecorder) {
        let engine = try await ShowroomEngine(
            configuration: EngineConfiguration(entry: .edge(edge.endpoint), requestTimeout: requestTimeout, rejoinWindow: rejoinWindow),
            loop: loop)
        engines.append(engine)
        if let camera { await engine.setLocalVideoSource(camera) }
        if let microphone { await engine.setLocalAudioSource(microphone) }
        return (engine, EventRecorder(engine))
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

/// Asserts that `body` fails with `code` and a message a person can act on.
func assertFails<T>(_ code: WireErrorCode, _ what: String, file: StaticString = #filePath, line: UInt = #line,
                    _ body: () async throws -> T) async {
    do {
        _ = try await body()
        XCTFail("\(what): expected \(code), got success", file: file, line: line)
    } catch let error as ShowroomError {
        XCTAssertEqual(error.code, code, "\(what): \(error)", file: file, line: line)
        XCTAssertFalse(error.message.isEmpty, file: file, line: line)
    } catch {
        XCTFail("\(what): expected \(code), got \(error)", file: file, line: line)
    }
}
