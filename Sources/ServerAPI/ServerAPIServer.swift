import AdminEndpoint
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NodeRuntime
import OpenAPIHummingbird
import OpenAPIRuntime
import Ownership
import ShowroomWire
import SwiftProtobuf
import Synchronization

/// What the server API is configured with: where it listens, the customer keys, their rate.
public struct APISettings: Sendable, Equatable {
    /// `host:port` (`127.0.0.1:0` picks a free port), or `off`.
    public var listen: String = "127.0.0.1:0"
    /// The customer keys; with none, every operation but health and the document answers 401.
    public var keys: [CustomerKey] = []
    /// Requests a second per key, on average, for keys that set none of their own.
    public var requestsPerSecond: Double = 10
    /// Requests a key may make at once.
    public var burst: Int = 20
    /// Largest request body: 64 KiB (a room, a ban rule, a message are far smaller).
    public var maxBodyBytes: Int = 64 * 1024

    /// The defaults.
    public init() {}

    /// The keys a coordinator's configuration file may hold for the API.
    public static let fileKeys: Set<String> = ["api", "apiKeys", "apiRequestsPerSecond", "apiBurst"]

    /// Applies the API's settings in `file`.
    /// - Throws: `invalidArgument` naming the key whose value is wrong.
    public mutating func apply(_ file: ConfigurationFile) throws(ShowroomError) {
        if let v = try file.value("api", as: String.self) { listen = v }
        if let v = try file.value("apiKeys", as: [Any].self) {
            var keys: [CustomerKey] = []
            for entry in v { keys.append(try CustomerKey(configuration: entry)) }
            self.keys = keys
        }
        if let v = try file.value("apiRequestsPerSecond", as: Double.self) { requestsPerSecond = v }
        if let v = try file.value("apiBurst", as: Int.self) { burst = v }
    }

    /// Checks the values are usable.
    public func validate() throws(ShowroomError) {
        guard requestsPerSecond >= 0.01, requestsPerSecond <= 1_000_000 else {
            throw .invalidArgument("apiRequestsPerSecond must be 0.01 to 1000000")
        }
        guard (1...1_000_000).contains(burst) else { throw .invalidArgument("apiBurst must be 1 to 1000000") }
        _ = try CustomerKeys(keys)
        if listen != "off" {
            do { _ = try AdminServer.Configuration(listen: listen) } catch {
                throw .invalidArgument("api '\(listen)' must be host:port, [ipv6]:port, :port or off")
            }
        }
    }
}

/// The server API of a coordinator: the document's operations over HTTP, on a port of its own,
/// behind the admin port's limits (request size, time, connections). Requests are served by the
/// coordinator's own request handling once ``attach(_:)`` gave it the node; before, they get 503.
public final class ServerAPIServer: Sendable {
    private let server: AdminServer
    private let node = Shared<Node?>(nil)

