#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// IP address literals as ban rules and edges compare them: one spelling per address.
public enum IPAddress {
    /// The longest literal taken (an IPv6 address with an embedded IPv4 one is 45 characters).
    public static let maxLength = 45

    /// The one spelling of an IPv4 or IPv6 literal (`inet_ntop`'s), an IPv4-mapped IPv6 address
    /// written as its IPv4 address; nil for anything else (host names, ports, prefixes, zones).
    ///
    /// - Parameter text: The literal, as a peer or a business server wrote it.
    public static func canonical(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= maxLength else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return spelled(AF_INET, &v4, INET_ADDRSTRLEN) }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        return spelled(AF_INET6, &v6, INET6_ADDRSTRLEN)
    }

    private static func spelled<Address>(_ family: Int32, _ address: inout Address, _ size: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(size))
        guard inet_ntop(family, &address, &buffer, socklen_t(size)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
