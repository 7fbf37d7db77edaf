import NodeRuntime
import ShowroomWire

/// Where an edge serves browsers' sessions over WebSocket, and to which pages.
public struct EdgeWebSocketSettings: Sendable, Equatable {
    /// `HOST:PORT` (port 0 picks one), or `off`.
    public var listen = "127.0.0.1:0"
    /// Origins whose pages may connect (`http(s)://host[:port]`, exactly as browsers send them),
    /// or `*` for any. A client that sends no `Origin` header (not a browser) is always allowed.
    public var allowedOrigins: [String] = []

    /// The defaults: on a free loopback port, no page origin allowed.
    public init() {}

    /// The keys an edge's configuration file may hold besides the shared ones.
    public static let fileKeys: Set<String> = ["webSocket", "webSocketOrigins"]

    /// Applies `webSocket` and `webSocketOrigins` from `file`.
    /// - Throws: `invalidArgument` naming the file and the key whose value is wrong.
    public mutating func apply(_ file: ConfigurationFile) throws(ShowroomError) {
        if let v = try file.value("webSocket", as: String.self) { listen = v }
        if let v = try file.value("webSocketOrigins", as: [String].self) { allowedOrigins = v }
    }

    /// Checks the values are usable.
    public func validate() throws(ShowroomError) {
        if listen != "off" {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
                throw .invalidArgument("webSocket is HOST:PORT or off, not '\(listen.prefix(80))'")
            }
        }
        guard allowedOrigins.count <= 100 else { throw .invalidArgument("webSocketOrigins lists at most 100 origins") }
        for origin in allowedOrigins where origin != "*" {
            guard origin.utf8.count <= 256, origin.hasPrefix("http://") || origin.hasPrefix("https://"),
                  !origin.dropFirst(8).contains("/") else {
                throw .invalidArgument("a WebSocket origin is * or http(s)://host[:port] with no path, not '\(origin.prefix(80))'")
            }
        }
    }
}
