/// Follows the HTTP/1.1 requests of one connection byte by byte, ahead of the HTTP parser, just
/// far enough to enforce ``AdminServer/Limits``: where each request's head ends, how long its
/// target and head are, and how many body bytes follow (`Content-Length`). It keeps no more than
/// the first bytes of one header line, so a request over a limit costs one pass over at most the
/// limit's bytes, whatever size the client claims or sends.
struct RequestScanner: Sendable {
    /// Why a request is refused, with what the client is told.
    enum Rejection: Equatable, Sendable {
        /// The request target is longer than `limit` bytes.
        case uriTooLong(limit: Int)
        /// The request head is larger than `limit` bytes.
        case headerTooLarge(limit: Int)
        /// The request announces a body larger than `limit` bytes, or a chunked one.
        case bodyTooLarge(limit: Int)
        /// The request line or a header this scanner reads is not HTTP/1.
        case malformed(String)
        /// The request did not arrive in full within `seconds`.
        case timedOut(seconds: Double)

        var status: Int {
            switch self {
            case .uriTooLong: 414
            case .headerTooLarge: 431
            case .bodyTooLarge: 413
            case .malformed: 400
            case .timedOut: 408
            }
        }

        var reasonPhrase: String {
            switch self {
            case .uriTooLong: "URI Too Long"
            case .headerTooLarge: "Request Header Fields Too Large"
            case .bodyTooLarge: "Content Too Large"
            case .malformed: "Bad Request"
            case .timedOut: "Request Timeout"
            }
        }

        /// The plain-text body: what was wrong and what is accepted.
        var message: String {
            switch self {
            case .uriTooLong(let limit):
                "request target longer than \(limit) bytes; the admin paths are /metrics, /healthz, /readyz, /status\n"
            case .headerTooLarge(let limit):
                "request head (request line and headers) larger than \(limit) bytes\n"
            case .bodyTooLarge(let limit):
                "the admin paths take no request body (at most \(limit) bytes, sent with Content-Length)\n"
            case .malformed(let reason):
                "malformed request: \(reason)\n"
            case .timedOut(let seconds):
                "request not received in full within \(seconds) s\n"
            }
        }

        /// The whole HTTP/1.1 response, closing the connection.
        var response: [UInt8] {
            let body = Array(message.utf8)
            let head = "HTTP/1.1 \(status) \(reasonPhrase)\r\n"
                + "Content-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: \(body.count)\r\n"
                + "Cache-Control: no-store\r\n"
                + "Connection: close\r\n\r\n"
            return Array(head.utf8) + body
        }
    }

    /// What one call to ``scan(_:)`` found.
    struct Outcome: Equatable, Sendable {
        /// How many leading bytes of the input to pass on to the HTTP parser: all of them, unless
        /// a request was refused; then those of the requests before it.
        var accepted: Int
        /// Requests that arrived in full within the input.
        var completed: Int
        /// Set when a request breaks a limit: nothing more of the connection is to be read.
        var rejection: Rejection?
    }

    private enum Phase: Sendable, Equatable {
        case method
        case target
        case version
        case headers
        case body(remaining: Int)
        case rejected(Rejection)
    }

    /// How much of a header line is kept: enough for `Content-Length: ` and 18 digits.
    private static let linePrefixCapacity = 64
    private static let maxMethodBytes = 32
    private static let maxVersionBytes = 16

    let maxURIBytes: Int
    let maxHeaderBytes: Int
    let maxBodyBytes: Int

    private var phase = Phase.method
    /// Whether a request has begun and not yet arrived in full.
    private(set) var isMidRequest = false
    private var headBytes = 0
    private var methodBytes = 0
    private var targetBytes = 0
    private var versionBytes = 0
    private var lineLength = 0
    private var linePrefix: [UInt8] = []
    private var contentLength: Int?
    private var chunked = false

    init(maxURIBytes: Int, maxHeaderBytes: Int, maxBodyBytes: Int) {
        self.maxURIBytes = maxURIBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        linePrefix.reserveCapacity(Self.linePrefixCapacity)
    }

    init(limits: AdminServer.Limits) {
        self.init(maxURIBytes: limits.maxURIBytes, maxHeaderBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes)
    }

    /// The rejection, once a request was refused.
    var rejection: Rejection? {
        if case .rejected(let rejection) = phase { rejection } else { nil }
    }

