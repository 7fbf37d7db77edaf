/// A connection handshake as the ZeroMQ Authentication Protocol (ZAP, ZeroMQ RFC 27) presents it.
public struct ZAPRequest: Sendable, Equatable {
    /// The ZAP domain of the server socket (``Socket/makeCurveServer(_:zapDomain:)``).
    public var domain: String
    /// The peer's IP address.
    public var address: String
    /// `NULL`, `PLAIN` or `CURVE`.
    public var mechanism: String
    /// For `CURVE`: the client's 32-byte public key; empty otherwise.
    public var clientKey: [UInt8]
}

/// The context's authenticator: libzmq asks it about every handshake on a server socket of the
/// context (`inproc://zeromq.zap.01`), and without it CURVE encrypts but admits anybody.
///
/// `authorize` returns the user id to admit the peer under (messages from that peer then carry it
/// as their `User-Id` property), or nil to refuse the connection. It runs on the loop that owns
/// the handler's socket; keep it cheap (a dictionary look-up). Bind it before any server socket of
/// the context accepts a connection.
public final class ZAPHandler {
    /// The endpoint libzmq sends ZAP requests to.
    public static let endpoint = "inproc://zeromq.zap.01"

    private let socket: Socket
    private let loop: EventLoop
    private let authorize: (ZAPRequest) -> String?
    /// Handshakes admitted and refused so far.
    public private(set) var admitted = 0, refused = 0

    /// Binds the handler in `loop`'s context and serves it on `loop`. Loop thread only.
    public init(loop: EventLoop, authorize: @escaping (ZAPRequest) -> String?) throws(ZeroMQError) {
        self.loop = loop
        self.authorize = authorize
        socket = try Socket(.rep, context: loop.context)
        _ = try socket.bind(Self.endpoint)
        loop.register(socket) { [weak self] _, _ in self?.drain() }
    }

    /// Unbinds the handler. Loop thread only.
    public func close() {
        loop.unregister(socket)
        socket.close()
    }

    private func drain() {
        while let frames = try? socket.receiveFrames() {
            _ = try? socket.send(frames: answer(frames))
        }
    }

    /// The reply frames for one request: version, request id, status code and text, user id,
    /// metadata.
    func answer(_ frames: [[UInt8]]) -> [[UInt8]] {
        let requestID = frames.count > 1 ? frames[1] : []
        func reply(_ code: String, _ text: String, user: String = "") -> [[UInt8]] {
            [Array("1.0".utf8), requestID, Array(code.utf8), Array(text.utf8), Array(user.utf8), []]
        }
        guard frames.count >= 6, String(decoding: frames[0], as: UTF8.self) == "1.0" else {
            refused += 1
            return reply("500", "malformed ZAP request")
        }
        let request = ZAPRequest(
            domain: String(decoding: frames[2], as: UTF8.self),
            address: String(decoding: frames[3], as: UTF8.self),
            mechanism: String(decoding: frames[5], as: UTF8.self),
            clientKey: frames.count > 6 && frames[5] == Array("CURVE".utf8) ? frames[6] : [])
        guard let user = authorize(request) else {
            refused += 1
            return reply("400", "not a member of this cluster")
        }
        admitted += 1
        return reply("200", "OK", user: user)
    }
}
