import HTTPTypes
import Hummingbird
import OpenAPIRuntime
import ShowroomWire

/// The reads business servers make most (a room, a channel's users), served without the generated
/// code's encoding: the same guard, the same operation, the answer written by ``APIJSON`` into
/// one buffer instead of going through `JSONEncoder` and a streamed body. Only the plain form of
/// such a request takes this path (no query, no `Accept` other than JSON's, a path parameter of
/// unreserved characters only); any other goes to the generated code, which decodes and refuses
/// it as it always has.
struct APIHotReads: Sendable {
    /// Answers a request, or returns nil to leave it to the generated code.
    typealias Read = @Sendable (Request, BasicRequestContext) async throws -> Response?

    let handler: ServerAPIHandler
    let guardian: APIGuard

    /// The reads by the document's path (all `GET`).
    var byPath: [String: Read] {
        [
            "/v1/channels/{channel}/users": { request, context in
                guard Self.isPlain(request), let channel = Self.plainParameter("channel", of: context) else { return nil }
                return await answer(request, operationID: "listChannelUsers") { () async throws(ShowroomError) -> ByteBuffer in
                    APIJSON.encode(try await handler.channelUsers(channel, hostsOnly: false))
                }
            },
            "/v1/rooms/{room_id}": { request, context in
                guard Self.isPlain(request), let id = Self.plainParameter("room_id", of: context) else { return nil }
                return await answer(request, operationID: "getRoom") { () async throws(ShowroomError) -> ByteBuffer in
                    APIJSON.encode(ServerAPIHandler.room(try await handler.room(id)))
                }
            },
        ]
    }

    /// The guard's refusal, the operation's error as the generated path answers it, or 200 with
    /// the JSON `body` makes.
    private func answer(_ request: Request, operationID: String,
                        _ body: () async throws(ShowroomError) -> ByteBuffer) async -> Response {
        if let refusal = guardian.refusal(of: request.head, operationID: operationID) {
            return await APITransport.collected(refusal)
        }
        do {
            return Response(status: .ok, headers: Self.jsonHeaders, body: ResponseBody(byteBuffer: try await body()))
        } catch {
            return await APITransport.collected(APIGuard.errorResponse(error))
        }
    }

    /// No query (the guard and the generated code check its names and values) and an `Accept`,
    /// if any, that is plainly JSON's (the generated code checks any other).
    static func isPlain(_ request: Request) -> Bool {
        guard request.uri.query == nil else { return false }
        // The fields walked in place: a request's few headers cost less than an array of them.
        var accept: String?
        for field in request.headers where field.name == .accept {
            guard accept == nil else { return false }
            accept = field.value
        }
        return accept.map(plainAccepts.contains) ?? true
    }

    private static let plainAccepts: Set<String> = ["application/json", "application/json; charset=utf-8", "*/*"]

    /// The head of every hot read's answer (made once: its storage is shared, not built anew).
    private static let jsonHeaders: HTTPFields = [.contentType: "application/json; charset=utf-8"]

    /// The path parameter `name` if it is 1 to 128 unreserved characters other than `~` (which
    /// percent-decoding leaves as they are); nil otherwise.
    static func plainParameter(_ name: String, of context: BasicRequestContext) -> String? {
        guard let value = context.parameters.get(name), (1...128).contains(value.utf8.count),
              value.utf8.allSatisfy({ byte in
                  switch byte {
                  case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                       UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                      return true
                  default:
                      return false
                  }
              })
        else { return nil }
        return value
    }
}

/// Registers the generated operations on a Hummingbird router as swift-openapi-hummingbird does,
/// with the hot reads (``APIHotReads``) in front of theirs.
final class APITransport: ServerTransport {
    let router: Router<BasicRequestContext>
    private let hotReads: [String: APIHotReads.Read]
    /// The paths whose hot read is in front of the generated operation.
    private(set) var served: Set<String> = []

    init(router: Router<BasicRequestContext>, hotReads: [String: APIHotReads.Read]) {
        self.router = router
        self.hotReads = hotReads
    }

    /// The hot reads' paths.
    var hotPaths: Set<String> { Set(hotReads.keys) }

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method, path: String
    ) throws {
        let read = method == .get ? hotReads[path] : nil
        if read != nil { served.insert(path) }
        router.on(RouterPath(path), method: method) { request, context in
            if let read, let response = try await read(request, context) { return response }
            return try await Self.generated(handler, request, context)
        }
    }

    /// `request` served by the generated `handler`.
    static func generated(
        _ handler: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        _ request: Request, _ context: BasicRequestContext
    ) async throws -> Response {
        let length: HTTPBody.Length = request.headers[.contentLength].flatMap { Int64($0) }.map { .known($0) } ?? .unknown
        let body = HTTPBody(request.body.map { [UInt8](buffer: $0) }, length: length, iterationBehavior: .single)
        let parameters = [String: Substring](context.parameters.map { (String($0.0), $0.1) }) { first, _ in first }
        let (head, responseBody) = try await handler(request.head, body, ServerRequestMetadata(pathParameters: parameters))
        return try await response(head, body: responseBody)
    }

    /// An answer made in full (a refusal, an error), as a response.
    static func collected(_ answer: (HTTPResponse, HTTPBody?)) async -> Response {
        do { return try await response(answer.0, body: answer.1) } catch {
            // A body made of one Data cannot fail to be read; should it, the status still goes out.
            return Response(status: answer.0.status, headers: answer.0.headerFields, body: ResponseBody(byteBuffer: ByteBuffer()))
        }
    }

    /// The generated code's answer as a Hummingbird response. A body of known length up to 1 MiB
    /// (every answer of the document but a long listing) is collected into one buffer first, so
    /// that head, body and end go to the connection in one write instead of three.
    static func response(_ head: HTTPResponse, body: HTTPBody?) async throws -> Response {
        guard let body else { return Response(status: head.status, headers: head.headerFields, body: ResponseBody(byteBuffer: ByteBuffer())) }
        if case .known(let length) = body.length, length <= 1 << 20 {
            let bytes = try await [UInt8](collecting: body, upTo: Int(length))
            return Response(status: head.status, headers: head.headerFields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        let buffers = body.map { ByteBuffer(bytes: $0) }
        let responseBody: ResponseBody
        if case .known(let length) = body.length {
            responseBody = ResponseBody(contentLength: Int(length)) { writer in
                for try await buffer in buffers { try await writer.write(buffer) }
                try await writer.finish(nil)
            }
        } else {
            responseBody = ResponseBody(asyncSequence: buffers)
        }
        return Response(status: head.status, headers: head.headerFields, body: responseBody)
    }
}
