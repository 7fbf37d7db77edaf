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
