import AdminEndpoint
import NIOSSL
import ShowroomWire

/// Where a server process serves browsers over WebSocket, and to which pages: an edge its client
/// sessions, a coordinator or call-signal node its client kinds.
public struct WebSocketSettings: Sendable, Equatable {
    /// `HOST:PORT` (port 0 picks one), or `off`.
    public var listen = "127.0.0.1:0"
    /// Origins whose pages may connect (`http(s)://host[:port]`, exactly as browsers send them),
    /// or `*` for any. A client that sends no `Origin` header (not a browser) is always allowed.
    public var allowedOrigins: [String] = []
    /// PEM files of the certificate (chain) and its private key: with both, the face speaks TLS
    /// (`wss://`), as browsers require off localhost.
    public var certificateFile: String?
    public var privateKeyFile: String?

    /// The defaults: on a free loopback port, no page origin allowed.
    public init() {}

    /// The keys of a configuration file that set these.
    public static let fileKeys: Set<String> = ["webSocket", "webSocketOrigins", "webSocketCertificate", "webSocketKey"]

    /// Applies `webSocket`, `webSocketOrigins`, `webSocketCertificate` and `webSocketKey` from `file`.
    /// - Throws: `invalidArgument` naming the file and the key whose value is wrong.
    public mutating func apply(_ file: ConfigurationFile) throws(ShowroomError) {
        if let v = try file.value("webSocket", as: String.self) { listen = v }
        if let v = try file.value("webSocketOrigins", as: [String].self) { allowedOrigins = v }
        if let v = try file.value("webSocketCertificate", as: String.self) { certificateFile = v }
        if let v = try file.value("webSocketKey", as: String.self) { privateKeyFile = v }
    }

    /// Where to listen, parsed as the admin port's address is: an IP literal (`localhost`
    /// meaning 127.0.0.1) and a port.
    /// - Throws: `invalidArgument` saying what to write instead.
    public func address() throws(ShowroomError) -> (host: String, port: UInt16) {
        let parsed: AdminServer.Configuration
        do {
            parsed = try AdminServer.Configuration(listen: listen)
        } catch {
            throw .invalidArgument("webSocket is HOST:PORT or off, not '\(listen.prefix(80))'")
        }
        let host = parsed.host == "localhost" ? "127.0.0.1" : parsed.host
        guard IPAddress.canonical(host) != nil else {
            throw .invalidArgument("the webSocket host is an IP address or localhost, not '\(host.prefix(64))'")
        }
        return (host, parsed.port)
    }

    /// Checks the values are usable.
    public func validate() throws(ShowroomError) {
        if listen != "off" { _ = try address() }
        guard (certificateFile == nil) == (privateKeyFile == nil) else {
            throw .invalidArgument("TLS on the WebSocket face takes both a certificate and its private key (webSocketCertificate and webSocketKey)")
        }
        guard allowedOrigins.count <= 100 else { throw .invalidArgument("webSocketOrigins lists at most 100 origins") }
        for origin in allowedOrigins where origin != "*" {
            guard origin.utf8.count <= 256, origin.hasPrefix("http://") || origin.hasPrefix("https://"),
                  !origin.dropFirst(8).contains("/") else {
                throw .invalidArgument("a WebSocket origin is * or http(s)://host[:port] with no path, not '\(origin.prefix(80))'")
            }
        }
    }

    /// The TLS configuration of ``certificateFile`` and ``privateKeyFile``, or nil without them.
    /// - Throws: `invalidArgument` naming the file that cannot be read as PEM.
    public func tlsConfiguration() throws(ShowroomError) -> TLSConfiguration? {
        guard let certificateFile, let privateKeyFile else { return nil }
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw .invalidArgument("webSocketCertificate \(certificateFile): not a readable PEM certificate (\(error))")
        }
        do {
            key = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        } catch {
            throw .invalidArgument("webSocketKey \(privateKeyFile): not a readable PEM private key (\(error))")
        }
        guard !chain.isEmpty else { throw .invalidArgument("webSocketCertificate \(certificateFile) holds no certificate") }
        return .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}
