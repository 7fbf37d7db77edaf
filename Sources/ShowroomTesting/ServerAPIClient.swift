import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOHTTP1

/// An answer of the server API as tests and benchmarks look at it.
public struct APIResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Header fields by lowercased name (the last of a repeated one).
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]

    /// The body as a JSON object.
    public func object() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw ShowroomTestingError("not a JSON object (status \(status)): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        return object
    }

    /// The body as text, for failure messages.
    public var text: String { String(decoding: body.prefix(2000), as: UTF8.self) }
}

/// A business server's client of a coordinator's server API over real HTTP (AsyncHTTPClient,
/// keep-alive connections), with a customer key's Basic credentials.
public final class ServerAPIClient: Sendable {
    /// `http://HOST:PORT`.
    public let base: String
    private let http: HTTPClient
    private let authorization: String?
    private let ownGroup: MultiThreadedEventLoopGroup?

    /// A client of the API at `base`; `key` is the customer key's id and secret (nil: none sent).
    /// `eventLoops`: threads of its own for the connections (nil: NIO's shared group).
    public init(base: String, key: (id: String, secret: String)?, connections: Int = 8, eventLoops: Int? = nil) {
        self.base = base
        authorization = key.map { "Basic " + Data("\($0.id):\($0.secret)".utf8).base64EncodedString() }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        configuration.timeout.connect = .seconds(5)
        configuration.timeout.read = .seconds(10)
        ownGroup = eventLoops.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) }
        http = HTTPClient(eventLoopGroupProvider: ownGroup.map { .shared($0) } ?? .singleton, configuration: configuration)
    }

    /// Sends `method path` with `json` (a JSON-serializable value) or raw `body`, and reads the
    /// answer (up to 8 MiB), within 10 s.
    public func send(_ method: String, _ path: String, json: Any? = nil, body: [UInt8]? = nil,
                     headers: [String: String] = [:]) async throws -> APIResponse {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        var bytes = body
        if let json { bytes = Array(try JSONSerialization.data(withJSONObject: json)) }
        if let bytes {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: bytes))
        }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await http.execute(request, timeout: .seconds(10))
        var fields: [String: String] = [:]
        for header in response.headers { fields[header.name.lowercased()] = header.value }
        let buffer = try await response.body.collect(upTo: 8 << 20)
        return APIResponse(status: Int(response.status.code), headers: fields, body: Array(buffer.readableBytesView))
    }

    /// Closes the connections.
    public func shutdown() async {
        try? await http.shutdown()
        try? await ownGroup?.shutdownGracefully()
    }
}
