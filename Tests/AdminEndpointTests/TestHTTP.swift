import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A response as the tests look at it.
struct TestResponse {
    var status: Int
    var contentType: String?
    var body: String
}

/// Real HTTP over loopback with URLSession; every request has a 5 s deadline.
final class TestHTTPClient: Sendable {
    private let session: URLSession

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 5
        configuration.timeoutIntervalForResource = 5
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    func request(_ url: String, method: String = "GET") async throws -> TestResponse {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 5)
        request.httpMethod = method
        let (data, response) = try await session.data(for: request)
        let http = try XCTUnwrapHTTP(response)
        return TestResponse(
            status: http.statusCode,
            contentType: http.value(forHTTPHeaderField: "Content-Type"),
            body: String(decoding: data, as: UTF8.self))
    }

    private func XCTUnwrapHTTP(_ response: URLResponse) throws -> HTTPURLResponse {
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return http
    }
}

/// Plain TCP to 127.0.0.1, to see whether a port still listens and to hold a connection open.
enum TestSocket {
    /// Connects; returns the descriptor, or nil when refused.
    static func openConnection(port: UInt16) -> Int32? {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result != 0 {
            close(fd)
            return nil
        }
        return fd
    }

    /// Whether something accepts connections on the port.
    static func isListening(port: UInt16) -> Bool {
        guard let fd = openConnection(port: port) else { return false }
        close(fd)
        return true
    }
}

/// A blocking TCP connection to 127.0.0.1 with deadlines, for requests no HTTP client library
/// would send: oversized, partial, trickled. Use it from ``onThread(_:)``, never on the Swift
/// concurrency pool, which the server under test needs.
final class RawConnection: @unchecked Sendable {
    let fd: Int32

    init?(port: UInt16) {
        guard let fd = TestSocket.openConnection(port: port) else { return nil }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends all of `bytes` unless the server closes or resets first, or the deadline passes;
    /// returns whether everything was sent.
    @discardableResult
    func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) -> Bool {
        var sent = 0
        while sent < bytes.count {
            guard wait(for: Int16(POLLOUT), until: deadline) else { return false }
            let n = bytes[sent...].withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                #else
                Darwin.send(fd, buffer.baseAddress, buffer.count, 0)
                #endif
            }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Reads until the server closes the connection (or resets it) or the deadline passes.
    func readUntilClosed(deadline: ContinuousClock.Instant) -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            guard wait(for: Int16(POLLIN), until: deadline) else {
                return (String(decoding: received, as: UTF8.self), false)
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += chunk[..<n]
        }
    }

    /// Whether the server closed the connection (EOF or reset) by the deadline, without
    /// sending anything else.
    func isClosed(by deadline: ContinuousClock.Instant) -> Bool {
        readUntilClosed(deadline: deadline).closed
    }

    /// Polls for `events` until the deadline; true when ready (or in error, which the next
    /// call reports).
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            let milliseconds = Int32(min(1000, max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            var pollFD = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&pollFD, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }
        }
    }
}

/// Runs blocking `work` on a thread of its own and returns its result, leaving the Swift
/// concurrency threads to the server under test.
func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.start()
    }
}

/// The status code of an HTTP/1.1 response's first line, nil when there is none.
func statusCode(of response: String) -> Int? {
    let parts = response.split(separator: " ", maxSplits: 2)
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") else { return nil }
    return Int(parts[1])
}
