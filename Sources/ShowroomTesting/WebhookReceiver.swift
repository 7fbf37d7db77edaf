import Foundation
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ShowroomWire
import Synchronization
import Webhooks

/// A business server standing in for the real one in tests and drills: an HTTP server on
/// 127.0.0.1 that records every channel-event webhook post, checks its signature, and answers with
/// the status the caller decides (an outage is a run of 503s).
public final class WebhookReceiver: Sendable {
    /// One post as received.
    public struct Post: Sendable {
        /// The channel event, nil when the body is not one.
        public var event: RoomChannelEvent?
        /// The body as posted.
        public var body: [UInt8]
        /// Whether the signature header matched the body under the secret.
        public var signatureValid: Bool
        /// The status it was answered with.
        public var status: Int
    }

    /// Decides the status of the `number`-th post (from 1).
    public typealias Answer = @Sendable (_ number: Int) -> Int

    /// Where to post: `http://127.0.0.1:PORT/events`.
    public let url: String
    private let server: HummingbirdCore.Server<HTTP1Channel>
    private let task: Task<Void, any Error>
    private let recorded: Recorder

    /// The posts, shared with the request handler.
    private final class Recorder: Sendable {
        let posts = Mutex<[Post]>([])
    }

    private init(url: String, server: HummingbirdCore.Server<HTTP1Channel>, task: Task<Void, any Error>, recorded: Recorder) {
        self.url = url
        self.server = server
        self.task = task
        self.recorded = recorded
    }

    /// Listens on a free port of 127.0.0.1 and answers each post with `answer`.
    /// - Parameter port: The port to listen on (0: a free one).
    public static func start(secret: String, port: Int = 0, answer: @escaping Answer = { _ in 200 }) async throws -> WebhookReceiver {
        let recorded = Recorder()
        let channel = HTTP1Channel(responder: { request, writer, _ in
            guard request.method == .post, request.uri.path == "/events" else {
                try await writer.writeResponse(HTTPResponse(status: .notFound, headerFields: [.contentLength: "0"]))
                return
            }
            var request = request
            let body = (try? await request.collectBody(upTo: 16 << 20)).map { Array(buffer: $0) } ?? []
            let signature = HTTPField.Name(WebhookSignature.header).flatMap { request.headers[$0] } ?? ""
            let status = recorded.posts.withLock { posts in
                let status = answer(posts.count + 1)
                posts.append(Post(event: try? ChannelEventJSON.decode(body), body: body,
                                  signatureValid: WebhookSignature.verify(body: body, secret: secret, signature: signature),
                                  status: status))
                return status
            }
            try await writer.writeResponse(HTTPResponse(
                status: .init(code: status, reasonPhrase: status == 200 ? "OK" : "Unavailable"),
                headerFields: [.contentLength: "0"]))
        }, configuration: .init(idleTimeout: .seconds(30)))
        let listening = AsyncStream<Int?>.makeStream()
        let server = HummingbirdCore.Server(
            childChannelSetup: channel,
            configuration: ServerConfiguration(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                listening.continuation.yield(channel.localAddress?.port)
                listening.continuation.finish()
            },
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "webhook-receiver") { _ in SwiftLogNoOpLogHandler() })
        let task = Task {
            defer { listening.continuation.finish() }  // a bind failure ends the wait below
            try await server.run()
        }
        var ports = listening.stream.makeAsyncIterator()
        guard let bound = await ports.next(), let port = bound else {
            try? await server.shutdownGracefully()
            _ = await task.result
            throw ShowroomError.unavailable("the webhook receiver is not listening")
        }
        return WebhookReceiver(url: "http://127.0.0.1:\(port)/events", server: server, task: task, recorded: recorded)
    }

    /// Every post so far, in the order they were answered.
    public var posts: [Post] { recorded.posts.withLock { $0 } }

    /// The events of `channel` accepted (2xx), de-duplicated by notice id, in the order first accepted.
    public func events(channel: String) -> [RoomChannelEvent] {
        var seen = Set<String>()
        return posts.filter { (200..<300).contains($0.status) }.compactMap(\.event)
            .filter { $0.channel == channel && seen.insert($0.noticeID).inserted }
    }

    /// The call events of call `callID` accepted (2xx), de-duplicated by notice id, in the order
    /// first accepted: each as its JSON object.
    public func callEvents(callID: String) -> [[String: Any]] {
        var seen = Set<String>()
        return posts.filter { (200..<300).contains($0.status) }.compactMap { post in
            guard let object = try? JSONSerialization.jsonObject(with: Data(post.body)) as? [String: Any],
                  let payload = object["payload"] as? [String: Any], payload["callId"] as? String == callID,
                  let notice = object["noticeId"] as? String, seen.insert(notice).inserted else { return nil }
            return object
        }
    }

    /// Posts about `channel` answered with an error.
    public func refused(channel: String) -> Int {
        posts.filter { !(200..<300).contains($0.status) && $0.event?.channel == channel }.count
    }

    /// Whether every post so far was signed correctly.
    public var allSignaturesValid: Bool { posts.allSatisfy(\.signatureValid) }

    /// Posts beyond one accepted post per event: retries after errors, and duplicates.
    public var duplicatesOrRetries: Int {
        let accepted = Set(posts.filter { (200..<300).contains($0.status) }.compactMap { $0.event?.noticeID })
        return posts.count - accepted.count
    }

    /// Closes the port.
    public func stop() async {
        try? await server.shutdownGracefully()
        _ = await task.result
    }
}
