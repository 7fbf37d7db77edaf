import AdminEndpoint
import ArgumentParser
import Foundation
import Hummingbird
import NodeRuntime
import OperatorTools
import ShowroomAuth
import ShowroomWire

/// `showroomctl web`: the web app's server for a local cluster. It serves the web app and the
/// JavaScript SDK from a folder, and mints tokens for its pages as an app's business server would
/// (a page never holds the app certificate). A stand-in for that server, for demos and tests:
/// it gives any page a token for any uid, so it listens on loopback unless told otherwise.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Serve the web app and SDK, with the token endpoints a business server would offer its pages.",
        discussion: """
            GET /api/config                                   {"appId", "coordinators": [ws://…/v1/node]}
            GET /api/token?channel=C&uid=N&role=publisher|subscriber   {"token"} (channel "" = every channel)
            GET /api/login-token?uid=N                        {"token"} (call-signal login)
            Everything else is a file under --root (/ goes to /app/).
            """)

    @Option(help: "Where to listen (host:port; :0 picks a free port).")
    var listen = "127.0.0.1:0"

    @Option(help: "The folder served: the web app (app/) and the SDK (sdk/).")
    var root = "Sources/ShowroomWeb"

    @Option(name: .customLong("coordinator"), help: "A coordinator's WebSocket address (ws=… on its ready line) the pages start from (repeatable).")
    var coordinators: [String] = []

    @Option(help: "Seconds the tokens it mints last.")
    var tokenLifetime: UInt32 = 3600

    @OptionGroup var app: AppCredentials

    func validate() throws {
        guard !coordinators.isEmpty else { throw ValidationError("give the pages a coordinator to start from: --coordinator ws://HOST:PORT/v1/node") }
        for coordinator in coordinators where !(coordinator.hasPrefix("ws://") || coordinator.hasPrefix("wss://")) {
            throw ValidationError("--coordinator takes a ws:// or wss:// address, not '\(coordinator.prefix(80))'")
        }
        guard FileManager.default.fileExists(atPath: root + "/app") else {
            throw ValidationError("--root \(root) holds no app/ folder: give the web app's folder (Sources/ShowroomWeb)")
        }
        guard (60...86_400).contains(tokenLifetime) else { throw ValidationError("--token-lifetime is 60-86400 seconds") }
    }

    func run() async throws {
        let credentials = try app.resolved()
        let address = try AdminServer.Configuration(listen: listen)
        let tokens = WebTokens(credentials: credentials, coordinators: coordinators, lifetime: tokenLifetime)
        let router = Router()
        router.add(middleware: FileMiddleware(root, searchForIndexHtml: true))
        router.get("/") { _, _ in Response(status: .seeOther, headers: [.location: "/app/"]) }
        router.get("/api/config") { _, _ in tokens.config() }
        router.get("/api/token") { request, _ in tokens.rtc(request.uri.queryParameters) }
        router.get("/api/login-token") { request, _ in tokens.login(request.uri.queryParameters) }
        let application = Application(
            router: router,
            configuration: .init(address: .hostname(address.host, port: Int(address.port))),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? Int(address.port)
                FileHandle.standardOutput.write(Data(
                    "web app: http://\(address.host):\(port)/app/ pid=\(ProcessInfo.processInfo.processIdentifier)\n".utf8))
            })
        try await application.runService()
    }
}

/// What the web app's server answers besides files: the cluster's address and tokens.
struct WebTokens: Sendable {
    let credentials: LocalAppCredentials
    let coordinators: [String]
    let lifetime: UInt32

    func config() -> Response {
        json(200, ["appId": credentials.appID, "coordinators": coordinators])
    }

    /// An RTC token: `channel` ("" for every channel), `uid` (1-4294967295), `role`.
    func rtc(_ query: Parameters) -> Response {
        do throws(ShowroomError) {
            let uid = try Self.uid(query)
            let channel = String(query["channel"] ?? "")
            if !channel.isEmpty { try Names.validateChannel(channel) }
            let role: RTCRole
            switch query["role"] ?? "subscriber" {
            case "publisher": role = .publisher
            case "subscriber": role = .subscriber
            default: throw .invalidArgument("role is publisher or subscriber")
            }
            return json(200, ["token": try mint { try credentials.token(channel: channel, uid: uid, role: role, expire: lifetime) }])
        } catch {
            return failure(error)
        }
    }

    /// A call-signal login token for `uid`.
    func login(_ query: Parameters) -> Response {
        do throws(ShowroomError) {
            let uid = try Self.uid(query)
            return json(200, ["token": try mint { try credentials.loginToken(uid: uid, expire: lifetime) }])
        } catch {
            return failure(error)
        }
    }

    private static func uid(_ query: Parameters) throws(ShowroomError) -> UInt32 {
        guard let text = query["uid"], let uid = UInt32(text), uid != 0 else {
            throw .invalidArgument("uid is a number from 1 to 4294967295")
        }
        return uid
    }

    private func mint(_ build: () throws -> String) throws(ShowroomError) -> String {
        do { return try build() } catch { throw .internal("the token could not be minted: \(error)") }
    }

    private func failure(_ error: ShowroomError) -> Response {
        json(error.code == .invalidArgument ? 400 : 500, ["code": "\(error.code)", "message": error.message])
    }

    private func json(_ status: Int, _ object: [String: any Sendable]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: .init(code: status),
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