    /// Reads the next bytes of the connection.
    mutating func scan(_ bytes: some Collection<UInt8>) -> Outcome {
        if let rejection { return Outcome(accepted: 0, completed: 0, rejection: rejection) }
        var completed = 0
        var requestStart = 0  // offset in `bytes` where the current request began (0: earlier)
        var offset = 0
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if case .body(let remaining) = phase {
                let available = bytes.distance(from: index, to: bytes.endIndex)
                let taken = min(remaining, available)
                index = bytes.index(index, offsetBy: taken)
                offset += taken
                if taken == remaining {
                    finishRequest()
                    completed += 1
                    requestStart = offset
                } else {
                    phase = .body(remaining: remaining - taken)
                }
                continue
            }
            if !isMidRequest {
                isMidRequest = true
                requestStart = offset
            }
            let byte = bytes[index]
            index = bytes.index(after: index)
            offset += 1
            switch step(byte) {
            case .none:
                break
            case .complete:
                completed += 1
                requestStart = offset
            case .reject(let rejection):
                phase = .rejected(rejection)
                return Outcome(accepted: requestStart, completed: completed, rejection: rejection)
            }
        }
        return Outcome(accepted: offset, completed: completed, rejection: nil)
    }

    private enum Step { case none, complete, reject(Rejection) }

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    /// One byte of a request head.
    private mutating func step(_ byte: UInt8) -> Step {
        headBytes += 1
        switch phase {
        case .method:
            if byte == Self.space {
                guard methodBytes > 0 else { return .reject(.malformed("the request line starts with a space")) }
                phase = .target
            } else if byte == Self.cr || byte == Self.lf {
                // Empty lines before a request line are tolerated (RFC 9112, 2.2).
                guard methodBytes == 0 else { return .reject(.malformed("the request line has no target")) }
            } else {
                methodBytes += 1
                guard methodBytes <= Self.maxMethodBytes else { return .reject(.malformed("request method too long")) }
            }
        case .target:
            if byte == Self.space {
                phase = .version
            } else if byte == Self.cr || byte == Self.lf {
                return .reject(.malformed("the request line has no HTTP version"))
            } else {
                targetBytes += 1
                guard targetBytes <= maxURIBytes else { return .reject(.uriTooLong(limit: maxURIBytes)) }
            }
        case .version:
            if byte == Self.lf {
                phase = .headers
                lineLength = 0
            } else if byte != Self.cr {
                versionBytes += 1
                guard versionBytes <= Self.maxVersionBytes else { return .reject(.malformed("HTTP version too long")) }
            }
        case .headers:
            if byte == Self.lf {
                if lineLength == 0 { return endOfHead() }
                if let rejection = readHeaderLine() { return .reject(rejection) }
                lineLength = 0
                linePrefix.removeAll(keepingCapacity: true)
            } else if byte != Self.cr {
                lineLength += 1
                if linePrefix.count < Self.linePrefixCapacity { linePrefix.append(byte) }
            }
        case .body, .rejected:
            preconditionFailure("step() reads request heads only")
        }
        guard headBytes <= maxHeaderBytes else { return .reject(.headerTooLarge(limit: maxHeaderBytes)) }
        return .none
    }

    /// The empty line: the head is complete; a body may follow.
    private mutating func endOfHead() -> Step {
        if chunked { return .reject(.bodyTooLarge(limit: maxBodyBytes)) }
        let length = contentLength ?? 0
        guard length <= maxBodyBytes else { return .reject(.bodyTooLarge(limit: maxBodyBytes)) }
        if length > 0 {
            phase = .body(remaining: length)
            return .none
        }
        finishRequest()
        return .complete
    }

    /// Notes `Content-Length` and `Transfer-Encoding`; other headers are the parser's business.
    private mutating func readHeaderLine() -> Rejection? {
        guard let colon = linePrefix.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = linePrefix[..<colon]
        if Self.equalsIgnoringCase(name, "transfer-encoding") {
            chunked = true
            return nil
        }
        guard Self.equalsIgnoringCase(name, "content-length") else { return nil }
        // A value cut off by the prefix capacity has more digits than any acceptable length.
        guard lineLength <= linePrefix.count else { return .bodyTooLarge(limit: maxBodyBytes) }
        let value = linePrefix[(colon + 1)...].drop { $0 == Self.space || $0 == Self.tab }
        let digits = value.reversed().drop { $0 == Self.space || $0 == Self.tab }.reversed()
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return .malformed("Content-Length is not a number")
        }
        // 18 digits cannot overflow Int; more are far beyond any limit.
        guard digits.count <= 18 else { return .bodyTooLarge(limit: maxBodyBytes) }
        let length = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        if let previous = contentLength, previous != length {
            return .malformed("conflicting Content-Length headers")
        }
        contentLength = length
        return nil
    }

    private mutating func finishRequest() {
        phase = .method
        isMidRequest = false
        headBytes = 0
        methodBytes = 0
        targetBytes = 0
        versionBytes = 0
        lineLength = 0
        linePrefix.removeAll(keepingCapacity: true)
        contentLength = nil
        chunked = false
    }

    /// Compares ASCII bytes with a lowercase name, ignoring the bytes' case.
    private static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        return name.withUTF8Buffer { expected in
            zip(bytes, expected).allSatisfy { byte, lower in
                let folded = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                return folded == lower
            }
        }
    }
}
