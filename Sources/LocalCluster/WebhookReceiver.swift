import FlyingFox
import Foundation
import ShowroomWire
import Synchronization
import Webhooks

/// A business server standing in for the real one in tests and drills: an HTTP server on
/// 127.0.0.1 that records every channel-event webhook post, checks its signature, and answers with
/// the status the caller decides (an outage is a run of 503s).
public final class WebhookReceiver: Sendable {
    /// One post as received.
    public struct Post: Sendable {
        /// The event, nil when the body did not decode.
        public var event: RoomChannelEvent?
        /// Whether the signature header matched the body under the secret.
        public var signatureValid: Bool
        /// The status it was answered with.
        public var status: Int
    }

    /// Decides the status of the `number`-th post (from 1).
    public typealias Answer = @Sendable (_ number: Int) -> Int

    /// Where to post: `http://127.0.0.1:PORT/events`.
    public let url: String
    private let server: HTTPServer
    private let task: Task<Void, any Error>
    private let recorded: Recorder

    /// The posts, shared with the request handler.
    private final class Recorder: Sendable {
        let posts = Mutex<[Post]>([])
    }

    private init(url: String, server: HTTPServer, task: Task<Void, any Error>, recorded: Recorder) {
        self.url = url
        self.server = server
        self.task = task
        self.recorded = recorded
    }

    /// Listens on a free port of 127.0.0.1 and answers each post with `answer`.
    public static func start(secret: String, answer: @escaping Answer = { _ in 200 }) async throws -> WebhookReceiver {
        let server = HTTPServer(address: try sockaddr_in.inet(ip4: "127.0.0.1", port: 0), timeout: 10, logger: .disabled)
        let recorded = Recorder()
        await server.appendRoute("POST /events") { request in
            let body = (try? await request.bodyData).map { [UInt8]($0) } ?? []
            let signature = request.headers[HTTPHeader(WebhookSignature.header)] ?? ""
            let status = recorded.posts.withLock { posts in
                let status = answer(posts.count + 1)
                posts.append(Post(event: try? ChannelEventJSON.decode(body),
                                  signatureValid: WebhookSignature.verify(body: body, secret: secret, signature: signature),
                                  status: status))
                return status
            }
            return HTTPResponse(statusCode: HTTPStatusCode(status, phrase: status == 200 ? "OK" : "Unavailable"))
        }
        let task = Task { try await server.run() }
        try await server.waitUntilListening(timeout: 5)
        guard case .ip4(_, let port) = await server.listeningAddress else {
            await server.stop(timeout: 0)
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
        await server.stop(timeout: 0)
        task.cancel()
        _ = await task.result
    }
}