    /// A server for `settings`; nothing listens before ``start()``.
    /// - Parameter appCertificate: Signs the admin requests it makes (close, kick).
    /// - Parameter webhooks: The coordinator's webhooks, for their view and test delivery.
    public init(settings: APISettings, nodeID: String, appID: String, appCertificate: String,
                webhooks: APIWebhooks = APIWebhooks(urls: [], signed: false, dispatcher: nil), logger: Logger) throws(ShowroomError) {
        try settings.validate()
        let keys = try CustomerKeys(settings.keys)
        let access = NodeAccess(nodeID: nodeID, node: node)
        var handler = ServerAPIHandler(coordinator: access, appID: appID, appCertificate: appCertificate, nowMs: WallClock.system.nowMs)
        handler.webhooks = webhooks
        let router = Router()
        let guardian = APIGuard(keys: keys, rate: RequestRate(perSecond: settings.requestsPerSecond, burst: settings.burst),
                                nowMs: WallClock.system.nowMs)
        let transport = APITransport(router: router, hotReads: APIHotReads(handler: handler, guardian: guardian).byPath)
        do {
            // Compact JSON: a business server parses it; nobody reads it by eye on the hot path.
            try handler.registerHandlers(on: transport, configuration: Configuration(jsonEncodingOptions: [.sortedKeys]),
                                         middlewares: [guardian])
        } catch {
            throw .internal("the server API's routes could not be registered: \(error)")
        }
        // A hot read whose path the document lost would never be served: say so at once.
        guard transport.served == transport.hotPaths else {
            throw .internal("the server API's hot reads \(transport.hotPaths.subtracting(transport.served).sorted()) match no GET operation")
        }
        let responder = router.buildResponder()
        var configuration: AdminServer.Configuration
        do { configuration = try AdminServer.Configuration(listen: settings.listen) } catch {
            throw .invalidArgument("api '\(settings.listen)' must be host:port, [ipv6]:port, :port or off")
        }
        configuration.limits.maxBodyBytes = settings.maxBodyBytes
        configuration.limits.maxConnections = 256
        server = AdminServer(configuration: configuration, name: "api", logger: logger) { request, writer, channel in
            let context = BasicRequestContext(source: .init(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
                // The router's own answer for a path no operation has carries no body.
                if response.status == .notFound, response.headers[.contentType] == nil {
                    response = Self.unrouted(method: request.method.rawValue, path: request.uri.path)
                }
            } catch let error as HTTPError {
                response = Self.plainError(error.status, ShowroomError(error.status.code >= 500 ? .internal : .invalidArgument,
                                                                       error.body ?? error.status.reasonPhrase))
            } catch {
                response = Self.plainError(.internalServerError, .internal("\(error)"))
            }
            try await writer.write(response: response.head, body: response.body)
        }
    }

    /// A request no operation takes: 405 with `Allow` for a path of the document asked with another
    /// method, 404 for any other path.
    static func unrouted(method: String, path: String) -> Response {
        guard let methods = APIDocument.served.methods(for: path) else {
            return plainError(.notFound, ShowroomError(.unknownKind,
                "no operation at \(path.prefix(100)); the operations are in /v1/openapi.json"))
        }
        var response = plainError(.methodNotAllowed, ShowroomError(.unknownKind,
            "\(path.prefix(100)) takes \(methods.sorted().joined(separator: ", ")), not \(method.prefix(20))"))
        response.headers[.allow] = methods.sorted().joined(separator: ", ")
        return response
    }

    /// A refusal before any operation, as the API's JSON error.
    static func plainError(_ status: HTTPResponse.Status, _ error: ShowroomError) -> Response {
        let body = (try? JSONEncoder().encode(APIErrorBody(code: "\(error.code)", number: error.number, message: error.message))) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Starts listening.
    /// - Returns: `http://HOST:PORT`.
    public func start() async throws -> String { try await server.start() }

    /// Serves through `node` from now on.
    public func attach(_ node: Node) { self.node.withLock { $0 = node } }

    /// Stops listening and closes every connection.
    public func stop() async { await server.stop() }
}

/// The coordinator's node, once it is up.
struct NodeAccess: CoordinatorAccess {
    let nodeID: String
    let node: Shared<Node?>

    private func current() throws(ShowroomError) -> Node {
        guard let node = node.withLock({ $0 }) else {
            throw .unavailable("coordinator \(nodeID) is starting; retry in a moment")
        }
        return node
    }

    func serve(_ request: WireEnvelope, face: RequestFace) async throws(ShowroomError) -> WireEnvelope {
        await (try current()).serve(request, face: face)
    }

    func alive(_ role: NodeRole) async throws(ShowroomError) -> [(id: String, endpoint: String)] {
        let node = try current()
        do {
            return try await node.members().filter { $0.isAlive && $0.nodeRole == role && !$0.metadata.clusterEndpoint.isEmpty }
                .map { ($0.nodeID, $0.metadata.clusterEndpoint) }.sorted { $0.id < $1.id }
        } catch {
            throw .unavailable("coordinator \(nodeID) could not read the members: \(error)")
        }
    }

    func request<Response: SwiftProtobuf.Message>(
        _ kind: WireMessageKind, _ body: some SwiftProtobuf.Message & Sendable, to endpoint: String, expecting: Response.Type
    ) async throws(ShowroomError) -> Response {
        try await current().request(kind, body: body, to: endpoint, expecting: Response.self)
    }

    func clusterStatus() async throws(ShowroomError) -> AdminClusterStatus {
        let node = try current()
        do { return try await node.clusterStatus() } catch {
            throw .unavailable("coordinator \(nodeID) could not read its view of the cluster: \(error)")
        }
    }
}
