import Foundation
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ShowroomWire
import Synchronization
import Webhooks
import XCTest

/// A business server for the tests: an HTTP server on 127.0.0.1 that records every webhook post
/// and answers what the test says.
final class TestReceiver: Sendable {
    /// One post as received.
    struct Post: Sendable {
        var body: [UInt8]
        var contentType: String?
        var signature: String?
        var noticeID: String?
        /// The status it was answered with.
        var status: Int
        /// The body decoded, nil when it did not decode.
        var event: RoomChannelEvent?
    }

    /// Decides the status of the `number`-th post (from 1).
    typealias Answer = @Sendable (_ number: Int) -> Int

    fileprivate struct State {
        var posts: [Post] = []
        var gateOpen = true
        var gateWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let port: UInt16
    private let server: HummingbirdCore.Server<HTTP1Channel>
    private let task: Task<Void, any Error>
    private let recorder: Recorder

    var url: String { "http://127.0.0.1:\(port)/events" }

    private init(port: UInt16, server: HummingbirdCore.Server<HTTP1Channel>, task: Task<Void, any Error>, recorder: Recorder) {
        self.port = port
        self.server = server
        self.task = task
        self.recorder = recorder
    }

    /// Listens on `port` (0: a free one) and answers each post with `answer`; with `gated`,
    /// every post waits for ``openGate()`` before it is recorded and answered.
    static func start(port: UInt16 = 0, gated: Bool = false, answer: @escaping Answer = { _ in 200 }) async throws
        -> TestReceiver
    {
        let recorder = Recorder(gated: gated, answer: answer)
        let channel = HTTP1Channel(responder: { request, writer, _ in
            guard request.method == .post, request.uri.path == "/events" else {
                try await writer.writeResponse(HTTPResponse(status: .notFound, headerFields: [.contentLength: "0"]))
                return
            }
            let status = await recorder.handle(request)
            try await writer.writeResponse(HTTPResponse(
                status: .init(code: status, reasonPhrase: status == 200 ? "OK" : "Failed"),
                headerFields: [.contentLength: "0"]))
        })
        let listening = AsyncStream<Int?>.makeStream()
        let server = HummingbirdCore.Server(
            childChannelSetup: channel,
            configuration: ServerConfiguration(address: .hostname("127.0.0.1", port: Int(port))),
            onServerRunning: { channel in
                listening.continuation.yield(channel.localAddress?.port)
                listening.continuation.finish()
            },
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "test-receiver") { _ in SwiftLogNoOpLogHandler() })
        let task = Task {
            defer { listening.continuation.finish() }  // a bind failure ends the wait below
            try await server.run()
        }
        var ports = listening.stream.makeAsyncIterator()
        guard let bound = await ports.next(), let boundPort = bound.flatMap({ UInt16(exactly: $0) }) else {
            try? await server.shutdownGracefully()
            if case .failure(let error) = await task.result { throw error }
            throw TestReceiverError.notListening
        }
        return TestReceiver(port: boundPort, server: server, task: task, recorder: recorder)
    }

    /// The posts so far, in the order they were answered.
    var posts: [Post] { recorder.state.withLock { $0.posts } }

    /// The posts answered 2xx.
    var accepted: [Post] { posts.filter { (200..<300).contains($0.status) } }

    /// Lets gated posts through, now and from now on.
    func openGate() {
        let waiters = recorder.state.withLock { state in
            state.gateOpen = true
            defer { state.gateWaiters = [] }
            return state.gateWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many posts wait at the gate.
    var waitingAtGate: Int { recorder.state.withLock { $0.gateWaiters.count } }

    /// Closes the port and every connection.
    func stop() async {
        openGate()
        try? await server.shutdownGracefully()
        _ = await task.result
    }
}

enum TestReceiverError: Error { case notListening }

/// The request handler's side of a ``TestReceiver``.
fileprivate final class Recorder: Sendable {
    let state: Mutex<TestReceiver.State>
    let answer: TestReceiver.Answer

    init(gated: Bool, answer: @escaping TestReceiver.Answer) {
        self.state = Mutex(TestReceiver.State(gateOpen: !gated))
        self.answer = answer
    }

    /// Records the post (after the gate) and returns the status to answer.
    func handle(_ request: Request) async -> Int {
        var request = request
        let body = (try? await request.collectBody(upTo: 16 << 20)).map { Array(buffer: $0) } ?? []
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if !state.gateOpen { state.gateWaiters.append(continuation) }
                return state.gateOpen
            }
            if open { continuation.resume() }
        }
        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { request.headers[$0] } }
        return state.withLock { state in
            let status = answer(state.posts.count + 1)
            state.posts.append(TestReceiver.Post(
                body: body,
                contentType: header("Content-Type"),
                signature: header(WebhookSignature.header),
                noticeID: header(WebhookSignature.noticeHeader),
                status: status,
                event: try? ChannelEventJSON.decode(body)))
            return status
        }
    }
}

/// Channel events as the coordinator numbers them.
func channelEvent(channel: String, sequence: UInt64, uid: UInt32 = 42) -> RoomChannelEvent {
    var event = RoomChannelEvent()
    event.noticeID = "\(channel)-\(sequence)"
    event.type = .broadcasterJoined
    event.channel = channel
    event.uid = uid
    event.reason = .unspecified
    event.atMs = 1_767_000_000_000 + Int64(sequence)
    event.sequence = sequence
    event.edge = "edge-1"
    event.notifiedAtMs = 1_767_000_000_100 + Int64(sequence)
    return event
}
